"""``factory-droid-stream``: what ``droid exec --output-format stream-json`` prints, saved to a file.

One event per line, every one but ``error`` naming its ``session_id``:

* ``{"type": "system", "subtype": "init", session_id, cwd, model, tools, reasoning_effort?}``;
* ``{"type": "message", role: "user" | "assistant", id, text, timestamp (ms)}``;
* ``{"type": "tool_call", id, messageId, toolId, toolName, parameters, timestamp}``: a call
  made by the assistant message ``messageId``;
* ``{"type": "tool_result", id?, messageId, toolId, isError, value | error: {type, message},
  timestamp?}``: ``id`` is the call's (some Droid versions left it out: the oldest
  unanswered call is then taken);
* ``{"type": "completion", finalText, numTurns, durationMs, usage?, timestamp}``: the end of
  the run (``finalText`` repeats the last assistant message, kept only when it differs);
* ``{"type": "error", source, message, timestamp}`` (kept as a ``system`` row).

The stream carries no thinking (Droid's session file keeps it: the ``factory-droid`` reader).
The file is read whole (it is written once); a run continued with ``droid exec -s <id>``
and appended to the same file adds to that session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    opt_str,
    safe_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    json_objects,
    shape_guarded,
    tool_call,
)

_EVENTS = {"system", "message", "tool_call", "tool_result", "completion", "error"}


def _is_droid_event(obj: dict[str, Any]) -> bool:
    """An event only Droid's stream has (Claude Code's and Amp's carry ``message`` objects)."""
    kind = obj.get("type")
    if kind == "message":
        return (
            isinstance(obj.get("text"), str)
            and obj.get("role") in ("user", "assistant")
            and "message" not in obj
        )
    if kind == "tool_call":
        return "toolName" in obj and "parameters" in obj
    if kind == "tool_result":
        return "toolId" in obj and "isError" in obj
    if kind == "completion":
        return "finalText" in obj
    return False


def _result_text(obj: dict[str, Any]) -> str:
    value = obj.get("value")
    if value is None and isinstance(obj.get("error"), dict):
        value = obj["error"].get("message")
    if value is None or isinstance(value, str):
        return value or ""
    return flatten_content(value) or dumps(value)


@dataclass
class _Session:
    """What the stream says about one session, and its rows in order."""

    record: SessionRecord
    rows: list[MessageRecord] = field(default_factory=list)
    by_message: dict[str, MessageRecord] = field(default_factory=dict)
    calls: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # id(row) -> its calls
    unanswered: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)


class FactoryDroidStreamImporter(ReplacedWhenChanged, Importer):
    """A saved ``droid exec --output-format stream-json`` run."""

    name = "factory-droid-stream"
    agent = "Factory Droid (droid exec stream-json)"
    indexes = "messages, tool calls with parameters and their results (errors too), the final text, errors"
    source: str | None = "factory-droid"
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``system``/``init`` event followed by Droid's own events (or only Droid events)."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects or not any(_is_droid_event(o) for o in objects):
            return 0.0
        if not all(o.get("type") in _EVENTS for o in objects):
            return 0.0
        first = objects[0]
        if (
            first.get("type") == "system"
            and first.get("subtype") == "init"
            and "session_id" in first
        ):
            return 0.9
        return 0.8 if all("session_id" in o for o in objects if o.get("type") != "error") else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        sessions: dict[str, _Session] = {}
        problems: list[Problem] = []
        current = self.path.stem
        for line, obj in json_objects(self.path, self.hasher, problems):
            current = opt_str(obj.get("session_id")) or current
            session = sessions.get(current)
            if session is None:
                session = sessions[current] = _Session(
                    SessionRecord(id=current, source=self.source)
                )
            handler = _HANDLERS.get(obj.get("type"))  # type: ignore[arg-type]
            if handler is None:
                problems.append(Problem(line, f"unknown event type {obj.get('type')!r} (skipped)"))
                continue
            handler(session, obj, line, problems)
        for session in sessions.values():
            for row in session.rows:
                calls = session.calls.get(id(row))
                if calls:
                    row.tool_calls = dumps(calls)
            yield replace(session.record)  # built anew: the caps of SessionRecord apply
            yield from (r for r in session.rows if r.content or r.tool_calls or r.role == "tool")
        yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)


def _system(session: _Session, obj: dict[str, Any], line: int, problems: list[Problem]) -> None:
    record = session.record
    record.model = opt_str(obj.get("model")) or record.model
    record.workspace = opt_str(obj.get("cwd")) or record.workspace
    if opt_str(obj.get("reasoning_effort")):
        record.meta["reasoning_effort"] = obj["reasoning_effort"]


def _stamp(
    session: _Session, obj: dict[str, Any], line: int, problems: list[Problem]
) -> float | None:
    stamp = safe_timestamp(obj.get("timestamp"), line, problems)
    if stamp is not None and session.record.started_at is None:
        session.record.started_at = stamp
    return stamp


def _message(session: _Session, obj: dict[str, Any], line: int, problems: list[Problem]) -> None:
    role = obj.get("role")
    if role not in ("user", "assistant"):
        problems.append(Problem(line, f"message of unknown role {role!r} (skipped)"))
        return
    row = MessageRecord(
        session.record.id,
        role,
        str(obj.get("text") or ""),
        timestamp=_stamp(session, obj, line, problems),
        line=line,
    )
    session.rows.append(row)
    if opt_str(obj.get("id")):
        session.by_message[str(obj["id"])] = row


def _tool_call(session: _Session, obj: dict[str, Any], line: int, problems: list[Problem]) -> None:
    stamp = _stamp(session, obj, line, problems)
    message_id = opt_str(obj.get("messageId"))
    row = session.by_message.get(message_id) if message_id else None
    if row is None or row.role != "assistant":
        row = MessageRecord(session.record.id, "assistant", "", timestamp=stamp, line=line)
        session.rows.append(row)
        if message_id:
            session.by_message[message_id] = row
    name = opt_str(obj.get("toolName")) or opt_str(obj.get("toolId")) or ""
    call_id = opt_str(obj.get("id"))
    session.calls.setdefault(id(row), []).append(tool_call(call_id, name, obj.get("parameters")))
    if call_id:
        session.unanswered.append(call_id)
        session.names[call_id] = name


def _tool_result(
    session: _Session, obj: dict[str, Any], line: int, problems: list[Problem]
) -> None:
    call_id = opt_str(obj.get("id"))
    if call_id is None and session.unanswered:
        call_id = session.unanswered[0]  # Droid versions without the id: answered in call order
    if call_id in session.unanswered:
        session.unanswered.remove(call_id)
    name = session.names.get(call_id or "") or opt_str(obj.get("toolId"))
    session.rows.append(
        MessageRecord(
            session.record.id,
            "tool",
            _result_text(obj),
            tool_name=name,
            tool_call_id=call_id,
            timestamp=_stamp(session, obj, line, problems),
            line=line,
        )
    )


def _completion(session: _Session, obj: dict[str, Any], line: int, problems: list[Problem]) -> None:
    stamp = _stamp(session, obj, line, problems)
    session.record.ended_at = stamp or session.record.ended_at
    session.record.meta.update(
        {k: obj[k] for k in ("numTurns", "durationMs") if obj.get(k) is not None}
    )
    text = opt_str(obj.get("finalText"))
    last = next((r for r in reversed(session.rows) if r.role == "assistant" and r.content), None)
    if text and (last is None or last.content.strip() != text.strip()):
        session.rows.append(
            MessageRecord(session.record.id, "assistant", text, timestamp=stamp, line=line)
        )


def _error(session: _Session, obj: dict[str, Any], line: int, problems: list[Problem]) -> None:
    text = opt_str(obj.get("message")) or ""
    source = opt_str(obj.get("source"))
    session.rows.append(
        MessageRecord(
            session.record.id,
            "system",
            f"[{source}] {text}" if source and text else text,
            timestamp=_stamp(session, obj, line, problems),
            line=line,
        )
    )


_HANDLERS = {
    "system": _system,
    "message": _message,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "completion": _completion,
    "error": _error,
}
