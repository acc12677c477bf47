"""The chat format: an episode as token ids that only ever grow, for ChatML models.

ChatML (SmolLM2, Qwen, Hermes) writes each message as `<|im_start|>role\\ncontent<|im_end|>\\n`
and asks for a reply with `<|im_start|>assistant\\n`. SmolLM2's template has no tools, so tool use
is ptrain's own, in one of two action formats (see parse.py):

    hermes  the system message lists the tool schemas in `<tools></tools>` (or, with
            `tool_listing="compact"`, one line per tool: a third of the tokens, for small
            models and short windows) and asks for
            `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`; results come back in a
            `tool` message as `<tool_response>...</tool_response>` blocks (Hermes; Qwen uses
            `tool_role="user"`)
    bash    the system message asks for one ```bash block per turn and `submit` to finish, as
            mini-swe-agent does; results come back as the plain output in a `tool` message

An episode is built by appending, never by rendering the conversation again:

    ids = fmt.prompt_ids(system, instruction, tools)   # ... <|im_start|>assistant\\n
    ids += completion                                  # the model's tokens, as sampled (mask 1)
    ids += fmt.assistant_suffix_ids(completion)        # <|im_end|> if the model did not stop on it
    ids += fmt.tool_result_ids(observations)           # \\n<|im_start|>tool\\n...<|im_end|>\\n<|im_start|>assistant\\n

so turn k+1's tokens extend turn k's exactly, and what the trainer sees is what the model sampled.

Why the rendered parts equal tokenizing the rendered text: the markers' ids come from
`tokenizer.convert_tokens_to_ids` (checked to be single added tokens), and the text between two
markers is tokenized whole, as one segment. A Hugging Face tokenizer splits its input at added
tokens before anything else, so tokenizing any text gives the markers' ids and each segment's own
tokens, concatenated: exactly what these functions build. The one seam that is not at a marker is
where the model's first token follows `assistant\\n`; tokenizing the text again there can differ
(`\\n\\n` is one token), as can any tokenization the model sampled that is not the tokenizer's own.
That is why the episode keeps ids, never text, and never tokenizes its history again.

Text is only ever text: contents are tokenized with `split_special_tokens=True`, so a file or a
task holding `<|im_end|>` cannot close a turn or forge one. Not quite every text survives: SmolLM2's
vocabulary lacks 6 of the 256 byte tokens, so encoding drops the control characters 0x04, 0x06,
0x13, 0x14, 0x16 and 0x1d (and garbles the unassigned planes 4-11); the model can neither read nor
write them, which is one more reason transcripts are decoded from the ids.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ptrain.errors import ConfigError
from ptrain.rollout.parse import CLOSE, FORMATS, OPEN, ActionFormat, ParsedTurn, parse_tool_calls
from ptrain.taskpack import Observation, Tool, ToolCall

START, END = "<|im_start|>", "<|im_end|>"
LISTINGS = ("json", "compact")  # how the hermes format lists the tools: Hermes' JSON schemas, or a line each
DEFAULT_SYSTEM = (
    "You are an autonomous agent working on a task in a Linux sandbox, with no network and nobody to "
    "answer questions. Work step by step: look around, make changes, check them, and finish when the "
    "task is done."
)


@dataclass(frozen=True, eq=False)
class ChatFormat:
    tokenizer: Any  # a Hugging Face tokenizer of a ChatML model
    action: ActionFormat = "hermes"
    tool_role: str = "tool"
    max_calls_per_turn: int = 1
    tool_listing: str = "json"
    start_id: int = field(init=False)
    end_id: int = field(init=False)

    def __post_init__(self) -> None:
        if self.action not in FORMATS:
            raise ConfigError(f"unknown action format {self.action!r}", fix=f"use one of {', '.join(FORMATS)}")
        if not self.tool_role or not self.tool_role.isidentifier():
            raise ConfigError(f"tool role {self.tool_role!r} must be a plain word such as `tool` or `user`")
        if self.tool_listing not in LISTINGS:
            raise ConfigError(f"unknown tool listing {self.tool_listing!r}", fix=f"use one of {', '.join(LISTINGS)}")
        if self.max_calls_per_turn < 1:
            raise ConfigError(f"max_calls_per_turn is {self.max_calls_per_turn}; it must be at least 1")
        for name, marker in (("start_id", START), ("end_id", END)):
            object.__setattr__(self, name, self._marker_id(marker))

    def _marker_id(self, marker: str) -> int:
        """The id of a template marker, checked to be one added token that text tokenizes to."""
        tok = self.tokenizer
        token_id = tok.convert_tokens_to_ids(marker)
        single = tok(marker, add_special_tokens=False).input_ids == [token_id]
        if token_id is None or token_id == tok.unk_token_id or not single:
            raise ConfigError(
                f"the tokenizer has no {marker} token, so its model does not use the ChatML chat format",
                fix="use a ChatML model (SmolLM2, Qwen2.5, Hermes), or add a chat format for this model",
            )
        return token_id

    # --- token ids, in the order an episode appends them ----------------------------------------

    def encode(self, text: str) -> list[int]:
        """Text as text tokens: never special tokens, whatever the text holds."""
        return list(self.tokenizer(text, add_special_tokens=False, split_special_tokens=True).input_ids)

    def prompt_ids(self, system: str, user: str, tools: Sequence[Tool | Mapping[str, Any]]) -> list[int]:
        """System message (with the action format and tools), user message, and the generation prompt."""
        newline = self.encode("\n")
        system_ids = self._message("system", self.system_text(system, tools))
        return system_ids + newline + self._message("user", user) + newline + self.generation_prompt_ids()

    def generation_prompt_ids(self) -> list[int]:
        return [self.start_id, *self.encode("assistant\n")]

    @property
    def stop_token_ids(self) -> tuple[int, ...]:
        """Where the engine stops sampling a turn."""
        return (self.end_id,)

    def assistant_suffix_ids(self, completion_ids: Sequence[int]) -> list[int]:
        """What closes the model's turn: `<|im_end|>` unless the model already ended on it."""
        return [] if completion_ids and completion_ids[-1] == self.end_id else [self.end_id]

    def tool_result_ids(self, observations: Sequence[Observation]) -> list[int]:
        """After a closed model turn: the newline, the tool message, and the next generation prompt."""
        if not observations:
            raise ValueError("a tool message needs at least one observation")
        newline = self.encode("\n")
        return (
            newline
            + self._message(self.tool_role, self.tool_text(observations))
            + newline
            + self.generation_prompt_ids()
        )

    def conversation_ids(
        self, system: str, user: str, tools: Sequence[Tool | Mapping[str, Any]], turns: Sequence[tuple[str, str]]
    ) -> list[int]:
        """A conversation rendered from text: the prompt, then (assistant, tool) turns, then the generation
        prompt. Compaction starts a new segment with it; it is not a prefix of the ids it replaces."""
        newline = self.encode("\n")
        ids = self.prompt_ids(system, user, tools)
        for assistant, tool in turns:
            ids += self.encode(assistant) + [self.end_id] + newline + self._message(self.tool_role, tool) + newline
            ids += self.generation_prompt_ids()
        return ids

    def _message(self, role: str, content: str) -> list[int]:
        return [self.start_id, *self.encode(f"{role}\n{content}"), self.end_id]

    # --- text ---------------------------------------------------------------------------------

    def system_text(self, system: str, tools: Sequence[Tool | Mapping[str, Any]]) -> str:
        schemas = [dict(getattr(tool, "schema", tool)) for tool in tools]
        if self.action == "bash":
            return f"{system}\n\n{self._bash_instructions(schemas)}"
        if not schemas:
            return system
        per_turn = "exactly one call" if self.max_calls_per_turn == 1 else f"at most {self.max_calls_per_turn} calls"
        names = {s.get("name") for s in schemas}
        finish = " When the task is done, call `submit`." if "submit" in names else ""
        if self.tool_listing == "compact":
            return (
                f"{system}\n\n# Tools\n\n" + "\n".join(compact_line(s) for s in schemas) + "\n\n"
                'Call a tool as <tool_call>\n{"name": <tool>, "arguments": {<argument>: <value>, ...}}\n</tool_call>\n'
                f"Make {per_turn} per turn; each result comes back within <tool_response></tool_response> tags.{finish}"
            )
        lines = "\n".join(json.dumps({"type": "function", "function": s}, ensure_ascii=False) for s in schemas)
        return (
            f"{system}\n\n# Tools\n\nYou are provided with function signatures within <tools></tools> XML tags:\n"
            f"<tools>\n{lines}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n"
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n'
            f"Make {per_turn} per turn; each result comes back within <tool_response></tool_response> tags.{finish}"
        )

    def _bash_instructions(self, schemas: list[dict[str, Any]]) -> str:
        by_name = {s.get("name"): s for s in schemas}
        if "bash" not in by_name or "submit" not in by_name:
            raise ConfigError(
                "the bash action format needs the taskpack's tools to include `bash` and `submit`",
                fix="use the hermes action format for this taskpack",
            )
        if by_name["submit"].get("parameters", {}).get("required"):
            raise ConfigError(
                "this taskpack's `submit` takes required arguments, which a ```bash block cannot carry",
                fix="use the hermes action format for this taskpack",
            )
        return (
            "# How to act\n\n"
            "Each reply explains your reasoning briefly, then gives exactly one bash code block:\n"
            "```bash\n<command>\n```\n"
            "It runs in a persistent shell (the directory and environment carry over) and its output comes back "
            "in the next message. One block per turn; join commands with && if you need several. Edit files "
            "with commands such as sed or cat <<'EOF' > file.\n"
            "When the task is done, reply with a block that holds only:\n```bash\nsubmit\n```"
        )

    def tool_text(self, observations: Sequence[Observation]) -> str:
        contents = [o.content or "(no output)" for o in observations]
        if self.action == "bash":
            return "\n\n".join(contents)
        return "\n".join(f"<tool_response>\n{c}\n</tool_response>" for c in contents)

    def assistant_text(self, calls: Sequence[ToolCall], thought: str = "") -> str:
        """Calls written the way the model should write them (gold demonstrations, tests).

        In the bash format a block carries only the command; other `bash` arguments (`timeout_s`)
        take the tool's defaults, and tools other than `bash` and `submit` cannot be written."""
        if self.action == "bash":
            blocks = [self._bash_block(call) for call in calls]
        else:
            objects = [json.dumps({"name": c.name, "arguments": dict(c.arguments)}, ensure_ascii=False) for c in calls]
            blocks = [f"{OPEN}\n{obj}\n{CLOSE}" for obj in objects]
        return "\n".join([thought, *blocks] if thought else blocks)

    def _bash_block(self, call: ToolCall) -> str:
        if call.name == "submit":
            return "```bash\nsubmit\n```"
        if call.name != "bash":
            raise ValueError(f"the bash action format cannot express a call to `{call.name}`")
        return f"```bash\n{call.arguments['command']}\n```"

    def completion_text(self, completion_ids: Sequence[int]) -> str:
        """The model's turn as text for the parser, without the `<|im_end|>` it stopped on."""
        ids = list(completion_ids)
        if ids and ids[-1] == self.end_id:
            ids.pop()
        return self.render_text(ids)

    def parse(self, text: str) -> ParsedTurn:
        return parse_tool_calls(text, self.action, self.max_calls_per_turn)

    def render_text(self, ids: Sequence[int]) -> str:
        """Ids as text, markers included (for display and transcripts; never tokenized again)."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)


def compact_line(schema: Mapping[str, Any]) -> str:
    """A tool in one line: `- name(arg: type, optional?: type): description`, enums as their values."""

    def kind(spec: Mapping[str, Any]) -> str:
        if "enum" in spec:
            return "|".join(json.dumps(v) for v in spec["enum"])
        return str(spec.get("type", "any"))

    params = schema.get("parameters", {}) or {}
    required = set(params.get("required", ()))
    args = ", ".join(f"{name}{'' if name in required else '?'}: {kind(spec)}"
                     for name, spec in (params.get("properties", {}) or {}).items())  # fmt: skip
    return f"- {schema.get('name')}({args}): {schema.get('description', '').strip()}"


def resolve_action_format(action_format: str, tools: list) -> str:
    """ "auto": one ```bash block per turn when the taskpack's tools are a shell plus an argument-free
    `submit` (what a small model learns fastest), JSON tool calls (hermes) otherwise."""
    if action_format != "auto":
        return action_format
    by_name = {tool.name: tool.schema for tool in tools}
    bare_submit = "submit" in by_name and not by_name["submit"].get("parameters", {}).get("required")
    return "bash" if "bash" in by_name and bare_submit else "hermes"
