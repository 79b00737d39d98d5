"""``openai-jsonl``: generic chat logs.

Either one message per line (``{"role", "content"}``, optionally
``session_id``/``conversation_id`` and ``timestamp``; flat ``{"type":
"tool_call" | "tool_result" | "error" | "system"}`` event lines too), or one conversation per
line (``{"messages": [...]}``, optionally ``id``/``session_id``, ``title``,
``model``). The session id comes from the record or, failing that, the file stem (``<stem>#<line>``
for a conversation line). Lines may also be Responses API items (``{"type": "message" | "reasoning" |
"function_call" | "function_call_output" | ...}``, as the OpenAI Agents SDK's JSONL sessions keep
them), read by the Codex rollout's item reader. An assistant's ``reasoning_content`` / ``reasoning`` is a ``reasoning`` row
before it; a legacy ``function_call`` is a tool call and the ``function`` message answering it a
``tool`` row (``openai_common``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.base import (
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    json_text,
    opt_str,
    read_jsonl,
    safe_timestamp,
)
from hermes_store.sessions.importers.codex import CALL_TYPES, OUTPUT_TYPES, item_events
from hermes_store.sessions.importers.openai_common import (
    FOREIGN_KEYS,
    HERMES_ID,
    ToolNames,
    assistant_thinking,
    is_flat_event,
    is_message_like,
    openai_message,
)

_ID_KEYS = ("session_id", "conversation_id", "thread_id")
# Responses API items (what the OpenAI Agents SDK's JSONL sessions keep, one per line)
RESPONSE_ITEM_TYPES = {"message", "reasoning", *CALL_TYPES, *OUTPUT_TYPES}


def is_response_item(obj: Any) -> bool:
    """A Responses API item: ``{"type": "message", "role", "content": [input_text | output_text]}``,
    ``reasoning`` (``summary``), ``function_call`` (``call_id``, ``name``, ``arguments``),
    ``function_call_output`` (``call_id``, ``output``) and the other call / output items."""
    if not isinstance(obj, dict) or FOREIGN_KEYS & obj.keys() or obj.get("type") not in RESPONSE_ITEM_TYPES:
        return False
    if obj["type"] == "message":
        return isinstance(obj.get("role"), str) and isinstance(obj.get("content"), (list, str))
    return obj["type"] == "reasoning" or "call_id" in obj or "id" in obj
JSONL_SUFFIXES = {".jsonl", ".ndjson", ".jsonlines"}


class OpenAIJsonlImporter(Importer):
    """One message or one conversation per JSONL line."""

    name = "openai-jsonl"
    agent = "Generic OpenAI-style chat JSONL"
    indexes = ("one message or one conversation per line, tool calls, flat tool_call/tool_result/"
               "error lines")
    source = "cli"  # as before the registry: generic logs count as the user's own sessions
    reader = 2  # 2: reasoning_content, legacy function_call / function messages, Responses items (2026-12-07)

    @classmethod
    def sniff(cls, head: Head) -> float:
        """JSONL whose every probed line is an OpenAI-style message, conversation or flat event."""
        if head.suffix not in JSONL_SUFFIXES:
            return 0.0
        objects = head.objects()
        if not objects:
            return 0.0
        for obj in objects:
            if isinstance(obj.get("messages"), list):
                if FOREIGN_KEYS & obj.keys() or not all(is_message_like(m) for m in obj["messages"][:8]):
                    return 0.0
            elif not (is_message_like(obj) or is_flat_event(obj) or is_response_item(obj)):
                return 0.0
        return 0.3 if HERMES_ID.match(head.path.stem) else 0.6

    def read(self, state: SourceState) -> Iterator[Event]:
        tools = ToolNames(state.meta)
        seen: set[str] = set()
        stem = self.default_session_id()

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            problems: list[Problem] = []
            if isinstance(obj.get("messages"), list):
                session_id = _first_id(obj, ("id", *_ID_KEYS)) or f"{stem}#{line}"
                yield SessionRecord(
                    id=session_id,
                    source=opt_str(obj.get("source")) or opt_str(obj.get("platform")),
                    title=opt_str(obj.get("title")),
                    model=opt_str(obj.get("model")),
                    started_at=safe_timestamp(
                        obj.get("created_at") or obj.get("timestamp"), line, problems),
                    parent_session_id=opt_str(obj.get("parent_session_id")),
                )
                for index, message in enumerate(obj["messages"]):
                    if not isinstance(message, dict):
                        problems.append(Problem(line, f"messages[{index}]: expected an object"))
                        continue
                    yield from _with_thinking(message, openai_message(message, session_id, line, tools, problems))
            else:
                session_id = _first_id(obj, _ID_KEYS) or stem
                if is_response_item(obj):
                    if session_id not in seen:
                        seen.add(session_id)
                        yield SessionRecord(id=session_id, model=opt_str(obj.get("model")))
                    yield from item_events(obj, session_id, safe_timestamp(obj.get("timestamp"), line, problems),
                                           line, tools)
                    yield from problems
                    return
                if is_flat_event(obj):
                    record = flat_event(obj, session_id, line, tools, problems)
                else:
                    record = openai_message(obj, session_id, line, tools, problems)
                if record is not None:
                    if session_id not in seen:
                        seen.add(session_id)
                        yield SessionRecord(id=session_id, model=opt_str(obj.get("model")))
                    yield from _with_thinking(obj, record)
            yield from problems

        yield from read_jsonl(self, state, handle)


def _with_thinking(message: dict[str, Any], record: MessageRecord | None) -> Iterator[MessageRecord]:
    """``record``, after a ``reasoning`` row of the thinking an assistant message carries beside its
    content (``reasoning_content`` of DeepSeek-style APIs and the datasets distilled from them,
    ``reasoning``, OpenRouter's ``reasoning_details``)."""
    if record is None:
        return
    thinking = assistant_thinking(message) if record.role == "assistant" else None
    if thinking:
        yield MessageRecord(record.session_id, "reasoning", thinking, timestamp=record.timestamp, line=record.line)
    yield record


def flat_event(obj: dict[str, Any], session_id: str, line: int, tools: ToolNames,
               problems: list[Problem]) -> MessageRecord:
    """A flat ``{"type": "tool_call" | "tool_result" | "error", ...}`` line as a message.

    ``tool_call``: ``name`` (or ``tool_name``/``function.name``), ``arguments``
    (or ``args``/``input``) and ``id`` (or ``call_id``/``tool_call_id``);
    ``tool_result``: the call id, ``content`` (or ``output``/``result``) and
    optionally ``name``; ``error`` and ``system``: ``error`` (text or ``{"message"}``) or
    ``message``/``content``/``text``, stored as a ``system`` message.
    """
    kind = obj["type"]
    stamp = safe_timestamp(obj.get("timestamp"), line, problems)
    call_id = _first_id(obj, ("id", "call_id", "tool_call_id") if kind == "tool_call"
                        else ("tool_call_id", "call_id", "id"))
    if kind == "tool_call":
        function = obj.get("function") if isinstance(obj.get("function"), dict) else {}
        name = _first_id(obj, ("name", "tool_name")) or opt_str(function.get("name"))
        if name is None:
            problems.append(Problem(line, "field 'name': a tool_call without a tool name"))
        arguments = next((obj[k] for k in ("arguments", "args", "input") if k in obj),
                         function.get("arguments"))
        call = {"id": call_id, "type": "function",
                "function": {"name": name, "arguments": json_text(arguments) or "{}"}}
        tools.remember([call])
        return MessageRecord(session_id, "assistant", flatten_content(obj.get("content")),
                             tool_calls=json_text([call]), timestamp=stamp, line=line)
    if kind == "tool_result":
        output = next((obj[k] for k in ("content", "output", "result") if k in obj), None)
        text = output if isinstance(output, str) else (json_text(output) if isinstance(output, dict)
                                                       else flatten_content(output))
        name = _first_id(obj, ("name", "tool_name")) or tools.lookup(call_id)
        return MessageRecord(session_id, "tool", text or "", tool_name=name, tool_call_id=call_id,
                             timestamp=stamp, line=line)
    error = obj.get("error")
    if isinstance(error, dict):
        error = error.get("message") or json_text(error)
    text = opt_str(error) or flatten_content(obj.get("message") or obj.get("content") or obj.get("text"))
    return MessageRecord(session_id, "system", text or "", timestamp=stamp, line=line)


def _first_id(obj: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = opt_str(obj.get(key))
        if value:
            return value
    return None
