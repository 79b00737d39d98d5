"""``opencode-run``: what ``opencode run --format json`` prints, saved to a file.

OpenCode's non-interactive run (``packages/opencode/src/cli/cmd/run.ts``) prints the events of
the session it runs as JSON lines, each ``{"type", "timestamp" (ms), "sessionID": "ses_...",
...}``:

* ``step_start``, ``text``, ``reasoning`` (with ``--thinking``), ``tool_use`` and
  ``step_finish``, each carrying the finished ``part`` as OpenCode stores it (``{id: "prt_...",
  sessionID, messageID, type: "step-start" | "text" | "reasoning" | "tool" | "step-finish",
  ...}``; a ``tool`` part once its ``state.status`` is ``completed`` or ``error``). The parts
  are gathered per ``messageID`` and read as the storage tree's parts are
  (:func:`~hermes_store.sessions.importers.opencode_json.message_rows`: text and calls in one
  row, each call's result a ``tool`` row, reasoning a ``reasoning`` row); a part printed again
  replaces its earlier copy, so each is stored once. ``step_finish`` parts' ``cost`` adds up
  in the session's meta;
* ``error`` (``error: {name, data: {message}}``): a ``system`` row;
* ``done`` (``reason``, ``rejected`` permissions): the end of the run, bookkeeping.

Only the session's own parts are printed (a subagent's are not), and never the prompt, the
title or the model. The session is the ``sessionID``, else the file's name; the file is read
whole when it changes. Before this reader such a file was refused as ``unknown format``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
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
    opt_str,
    safe_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    json_objects,
    safe_rows,
    shape_guarded,
)
from hermes_store.sessions.importers.opencode_export import OpenCodeExportImporter
from hermes_store.sessions.importers.opencode_json import message_rows

PART_EVENTS = frozenset({"step_start", "text", "reasoning", "tool_use", "step_finish"})
_EVENTS = PART_EVENTS | {"error", "done"}


def _is_run_event(obj: dict[str, Any]) -> bool:
    """A line of the stream: a ``type``, an OpenCode ``sessionID`` and a ``timestamp``."""
    return (isinstance(obj.get("type"), str) and str(obj.get("sessionID", "")).startswith("ses_")
            and isinstance(obj.get("timestamp"), (int, float)))


@dataclass
class _Message:
    """One assistant message of the run: its header and its parts by part id, in order."""

    info: dict[str, Any]
    line: int
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)


def _error_text(error: Any) -> str:
    """``[name] message`` of an ``error`` event's error (else the error as JSON)."""
    if not isinstance(error, dict):
        return str(error or "")
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    message = opt_str(data.get("message")) or opt_str(error.get("message"))
    name = opt_str(error.get("name")) or "error"
    return f"[{name}] {message}" if message else f"[{name}] {dumps(error)}"


class OpenCodeRunImporter(ReplacedWhenChanged, Importer):
    """A saved ``opencode run --format json`` run."""

    name = "opencode-run"
    agent = "OpenCode (opencode run --format json)"
    indexes = "the run's text, reasoning, tool calls with input and output (errors too), errors; step costs"
    source: str | None = OpenCodeExportImporter.source
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Lines of ``{type, timestamp, sessionID: "ses_..."}``, at least one a part event whose
        ``part`` names its ``messageID``; at most a fifth of a type added since."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects or not all(_is_run_event(o) for o in objects):
            return 0.0
        parts = [o for o in objects if o["type"] in PART_EVENTS and isinstance(o.get("part"), dict)
                 and isinstance(o["part"].get("messageID"), str)]
        known = sum(o["type"] in _EVENTS for o in objects)
        if not parts or known * 5 < len(objects) * 4:
            return 0.0
        return 0.95

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        records: dict[str, SessionRecord] = {}
        items: list[_Message | MessageRecord] = []  # in the order the stream first names them
        messages: dict[tuple[str, str], _Message] = {}
        problems: list[Problem] = []
        for line, obj in json_objects(self.path, self.hasher, problems):
            kind = obj.get("type")
            session_id = opt_str(obj.get("sessionID")) or self.path.stem
            record = records.get(session_id)
            if record is None:
                record = records[session_id] = SessionRecord(id=session_id, source=self.source)
            stamp = safe_timestamp(obj.get("timestamp"), line, problems)
            if stamp is not None:
                record.started_at = min(record.started_at or stamp, stamp)
                record.ended_at = max(record.ended_at or stamp, stamp)
            if kind in PART_EVENTS:
                part = obj.get("part")
                if not isinstance(part, dict):
                    problems.append(Problem(line, f"{kind} event without a 'part' object (skipped)"))
                    continue
                message_id = opt_str(part.get("messageID")) or f"line-{line}"
                message = messages.get((session_id, message_id))
                if message is None:
                    info = {"id": message_id, "sessionID": session_id, "role": "assistant",
                            "time": {"created": obj.get("timestamp")}}
                    message = messages[(session_id, message_id)] = _Message(info, line)
                    items.append(message)
                message.parts[opt_str(part.get("id")) or f"line-{line}"] = part
                if kind == "step_finish" and isinstance(part.get("cost"), (int, float)):
                    record.meta["cost"] = round(record.meta.get("cost", 0) + part["cost"], 6)
            elif kind == "error":
                items.append(MessageRecord(session_id, "system", _error_text(obj.get("error")),
                                           timestamp=stamp, line=line))
            elif kind == "done":
                if obj.get("rejected"):
                    record.meta["rejected"] = obj["rejected"]
            else:
                problems.append(Problem(line, f"unknown event type {kind!r} (skipped)"))
        yield from records.values()
        for item in items:
            if isinstance(item, MessageRecord):
                yield item
                continue
            where = f"line {item.line}"
            found: list[Problem] = []
            for row in safe_rows(message_rows, found, item.line, where, item.info["sessionID"], item.info,
                                 list(item.parts.values()), where, found):
                row.line = item.line
                yield row
            problems.extend(Problem(item.line, p.error) if p.line is None else p for p in found)
        yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)
