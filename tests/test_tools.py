"""Shared tools: truncation, argument checks, bash, the str_replace_editor and submit, in real sandboxes."""

from __future__ import annotations

import json

import pytest

from ptrain.sandbox import Sandbox
from ptrain.taskpack import ToolCall
from ptrain.tools import BashTool, EditorTool, SubmitTool, run_tool_call, truncate_middle, validate_arguments
from ptrain.tools.editor import SCHEMA as EDITOR_SCHEMA
from ptrain.tools.submit import SUBMISSION_PATH


def test_short_text_is_left_alone():
    assert truncate_middle("a\nb\n") == "a\nb\n"


def test_long_text_keeps_head_and_tail_within_the_byte_budget():
    text = "x" * 50_000
    out = truncate_middle(text, max_bytes=10_000)
    assert out.startswith("x" * 5000) and out.endswith("x" * 5000)
    assert "[... 40000 bytes and 0 lines cut ...]" in out


def test_many_lines_are_cut_to_the_line_budget_with_a_marker():
    text = "".join(f"line {i}\n" for i in range(1000))
    out = truncate_middle(text, max_bytes=100_000, max_lines=256)
    assert out.startswith("line 0\n") and out.endswith("line 999\n")
    assert out.count("\n") <= 256 + 2
    assert "744 lines cut" in out


def test_multibyte_text_is_never_split_into_invalid_utf8():
    out = truncate_middle("é" * 20_000, max_bytes=1001)
    out.encode()  # no surrogates or broken characters
    assert "bytes and 0 lines cut" in out


def test_arguments_are_checked_against_the_schema():
    assert validate_arguments(EDITOR_SCHEMA, {"command": "view", "path": "/x"}) == []
    problems = validate_arguments(EDITOR_SCHEMA, {"command": "explode", "insert_line": "3", "bogus": 1})
    assert "missing required argument `path`" in problems
    assert (
        "`command` must be one of ['view', 'create', 'str_replace', 'insert', 'undo_edit'], got 'explode'" in problems
    )
    assert "`insert_line` must be integer, got str" in problems
    assert any("unknown argument `bogus`" in p for p in problems)
    assert validate_arguments(EDITOR_SCHEMA, ["not", "an", "object"]) == ["arguments must be a JSON object, got list"]


@pytest.fixture(scope="module")
async def box(base_image, podman_url):
    sandbox = await Sandbox.create(base_image, podman_url)
    yield sandbox
    await sandbox.close()


async def test_an_unknown_tool_or_bad_arguments_become_error_observations(box):
    tools = [BashTool(), EditorTool(), SubmitTool()]
    unknown = await run_tool_call(tools, ToolCall("python", {"code": "1"}), box)
    assert unknown.is_error and "Available tools: bash, str_replace_editor, submit" in unknown.content
    bad = await run_tool_call(tools, ToolCall("bash", {"cmd": "ls"}), box)
    assert bad.is_error and "missing required argument `command`" in bad.content


async def test_bash_reports_exit_codes_timeouts_and_cuts_long_output(box):
    bash = BashTool()
    assert (await bash(box, {"command": "echo hi"})).content == "hi\n"
    failed = await bash(box, {"command": "ls /nope"})
    assert failed.is_error and failed.content.endswith("[exit code 2]")
    slow = await bash(box, {"command": "sleep 30", "timeout_s": 1})
    assert slow.is_error and "timed out after 1 s" in slow.content
    long = await bash(box, {"command": "seq 1 100000"})
    assert len(long.content.encode()) < 10_200 and "lines cut" in long.content


async def test_editor_create_view_replace_insert_and_undo(box):
    ed = EditorTool()
    path = "/workspace/ed/app.py"
    await box.exec("mkdir -p /workspace/ed")
    assert (
        await ed(box, {"command": "create", "path": path, "file_text": "a = 1\nb = 2\nc = 3"})
    ).content == f"File created successfully at: {path}"
    again = await ed(box, {"command": "create", "path": path, "file_text": "x"})
    assert again.is_error and "Cannot overwrite files using command `create`" in again.content
    view = await ed(box, {"command": "view", "path": path})
    assert "     1\ta = 1\n     2\tb = 2\n     3\tc = 3" in view.content
    ranged = await ed(box, {"command": "view", "path": path, "view_range": [2, -1]})
    assert "     2\tb = 2\n     3\tc = 3" in ranged.content and "a = 1" not in ranged.content

    replaced = await ed(box, {"command": "str_replace", "path": path, "old_str": "b = 2", "new_str": "b = 20"})
    assert "has been edited" in replaced.content and "b = 20" in replaced.content
    missing = await ed(box, {"command": "str_replace", "path": path, "old_str": "zzz", "new_str": ""})
    assert missing.is_error and "did not appear verbatim" in missing.content
    await ed(box, {"command": "insert", "path": path, "insert_line": 0, "new_str": "import os"})
    dup = await ed(box, {"command": "insert", "path": path, "insert_line": 4, "new_str": "a = 1"})
    assert not dup.is_error
    twice = await ed(box, {"command": "str_replace", "path": path, "old_str": "a = 1", "new_str": "a = 2"})
    assert twice.is_error and "Multiple occurrences" in twice.content and "[2, 5]" in twice.content
    assert (await box.read_file(path)).decode() == "import os\na = 1\nb = 20\nc = 3\na = 1"

    await ed(box, {"command": "undo_edit", "path": path})
    await ed(box, {"command": "undo_edit", "path": path})
    assert (await box.read_file(path)).decode() == "a = 1\nb = 20\nc = 3"
    bad_line = await ed(box, {"command": "insert", "path": path, "insert_line": 99, "new_str": "x"})
    assert bad_line.is_error and "[0, 3]" in bad_line.content


async def test_editor_paths_must_be_absolute_and_exist(box):
    ed = EditorTool()
    relative = await ed(box, {"command": "view", "path": "app.py"})
    assert relative.is_error and "Maybe you meant /workspace/app.py?" in relative.content
    gone = await ed(box, {"command": "view", "path": "/workspace/none.py"})
    assert gone.is_error and "does not exist" in gone.content
    await box.exec("mkdir -p /workspace/dir/sub && touch /workspace/dir/sub/f.txt /workspace/dir/.hidden")
    listing = await ed(box, {"command": "view", "path": "/workspace/dir"})
    assert "/workspace/dir/sub/f.txt" in listing.content and ".hidden" not in listing.content
    on_dir = await ed(box, {"command": "str_replace", "path": "/workspace/dir", "old_str": "a"})
    assert on_dir.is_error and "only the `view` command" in on_dir.content


async def test_an_edit_keeps_the_files_mode(box):
    await box.exec("printf '#!/bin/sh\\necho one\\n' > /workspace/run.sh && chmod +x /workspace/run.sh")
    await EditorTool()(box, {"command": "str_replace", "path": "/workspace/run.sh", "old_str": "one", "new_str": "two"})
    assert (await box.exec("/workspace/run.sh")).output == "two\n"


async def test_submit_ends_the_episode_and_records_its_arguments(box):
    tool = SubmitTool(properties={"answer": {"type": "string"}}, required=("answer",))
    observation = await tool(box, {"answer": "42"})
    assert observation.done
    assert json.loads(await box.read_file(SUBMISSION_PATH)) == {"answer": "42"}
