"""``goose-stream``: what ``goose run --output-format stream-json`` prints, saved to a file.

One event per line, tagged by ``type`` (Goose CLI's ``StreamEvent``):

* ``{"type": "message", "message": {id, role, created (s), content: [parts], metadata}}``: a
  Goose message as ``sessions.db`` holds it, but streamed: a reply arrives as many chunks, each
  repeating the message ``id`` and holding only the new part (a piece of text or thinking, a
  ``toolRequest``). Consecutive chunks of one id are merged into one message (text and thinking
  pieces concatenated in order) and read with the parts of the other Goose formats; the tool
  results come as ``user`` messages of ``toolResponse`` parts. The user's own prompt is not in
  the stream;
* ``{"type": "notification", extension_id, "log": {message}}`` (kept as a ``system`` row
  ``[<extension>] <message>``) or ``..., "progress": {progress, total, message}}`` (skipped);
* ``{"type": "model_change", model, mode}`` (earlier versions): the session's model;
* ``{"type": "error", error}``: a ``system`` row;
* ``{"type": "complete", total_tokens, input_tokens?, output_tokens?}``: the end of the run,
  the token counts kept in the session's meta.

The stream names no session: the session is the file's name. The file is re-read whole when it
changes (a reply cut mid-stream is replaced, never stored twice).
"""

from __future__ import annotations

from collections.abc import Iterator
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
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    json_objects,
    shape_guarded,
)
from hermes_store.sessions.importers.goose import goose_rows, is_goose_message
from hermes_store.sessions.importers.goose_export import visible_rows
from hermes_store.sessions.importers.openai_common import ToolNames

_EVENTS = {"message", "notification", "model_change", "error", "complete"}
_TOKENS = ("total_tokens", "input_tokens", "output_tokens")
_JOINED = {"text": "text", "thinking": "thinking"}  # part type -> the field whose chunks are concatenated


def _merge(into: dict[str, Any], chunk: dict[str, Any]) -> None:
    """Append ``chunk``'s parts to ``into``'s content, a text or thinking piece joined to the one before."""
    content: list[Any] = into["content"]
    for part in chunk.get("content") or []:
        kind = part.get("type") if isinstance(part, dict) else None
        field = _JOINED.get(str(kind))
        last = content[-1] if content else None
        if field and isinstance(last, dict) and last.get("type") == kind:
            last[field] = str(last.get(field) or "") + str(part.get(field) or "")
        else:
            content.append(dict(part) if isinstance(part, dict) else part)


def _is_chunk(message: dict[str, Any]) -> bool:
    """A Goose message, or a chunk of one with no part yet."""
    return is_goose_message(message) or (message.get("role") in ("user", "assistant")
                                           and message.get("content") == [])


class GooseStreamImporter(ReplacedWhenChanged, Importer):
    """A saved ``goose run --output-format stream-json`` run."""

    name = "goose-stream"
    reader = 2  # 2: tool-result items for the user alone left out (Goose's audience annotations, 2026-12-07)
    agent = "Goose (goose run --output-format stream-json)"
    indexes = "replies merged from their chunks, thinking, tool requests and responses, log notifications, errors"
    source: str | None = "goose"
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Only Goose's stream events, at least one a ``message`` wrapping a Goose message."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects or not all(o.get("type") in _EVENTS for o in objects):
            return 0.0
        wrapped = [o.get("message") for o in objects if o.get("type") == "message"]
        if not wrapped or not all(isinstance(m, dict) and _is_chunk(m) for m in wrapped):
            return 0.0
        return 0.9 if any(is_goose_message(m) for m in wrapped) else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        session_id = self.path.stem
        record = SessionRecord(id=session_id, source=self.source)
        tools = ToolNames()
        problems: list[Problem] = []
        rows: list[MessageRecord] = []
        pending: dict[str, Any] | None = None  # the message being merged from its chunks
        pending_line = 0
        held: list[MessageRecord] = []  # notices that arrived while a message was still streaming
        reported: set[str] = set()

        def flush() -> None:
            nonlocal pending
            if pending is not None:
                found: list[Problem] = []
                built = goose_rows(pending, session_id, pending_line, tools, found)
                rows.extend(visible_rows(pending, built))
                problems.extend(found)
                pending = None
            rows.extend(held)
            held.clear()

        def notice(text: str, line: int) -> None:
            row = MessageRecord(session_id, "system", text, line=line)
            (held if pending is not None else rows).append(row)

        for line, obj in json_objects(self.path, self.hasher, problems):
            kind = obj.get("type")
            if kind == "message":
                message = obj.get("message")
                if not isinstance(message, dict):
                    problems.append(Problem(line, "field 'message': missing or not an object"))
                    continue
                chunk_id = opt_str(message.get("id"))
                if (pending is not None and chunk_id and chunk_id == pending.get("id")
                        and message.get("role") == pending.get("role")):
                    _merge(pending, message)
                    continue
                flush()
                pending = {**message, "content": []}
                pending_line = line
                _merge(pending, message)
            elif kind == "notification":
                log = obj.get("log")
                text = opt_str(log.get("message")) if isinstance(log, dict) else None
                if text:  # progress notifications: a progress bar's ticks, nothing said
                    notice(f"[{opt_str(obj.get('extension_id')) or 'notification'}] {text}", line)
            elif kind == "error":
                text = opt_str(obj.get("error"))
                if text:
                    notice(f"[error] {text}", line)
            elif kind == "model_change":
                record.model = opt_str(obj.get("model")) or record.model
            elif kind == "complete":
                record.meta.update({k: obj[k] for k in _TOKENS if isinstance(obj.get(k), int)})
            elif str(kind) not in reported:
                reported.add(str(kind))
                problems.append(Problem(line, f"unknown event type {kind!r} (skipped; reported once per file)"))
        flush()
        yield SessionRecord(id=record.id, source=record.source, model=record.model, meta=record.meta)
        yield from rows
        yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)
