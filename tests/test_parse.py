"""Tool-call parsing: what models really write, and anything at all, becomes calls or readable errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptrain.rollout.parse import ParsedTurn, parse_tool_calls
from ptrain.taskpack import ToolCall

PROPERTY = settings(max_examples=200, deadline=None)
LS = ToolCall("bash", {"command": "ls"})


def hermes(text: str, max_calls: int = 1) -> ParsedTurn:
    return parse_tool_calls(text, "hermes", max_calls)


def bash(text: str, max_calls: int = 1) -> ParsedTurn:
    return parse_tool_calls(text, "bash", max_calls)


# --- hermes -------------------------------------------------------------------------------------


def test_a_well_formed_call_and_the_reasoning_around_it():
    turn = hermes('I will list the files.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>')
    assert turn == ParsedTurn([LS], [], "I will list the files.")


def test_a_closing_tag_inside_a_string_argument_does_not_end_the_call():
    call = ToolCall("bash", {"command": "echo '</tool_call>' > tags.txt"})
    assert hermes(
        f"<tool_call>{json.dumps({'name': 'bash', 'arguments': dict(call.arguments)})}</tool_call>"
    ).calls == [call]


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "bash", "arguments": {"command": "ls"},}',  # trailing comma
        '{"name": "bash", "arguments": {"command": "ls"}',  # a brace left open
        '```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```',  # a code fence inside the tags
        '{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}',  # arguments as a JSON string
        '{"name": "bash", "parameters": {"command": "ls"}}',  # Llama's key
    ],
)
def test_unambiguous_slips_are_forgiven(body):
    assert hermes(f"<tool_call>\n{body}\n</tool_call>") == ParsedTurn([LS], [], "")


def test_raw_newlines_inside_strings_are_read_as_newlines():
    assert hermes('<tool_call>{"name": "bash", "arguments": {"command": "cd /\nls"}}</tool_call>').calls == [
        ToolCall("bash", {"command": "cd /\nls"})
    ]


def test_a_complete_call_without_its_closing_tag_is_run():
    assert hermes('<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n').calls == [LS]


def test_a_call_without_arguments_has_none():
    assert hermes('<tool_call>{"name": "submit"}</tool_call>').calls == [ToolCall("submit", {})]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('{"arguments": {"command": "ls"}}', "no `name`"),
        ('{"name": "bash", "arguments": {"command": "ls"}, "id": "call_1"}', "unknown keys 'id'"),
        ('{"name": "bash", "arguments": ["ls"]}', "`arguments` must be a JSON object, got a list"),
        ('{"name": "bash", "arguments": "ls -la"}', "`arguments` is a string that is not a JSON object"),
        ('{"name": "bash", "arguments": {"command": "ls}}', "its JSON does not parse (Unterminated string"),
        ("{'name': 'bash', 'arguments': {'command': 'ls'}}", "its JSON does not parse"),
        ('"bash ls"', "a call must be a JSON object"),
        ("", "the tags hold no JSON object"),
        ('{"name": "bash", "arguments": {}} and more', "unexpected text after the JSON object"),
    ],
)
def test_a_malformed_call_is_an_error_naming_the_problem_and_the_expected_form(body, error):
    turn = hermes(f"<tool_call>{body}</tool_call>")
    assert turn.calls == []
    assert len(turn.errors) == 1 and error in turn.errors[0]
    assert turn.errors[0].startswith("Tool call 1 was not run") and '{"name": "<tool name>"' in turn.errors[0]


def test_extra_calls_are_reported_not_dropped():
    text = "".join(f'<tool_call>{{"name": "{n}", "arguments": {{}}}}</tool_call>' for n in ("a", "b", "c"))
    one = hermes(text)
    assert one.calls == [ToolCall("a", {})]
    assert one.errors == ["Only one call per turn is run; not run: `b`, `c`. Make the rest in your next turns."]
    assert hermes(text, max_calls=3) == ParsedTurn([ToolCall(n, {}) for n in "abc"], [], "")


def test_a_json_list_is_several_calls():
    turn = hermes('<tool_call>[{"name": "a"}, {"name": "b"}]</tool_call>', max_calls=2)
    assert turn.calls == [ToolCall("a", {}), ToolCall("b", {})] and turn.errors == []


def test_a_good_call_still_runs_next_to_a_broken_one():
    turn = hermes(
        '<tool_call>{"name": }</tool_call>\n<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
    )
    assert turn.calls == [LS]
    assert len(turn.errors) == 1 and turn.errors[0].startswith("Tool call 1 was not run")


def test_a_broken_call_does_not_swallow_the_next_one():
    turn = hermes('<tool_call>{"name": "a"} oops\n<tool_call>{"name": "b"}</tool_call>', max_calls=2)
    assert turn.calls == [ToolCall("b", {})]
    assert len(turn.errors) == 1 and "unexpected text after the JSON object" in turn.errors[0]


def test_no_call_at_all_says_how_to_make_one():
    turn = hermes("I think the bug is in line 3.")
    assert turn.calls == [] and turn.text == "I think the bug is in line 3."
    assert turn.errors == [
        'No tool call found. Reply with:\n<tool_call>\n{"name": "<tool name>", "arguments": {<arguments as a JSON object>}}\n</tool_call>'
    ]
    bare = hermes('{"name": "bash", "arguments": {"command": "ls"}}')
    assert "must be inside <tool_call></tool_call> tags" in bare.errors[0]


def test_json_nested_beyond_the_decoders_limit_is_an_error_not_a_crash():
    turn = hermes("<tool_call>" + "[" * 100_000)
    assert turn.calls == [] and "nested too deeply" in turn.errors[0]
    assert hermes("<tool_call>" + "[" * 100_000 + "]" * 100_000 + "</tool_call>").errors


def test_the_error_observation_joins_the_errors():
    assert hermes("<tool_call>" + '{"name": "bash"}').error_observation() is None
    observation = hermes("nothing").error_observation()
    assert observation.is_error and observation.content.startswith("No tool call found.")


# --- bash blocks --------------------------------------------------------------------------------


def test_one_bash_block_is_a_bash_call_and_the_rest_is_reasoning():
    turn = bash("THOUGHT: look first.\n\n```bash\nls -la && cat README.md\n```\n")
    assert turn == ParsedTurn([ToolCall("bash", {"command": "ls -la && cat README.md"})], [], "THOUGHT: look first.")


def test_sh_and_shell_blocks_count_and_multiline_commands_stay_whole():
    script = "cat <<'EOF' > a.py\nprint(1)\nEOF\npython a.py"
    assert bash(f"```sh\n{script}\n```").calls == [ToolCall("bash", {"command": script})]
    assert bash("```shell\npwd\n```").calls == [ToolCall("bash", {"command": "pwd"})]


@pytest.mark.parametrize(
    "block",
    [
        "submit",
        "  submit  ",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A",
    ],
)
def test_a_block_that_says_submit_is_a_submit_call(block):
    assert bash(f"Done.\n```bash\n{block}\n```").calls == [ToolCall("submit", {})]


def test_a_block_that_only_mentions_submit_is_a_command():
    assert bash("```bash\ngrep -r submit .\n```").calls == [ToolCall("bash", {"command": "grep -r submit ."})]


def test_two_blocks_run_the_first_and_report_the_second():
    turn = bash("```bash\nls\n```\nthen\n```bash\npwd\n```")
    assert turn.calls == [ToolCall("bash", {"command": "ls"})]
    assert turn.errors == ["Only one call per turn is run; not run: `bash`. Make the rest in your next turns."]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("I would run ls.", "No tool call found. Reply with:\n```bash\n<one command>\n```"),
        ("```python\nprint(1)\n```", "Only ```bash blocks are run, and this turn has a ```python block."),
        ("```\nls\n```", "Only ```bash blocks are run, and this turn has a ``` block without a language."),
        ("```bash\nls -la\n", "The ```bash block is not closed"),
        ("```bash\n\n```", "The ```bash block is empty"),
    ],
)
def test_a_turn_without_exactly_one_runnable_block_is_an_error(text, error):
    turn = bash(text)
    assert turn.calls == [] and len(turn.errors) == 1 and turn.errors[0].startswith(error)


def test_an_unknown_action_format_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown action format 'xml'"):
        parse_tool_calls("", "xml")


# --- properties ---------------------------------------------------------------------------------

FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    '{"name": "bash", "arguments": {"command": "ls"}}',
    '{"name": ',
    '"arguments": ',
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    ",",
    "```bash\n",
    "```json\n",
    "```\n",
    "\n```",
    "submit\n",
    "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    "\n",
]
model_text = st.lists(st.text(max_size=20) | st.sampled_from(FRAGMENTS), max_size=12).map("".join)


@PROPERTY
@given(text=model_text | st.text(), action=st.sampled_from(["hermes", "bash"]), max_calls=st.integers(1, 3))
def test_any_text_gives_calls_or_errors_and_never_raises(text, action, max_calls):
    turn = parse_tool_calls(text, action, max_calls)
    assert turn.calls or turn.errors
    assert len(turn.calls) <= max_calls
    assert all(isinstance(c.name, str) and c.name and isinstance(c.arguments, dict) for c in turn.calls)
    assert all(isinstance(e, str) and e for e in turn.errors)
    assert isinstance(turn.text, str)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | model_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(model_text, inner, max_size=3),
    max_leaves=10,
)


@PROPERTY
@given(
    name=model_text.filter(str.strip),
    arguments=st.dictionaries(model_text, json_values, max_size=4),
    indent=st.sampled_from([None, 2]),
    as_string=st.booleans(),
)
def test_any_json_call_comes_back_whatever_its_strings_hold(name, arguments, indent, as_string):
    encoded = json.dumps(arguments) if as_string else arguments
    text = f"<tool_call>\n{json.dumps({'name': name, 'arguments': encoded}, indent=indent)}\n</tool_call>"
    assert hermes(text) == ParsedTurn([ToolCall(name, arguments)], [], "")
