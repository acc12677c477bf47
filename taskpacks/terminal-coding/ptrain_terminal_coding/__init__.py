"""The terminal-coding taskpack: a model operates a shell in a Debian sandbox, is scored by hidden tests."""

from ptrain_terminal_coding.taskpack import TerminalCoding

TASKPACK = TerminalCoding()

__all__ = ["TASKPACK", "TerminalCoding"]
