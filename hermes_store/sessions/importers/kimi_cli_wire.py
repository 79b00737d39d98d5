"""Kimi CLI's own wire log (``~/.kimi/sessions/<hash>/<sessionId>/wire.jsonl``), read by ``kimi-cli``.

Kimi CLI (MoonshotAI/kimi-cli, Python) records every wire message of a session beside its
``context.jsonl``: a header ``{"type": "metadata", "protocol_version": "1.1"}`` (files of
the legacy protocol have none), then ``{"timestamp": <epoch s>, "message": {"type": <class
name>, "payload": {...}}}`` per message, consecutive streamed parts merged before they are
written (``WireRecorder``):

* ``TurnBegin`` / ``SteerInput`` (``user_input``: text or content parts): the user's words;
* ``TextPart`` (``text``), ``ThinkPart`` (``think``), ``ImageURLPart`` and the other media
  parts: the reply, its thinking (``reasoning``), media markers;
* ``ToolCall`` (``id``, ``function: {name, arguments}``; a streamed ``ToolCallPart`` is
  merged into it before it is written) and ``ToolResult`` (``tool_call_id``, ``return_value: {is_error, output,
  message}``);
* ``SubagentEvent`` (``agent_id``, ``parent_tool_call_id``, ``event``: an envelope of the
  above): the child session ``<sessionId>:<agent_id>``;
* ``Notification``: a ``system`` row; steps, status, compaction, approvals, hooks and MCP
  loading are bookkeeping.

Beside ``context.jsonl`` the log is read through it (the context is the conversation;
the log gives the session its times); alone it is the conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.base import (
    Event,
    MessageRecord,
    Problem,
    SessionRecord,
    flatten_content,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import dumps, tool_call
from hermes_store.sessions.importers.kimi_wire import content_parts

_PARTS = {"TextPart", "ThinkPart", "ImageURLPart", "AudioURLPart", "VideoURLPart"}
_BOOKKEEPING = {"TurnEnd", "StepBegin", "ToolCallPart", "StepInterrupted", "CompactionBegin", "CompactionEnd", "StatusUpdate",
                "MCPLoadingBegin", "MCPLoadingEnd", "HookTriggered", "HookResolved", "ApprovalRequest",
                "ApprovalResponse", "ApprovalRequestResolved", "QuestionRequest", "QuestionResponse",
                "ToolCallRequest", "PlanDisplay"}


def is_cli_wire_line(obj: dict[str, Any]) -> bool:
    """A Kimi CLI wire record (``{timestamp, message: {type, payload}}``) or its metadata header."""
    if obj.get("type") == "metadata":
        return "protocol_version" in obj and "created_at" not in obj
    message = obj.get("message")
    return ("timestamp" in obj and isinstance(message, dict) and isinstance(message.get("type"), str)
            and isinstance(message.get("payload"), dict))


def notification_text(payload: dict[str, Any]) -> str:
    """A ``Notification`` (``category``, ``title``, ``body``) as one ``system`` row's text:
    ``[category] title\nbody``; empty when it has neither title nor body. The same object in
    the wire log and in print mode's stream-json output."""
    body = "\n".join(str(payload[k]) for k in ("title", "body") if opt_str(payload.get(k)))
    return f"[{payload.get('category') or 'notice'}] {body}" if body else ""


def wire_span(path: Path, window: int = 1 << 16) -> tuple[float | None, float | None]:
    """The first and last record times of a wire log (read from its two ends only)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(window)
            handle.seek(max(0, size - window))
            tail = handle.read(window)
    except OSError:
        return None, None
    stamps = []
    for chunk in (head, tail):
        found = []
        for raw in chunk.split(b"\n"):
            try:
                obj = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
                found.append(parse_timestamp(obj["timestamp"]) if isinstance(obj, dict) and "timestamp" in obj
                             else None)
            except (ValueError, KeyError, RecursionError):
                continue
        stamps.append([f for f in found if f is not None])
    first = stamps[0][0] if stamps[0] else None
    last = stamps[1][-1] if stamps[1] else None
    return first, last


class _Agent:
    """One agent's session (the main one or a subagent) and the names of its calls."""

    def __init__(self, session_id: str) -> None:
        self.session = session_id
        self.names: dict[str, str] = {}


class CliWireReader:
    """Turns Kimi CLI wire records into session and message events."""

    def __init__(self, session_id: str, source: str | None) -> None:
        self.session_id = session_id
        self.source = source
        self.agents: dict[str, _Agent] = {}

    def _agent(self, key: str | None, parent_call: str | None) -> tuple[_Agent, SessionRecord | None]:
        sid = self.session_id if key is None else f"{self.session_id}:{key}"
        if sid in self.agents:
            return self.agents[sid], None
        self.agents[sid] = _Agent(sid)
        if key is None:
            return self.agents[sid], None
        return self.agents[sid], SessionRecord(id=sid, source=self.source, parent_session_id=self.session_id,
                                               meta={"subagent": True, **({"parent_tool_call_id": parent_call}
                                                                           if parent_call else {})})

    def handle(self, obj: dict[str, Any], line: int) -> Iterator[Event]:
        if obj.get("type") == "metadata":
            return
        if not is_cli_wire_line(obj):
            yield Problem(line, "expected a {timestamp, message: {type, payload}} wire record (skipped)")
            return
        try:
            stamp = parse_timestamp(obj.get("timestamp"))
        except ValueError:
            stamp = None
            yield Problem(line, f"field 'timestamp': not a time ({obj.get('timestamp')!r})")
        yield from self._event(obj["message"], stamp, line, None, None)

    def message(self, message: dict[str, Any], stamp: float | None, line: int) -> Iterator[Event]:
        """The events of one main-agent wire message ``{type, payload}`` (a record's ``message``)."""
        yield from self._event(message, stamp, line, None, None)

    def _event(self, message: dict[str, Any], stamp: float | None, line: int, key: str | None,
               parent_call: str | None) -> Iterator[Event]:
        kind, payload = message.get("type"), message.get("payload")
        payload = payload if isinstance(payload, dict) else {}
        agent, opened = self._agent(key, parent_call)
        if opened is not None:
            yield opened
        if kind in ("TurnBegin", "SteerInput"):
            text, _ = content_parts(payload.get("user_input"))
            if text.strip():
                yield MessageRecord(agent.session, "user", text, timestamp=stamp, line=line)
        elif kind in _PARTS or (kind == "ContentPart" and isinstance(payload.get("type"), str)):
            text, thought = content_parts([payload])
            if thought.strip():
                yield MessageRecord(agent.session, "reasoning", thought, timestamp=stamp, line=line)
            elif text.strip():  # parts are merged before they are written: one part, one reply
                yield MessageRecord(agent.session, "assistant", text, timestamp=stamp, line=line)
        elif kind == "ToolCall":
            function = payload.get("function") if isinstance(payload.get("function"), dict) else {}
            call_id, name = opt_str(payload.get("id")), opt_str(function.get("name"))
            if call_id and name:
                agent.names[call_id] = name
            yield MessageRecord(agent.session, "assistant", "",
                                tool_calls=dumps([tool_call(call_id, name, function.get("arguments") or {})]),
                                timestamp=stamp, line=line)
        elif kind == "ToolResult":
            value = payload.get("return_value") if isinstance(payload.get("return_value"), dict) else {}
            output = value.get("output")
            text = output if isinstance(output, str) else flatten_content(output) if output else ""
            if not text.strip() and opt_str(value.get("message")):
                text = str(value["message"])
            call_id = opt_str(payload.get("tool_call_id"))
            yield MessageRecord(agent.session, "tool", text, tool_name=agent.names.get(call_id or ""),
                                tool_call_id=call_id, timestamp=stamp, line=line)
        elif kind == "SubagentEvent":
            event = payload.get("event")
            child = opt_str(payload.get("agent_id")) or opt_str(payload.get("parent_tool_call_id")) \
                or opt_str(payload.get("task_tool_call_id"))
            if isinstance(event, dict) and child:
                parent = opt_str(payload.get("parent_tool_call_id")) or opt_str(payload.get("task_tool_call_id"))
                yield from self._event(event, stamp, line, child, parent)
        elif kind == "Notification":
            text = notification_text(payload)
            if text:
                yield MessageRecord(agent.session, "system", text, timestamp=stamp, line=line)
        elif kind not in _BOOKKEEPING:
            yield Problem(line, f"unknown wire message type {kind!r} (skipped)")
