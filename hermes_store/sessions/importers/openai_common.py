"""Reading OpenAI-style message dicts (used by the Hermes and generic importers)."""

from __future__ import annotations

import json
import re
from typing import Any

from hermes_store.sessions.importers.base import (
    MessageRecord,
    Problem,
    flatten_content,
    json_text,
    opt_str,
    safe_timestamp,
)

# Hermes session ids: ``20260105_101500_a1b2c3`` or ``cron_<job>_20260111_020000``
HERMES_ID = re.compile(r"^(\d{8}_\d{6}_[0-9a-f]{4,}|cron_.+_\d{8}_\d{6})$")
KNOWN_ROLES = {"system", "user", "assistant", "tool", "function", "developer"}


def assistant_thinking(message: dict[str, Any]) -> str | None:
    """The thinking an assistant message carries beside its content: ``reasoning`` or
    ``reasoning_content`` text, else the readable items of OpenRouter's ``reasoning_details``
    (``reasoning.text`` / ``reasoning.summary``; encrypted items hold none), else the summaries of
    ``codex_reasoning_items`` (Responses API reasoning items, ``summary: [{text}]``). Hermes Agent
    keeps all four on its assistant messages (``_ASSISTANT_ONLY_KEYS`` in its gateway transcript
    code); its ``state.db`` stores the two lists as JSON text, which is decoded here."""
    for key in ("reasoning", "reasoning_content"):
        text = message.get(key)
        if isinstance(text, str) and text.strip():
            return text
    pieces = []
    for item in _json_list(message.get("reasoning_details")):
        text = item.get("text") if isinstance(item, dict) and isinstance(item.get("text"), str) else (
            item.get("summary") if isinstance(item, dict) else None)
        if isinstance(text, str) and text.strip():
            pieces.append(text)
    for item in [] if pieces else _json_list(message.get("codex_reasoning_items")):
        summary = item.get("summary") if isinstance(item, dict) else None
        for part in summary if isinstance(summary, list) else [summary]:
            text = part.get("text") if isinstance(part, dict) else part
            if isinstance(text, str) and text.strip():
                pieces.append(text)
    return "\n".join(pieces) or None


def _json_list(value: Any) -> list[Any]:
    """A list, or the list a JSON text holds (anything else: empty)."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return []
    return value if isinstance(value, list) else []


KEPT_TOOL_NAMES = 16  # calls remembered across reads of a file (a result follows its call closely)
TOOL_NAMES_KEY = "tool_names"  # where a file's state keeps them


class ToolNames:
    """Remembers ``tool_call_id -> function name`` so tool rows get their ``tool_name``.

    Given the file's state (``SourceState.meta``), the newest calls are kept there too, so a
    result read by a later run of an appended file (the agent wrote the call, the indexer ran,
    then the result came) still finds the tool it answers.
    """

    def __init__(self, kept: dict[str, Any] | None = None) -> None:
        self._names: dict[str, str] = {}
        self._kept = kept
        self._recent: dict[str, str] = {}
        self._legacy_lines: dict[int | None, int] = {}  # legacy function calls per line (their ids)
        self._open_legacy: list[tuple[str, str]] = []  # (name, id) of legacy calls not answered yet
        remembered = kept.get(TOOL_NAMES_KEY) if kept is not None else None
        if isinstance(remembered, dict):
            self._recent = {str(k): str(v) for k, v in remembered.items()}
            self._names.update(self._recent)

    def remember(self, tool_calls: Any) -> None:
        """Record the ids and names of an assistant's ``tool_calls``."""
        if isinstance(tool_calls, str):
            try:
                tool_calls = json.loads(tool_calls)
            except (ValueError, RecursionError):
                return
        if not isinstance(tool_calls, list):
            return
        for call in tool_calls:
            if not isinstance(call, dict):
                continue
            function = call.get("function")
            name = function.get("name") if isinstance(function, dict) else call.get("name")
            if call.get("id") and name:
                if len(self._names) > 10_000:
                    self._names.clear()
                self._names[str(call["id"])] = str(name)
                if self._kept is not None:
                    self._keep(str(call["id"]), str(name))

    def _keep(self, call_id: str, name: str) -> None:
        """Note a call in the file's state: the newest :data:`KEPT_TOOL_NAMES` (up to twice as many)."""
        self._recent.pop(call_id, None)
        self._recent[call_id] = name
        if len(self._recent) > 2 * KEPT_TOOL_NAMES:
            self._recent = dict(list(self._recent.items())[-KEPT_TOOL_NAMES:])
        if self._kept is not None:
            self._kept[TOOL_NAMES_KEY] = self._recent

    def lookup(self, call_id: str | None) -> str | None:
        """The function name of ``call_id``, if seen."""
        return self._names.get(call_id) if call_id else None

    def legacy_call(self, function_call: dict[str, Any], line: int | None) -> list[dict[str, Any]] | None:
        """The ``tool_calls`` of a legacy ``function_call`` (Chat Completions before tool calls, and
        fine-tuning data in that shape: ``{name, arguments}``, no id). The call gets an id made from
        its line (``function_call:<line>[.<n>]``), which the ``function`` message answering it takes."""
        name = opt_str(function_call.get("name"))
        if name is None:
            return None
        count = self._legacy_lines.get(line, 0)
        self._legacy_lines[line] = count + 1
        call_id = f"function_call:{line if line is not None else 0}" + (f".{count}" if count else "")
        self._open_legacy.append((name, call_id))
        arguments = function_call.get("arguments")
        calls = [{"id": call_id, "type": "function", "function": {
            "name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments or {})}}]
        self.remember(calls)
        return calls

    def legacy_answer(self, name: str | None) -> str | None:
        """The id of the oldest unanswered legacy call of ``name`` (a ``function`` message answers it)."""
        for index, (called, call_id) in enumerate(self._open_legacy):
            if name is None or called == name:
                del self._open_legacy[index]
                return call_id
        return None


def openai_message(
    obj: dict[str, Any],
    session_id: str,
    line: int | None,
    tools: ToolNames,
    problems: list[Problem],
) -> MessageRecord | None:
    """Turn one ``{role, content, tool_calls, ...}`` dict into a MessageRecord.

    Returns None (with a Problem) when the dict has no usable ``role``.
    """
    role = obj.get("role")
    if role.__class__ is not str or not role:
        problems.append(Problem(line, "field 'role': missing or not a string"))
        return None
    if role not in KNOWN_ROLES:
        problems.append(Problem(line, f"field 'role': unknown role {role!r} (kept)"))
    content = obj.get("content")
    if content.__class__ is not str or content.startswith("\x00json:"):
        content = flatten_content(content)
    if not content and role == "assistant":
        content = _spoken_or_refused(obj)
    tool_calls = decoded = obj.get("tool_calls")
    tool_name = call_id = None
    if not tool_calls and role == "assistant" and isinstance(obj.get("function_call"), dict):
        tool_calls = decoded = tools.legacy_call(obj["function_call"], line)
    if tool_calls:
        tools.remember(tool_calls)
        tool_calls = json_text(tool_calls)
    else:
        tool_calls = decoded = None
    if role == "tool" or role == "function":
        call_id = opt_str(obj.get("tool_call_id"))
        tool_name = opt_str(obj.get("tool_name")) or opt_str(obj.get("name")) or tools.lookup(call_id)
        if role == "function":  # a legacy function result: a tool row answering the call of that name
            role, call_id = "tool", call_id or tools.legacy_answer(tool_name)
    else:
        call_id = opt_str(obj.get("tool_call_id"))
        tool_name = opt_str(obj.get("tool_name"))
    stamp = obj.get("timestamp")
    if stamp is not None:
        stamp = safe_timestamp(stamp, line, problems)
    return MessageRecord(session_id, role, content, tool_name, tool_calls, call_id, stamp, line,
                         tool_calls_value=None if decoded is tool_calls else decoded)


def _spoken_or_refused(obj: dict[str, Any]) -> str:
    """An assistant message whose words are outside ``content`` (Chat Completions): a
    ``refusal``, or the ``transcript`` of its ``audio`` reply."""
    refusal = obj.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        return refusal
    audio = obj.get("audio")
    transcript = audio.get("transcript") if isinstance(audio, dict) else None
    return transcript if isinstance(transcript, str) else ""


# --------------------------------------------------------------------------- sniffing

# content part types of the OpenAI chat and responses APIs (anything else is another format)
PART_TYPES = {"text", "input_text", "output_text", "image_url", "input_image", "image",
              "input_audio", "audio", "file", "input_file", "refusal"}
FLAT_TYPES = {"tool_call", "tool_result", "error", "system"}
# keys that belong to other agents' line formats (Claude Code, Qwen, Codex, Gemini, ...)
FOREIGN_KEYS = {"payload", "parts", "parentUuid", "sessionId", "uuid", "leafUuid", "toolCalls"}


def is_message_like(obj: Any) -> bool:
    """True for an OpenAI-style message dict: a known role and text or OpenAI content parts."""
    if not isinstance(obj, dict) or FOREIGN_KEYS & obj.keys():
        return False
    role = obj.get("role")
    if role not in KNOWN_ROLES:
        return False
    content = obj.get("content")
    if content is None:
        return not isinstance(obj.get("message"), dict)  # {role, message: {...}}: another agent's line
    if isinstance(content, str):
        return True
    if isinstance(content, list):
        return all(isinstance(part, str) or (isinstance(part, dict) and part.get("type") in PART_TYPES)
                   for part in content)
    return False


def is_flat_event(obj: Any) -> bool:
    """True for a flat ``{"type": "tool_call" | "tool_result" | "error", ...}`` line.

    A ``{"type": "system", "subtype": "init"}`` line is not: it opens an agent's stream-json
    output (Claude Code, Factory Droid, Amp), read by that agent's importer."""
    return (isinstance(obj, dict) and obj.get("type") in FLAT_TYPES and "role" not in obj
            and not FOREIGN_KEYS & obj.keys()
            and not (obj.get("type") == "system" and obj.get("subtype") == "init"))
