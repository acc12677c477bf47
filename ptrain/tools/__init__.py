"""Tools shared by taskpacks: a shell, a file editor, submit; truncation and dispatch of calls."""

from ptrain.tools.bash import BashTool
from ptrain.tools.dispatch import run_tool_call, validate_arguments
from ptrain.tools.editor import EditorTool
from ptrain.tools.submit import SubmitTool
from ptrain.tools.truncation import truncate_middle

__all__ = ["BashTool", "EditorTool", "SubmitTool", "run_tool_call", "truncate_middle", "validate_arguments"]
