"""What of a message the text index sees besides its words: its tool calls, minus boilerplate.

Three derived values are stored beside every message (computed once at ingest, never on read):

* ``calls`` -- the tool calls as text, one line per call: the tool's name, then every argument
  value (paths, commands, URLs, queries; nested values flattened), e.g.
  ``Read /etc/pgbouncer/pgbouncer.ini``. Indexed as its own column, so
  ``sessions search pgbouncer.ini`` finds the call (both tokenizers split paths at ``/`` and
  ``.``, so ``pgbouncer`` finds it too).
* ``tools`` -- the names of the tools a message calls (or, for a tool result, the tool that
  produced it), each between newlines (``"\\nBash\\nRead\\n"``): what ``--tool Bash`` filters on.
* ``search_text`` -- the content with agent-injected boilerplate removed (Codex
  ``<environment_context>``, Claude Code ``<system-reminder>`` and command caveats, Cline's
  ``<environment_details>``, Cursor ``<user_query>`` and Cline ``<task>`` / ``<feedback>`` /
  ``<answer>`` wrappers unwrapped) and without terminal escape sequences (a command's
  coloured output: ``\x1b[31mERROR\x1b[0m`` would be the one token ``31merror``, so a search
  for ``error`` missed it), set only when it differs from the content
  (:func:`search_text_of`). The index and previews use it; the stored content keeps every byte.
"""

from __future__ import annotations

import json
import re
from typing import Any

CALLS_CHARS = 16_384  # indexed text of one message's tool calls at most
_VALUE_CHARS = 4_096  # one argument value at most

#: Blocks an agent injects into a user turn that are not the user's words: dropped whole.
BOILERPLATE_BLOCKS: tuple[str, ...] = (
    "environment_context", "user_instructions", "system-reminder", "local-command-caveat",
    "local-command-stdout", "local-command-stderr", "command-message", "user_info",
    "project_layout", "git_status", "rules", "agent_requestable_workspace_rules",
    "additional_data", "turn_aborted",
    # Cline / Roo Code / Kilo Code: the editor state appended to every user turn (visible files,
    # open tabs, the workspace's whole file list, time, mode)
    "environment_details",
)
#: Wrappers around the user's own words: the tags go, the text inside stays.
BOILERPLATE_WRAPPERS: tuple[str, ...] = ("user_query", "command-name", "command-args", "user_message",
                                         "task", "feedback", "answer")

_NAMES = "|".join(re.escape(n) for n in BOILERPLATE_BLOCKS)
_WRAPS = "|".join(re.escape(n) for n in BOILERPLATE_WRAPPERS)
_BLOCK = re.compile(rf"<({_NAMES})(?:\s[^>]*)?>.*?</\1\s*>", re.S)
_WRAP = re.compile(rf"</?(?:{_WRAPS})(?:\s[^>]*)?>")
_AGENTS_MD = re.compile(r"\A# AGENTS\.md instructions for [^\n]*\n+<INSTRUCTIONS>.*?</INSTRUCTIONS>\s*", re.S)
_ANY_TAG = re.compile(rf"<(?:/?(?:{_NAMES}|{_WRAPS})|INSTRUCTIONS)[\s>]")


#: A terminal escape sequence: CSI (colours, cursor moves) or OSC (titles, clipboard).
TERMINAL_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def search_text_of(content: str) -> str | None:
    """What the index reads of ``content`` when it differs from it: without agent-injected
    boilerplate (:func:`strip_boilerplate`) and terminal escape sequences; None when neither
    is there."""
    text = strip_boilerplate(content) if "<" in content else None
    if "\x1b" in (text if text is not None else content):
        plain = TERMINAL_ESCAPES.sub("", text if text is not None else content)
        text = plain if plain != content else None
    return text


def strip_boilerplate(content: str) -> str | None:
    """The content without agent-injected blocks and wrappers; None when there are none."""
    if "<" not in content or not _ANY_TAG.search(content):
        return None
    text = _AGENTS_MD.sub("", content)
    text = _BLOCK.sub("", text)
    text = _WRAP.sub("", text)
    text = text.strip()
    return None if text == content else text


def _flatten(value: Any, out: list[str], budget: list[int]) -> None:
    """Append the scalar values of ``value`` (depth first) while ``budget`` lasts."""
    if budget[0] <= 0:
        return
    if isinstance(value, dict):
        for item in value.values():
            _flatten(item, out, budget)
    elif isinstance(value, list):
        for item in value:
            _flatten(item, out, budget)
    elif value is None or isinstance(value, bool):
        return
    else:
        text = str(value)[:_VALUE_CHARS]
        if text:
            out.append(text)
            budget[0] -= len(text) + 1


def _arguments(raw: Any) -> Any:
    """A call's arguments: JSON text decoded when it is JSON, else kept as text."""
    if isinstance(raw, str):
        stripped = raw.strip()
        if stripped[:1] in ("{", "["):
            try:
                return json.loads(stripped)
            except ValueError:
                return raw
    return raw


def _calls(tool_calls: str) -> list[dict[str, Any]]:
    try:
        decoded = json.loads(tool_calls)
    except ValueError:
        return []
    return _call_list(decoded)


def _call_list(decoded: Any) -> list[dict[str, Any]]:
    """The call objects of decoded ``tool_calls`` JSON (one object counts as a list of one)."""
    if isinstance(decoded, dict):
        decoded = [decoded]
    return [c for c in decoded if isinstance(c, dict)] if isinstance(decoded, list) else []


def _name_and_args(call: dict[str, Any]) -> tuple[str, Any]:
    function = call.get("function")
    if isinstance(function, dict):
        return str(function.get("name") or ""), _arguments(function.get("arguments"))
    args = call.get("arguments", call.get("input", call.get("args")))
    return str(call.get("name") or call.get("type") or ""), _arguments(args)


def call_fields(tool_name: str | None, tool_calls: str | None,
                decoded: Any = None) -> tuple[str | None, str | None]:
    """``(calls, tools)``: the indexed text of a message's tool calls and the names of the tools
    it calls or answers for (see the module docstring), from one parse of ``tool_calls``.

    ``decoded``: ``tool_calls`` already decoded (``json.loads(tool_calls)``), when the caller has
    it: the same result without parsing the text again."""
    names: list[str] = [tool_name] if tool_name else []
    lines: list[str] = []
    if tool_calls:
        budget = [CALLS_CHARS]
        for call in _calls(tool_calls) if decoded is None else _call_list(decoded):
            name, args = _name_and_args(call)
            if name and name not in names:
                names.append(name)
            if budget[0] <= 0:
                continue
            parts: list[str] = [name] if name else []
            _flatten(args, parts, budget)
            if parts:
                lines.append(" ".join(parts))
    text = "\n".join(lines)[:CALLS_CHARS]
    return text or None, "\n" + "\n".join(names) + "\n" if names else None


def call_text(tool_calls: str | None) -> str | None:
    """The indexed text of a message's tool calls; None without any."""
    return call_fields(None, tool_calls)[0]


def tool_names(tool_name: str | None, tool_calls: str | None) -> str | None:
    """The ``tools`` value: every tool the message calls or answers for, newline-delimited."""
    return call_fields(tool_name, tool_calls)[1]


def derived(role: str, content: str, tool_name: str | None,
            tool_calls: str | None) -> tuple[str | None, str | None, str | None]:
    """``(calls, tools, search_text)`` for one message."""
    calls, tools = call_fields(tool_name, tool_calls) if tool_name or tool_calls else (None, None)
    return calls, tools, search_text_of(content)


def render_calls(tool_calls: str | None) -> list[str]:
    """Human-readable lines for ``sessions show``: ``name(arguments JSON)`` per call."""
    out: list[str] = []
    for call in _calls(tool_calls or ""):
        name, args = _name_and_args(call)
        shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        out.append(f"{name or '?'}({shown if shown not in (None, 'null') else ''})")
    return out
