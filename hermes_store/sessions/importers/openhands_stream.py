"""``openhands-stream``: what ``openhands --headless --json -t TASK`` prints, saved to a file.

The OpenHands CLI (OpenHands/OpenHands-CLI) in headless mode with ``--json`` prints every event
of the conversation as the agent SDK serialises it (``event.model_dump()``, one JSON object a
line; the system prompt event is left out): the same ``{kind, id, timestamp, source, ...}``
objects the SDK stores one per file under ``~/.openhands/conversations/<id>/events/``, so each
is read by the ``openhands`` reader's :func:`event_rows` (messages, actions as tool calls with
their thought and reasoning, observations, rejections, errors; state updates and the like
skipped). After the events the CLI prints plain text, not JSON: a ``CONVERSATION SUMMARY``
(the agent's message count and last message, in a box), ``Goodbye!``, ``Conversation ID:
<hex>`` and ``Hint: run openhands --resume <uuid> ...``. Those lines are skipped, the UUID
naming the session (the conversation's ``id``, as its ``base_state.json`` writes it); a run cut
before them is named after the file. The file is read whole; a changed file replaces what it
gave before.

Before this reader such a file was refused (``unknown format``).
"""

from __future__ import annotations

import json
import re
import uuid
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
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    MAX_LINE_BYTES,
    ReplacedWhenChanged,
    safe_rows,
    shape_guarded,
)
from hermes_store.sessions.importers.openhands import event_rows

# the SDK's event kinds (openhands-sdk/openhands/sdk/event/): one of these opens a real stream
_KINDS = frozenset({
    "MessageEvent", "ActionEvent", "ObservationEvent", "UserRejectObservation", "AgentErrorEvent",
    "ACPToolCallEvent", "ConversationErrorEvent", "SystemPromptEvent", "Condensation",
    "CondensationRequest", "CondensationSummaryEvent", "ConversationStateUpdateEvent", "PauseEvent",
    "TokenEvent", "InterruptEvent", "HookExecutionEvent", "LLMCompletionLogEvent", "StreamingDeltaEvent",
})
_SOURCES = ("user", "agent", "environment", "hook")
_RESUME_HINT = re.compile(r"openhands --resume ([0-9a-fA-F-]{32,36})\b")
_CONVERSATION_ID = re.compile(r"^Conversation ID:\s*([0-9a-fA-F]{32})\s*$")


def _is_event(obj: Any) -> bool:
    """An agent SDK event: ``kind`` (a class name), ``id``, ``timestamp``, ``source``."""
    return isinstance(obj, dict) and isinstance(obj.get("kind"), str) and "timestamp" in obj \
        and obj.get("source") in _SOURCES and "id" in obj


def _conversation_id(text: str) -> str | None:
    """The conversation's UUID in one of the lines the CLI prints after the events."""
    match = _RESUME_HINT.search(text)
    value = match.group(1) if match else None
    if value is None:
        match = _CONVERSATION_ID.match(text.strip())
        value = match.group(1) if match else None
    try:
        return str(uuid.UUID(value)) if value else None
    except ValueError:
        return None


class OpenHandsStreamImporter(ReplacedWhenChanged, Importer):
    """A saved ``openhands --headless --json`` run."""

    name = "openhands-stream"
    agent = "OpenHands (openhands --headless --json)"
    indexes = "messages, actions (tool calls, thoughts, reasoning), observations, rejections, errors"
    source: str | None = "openhands"
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """JSONL whose objects are all agent SDK events, at least one of a known kind (an event
        file of a stored conversation is one pretty-printed object: the ``openhands`` reader's)."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects or not all(_is_event(o) for o in objects):
            return 0.0
        return 0.9 if any(o["kind"] in _KINDS for o in objects) else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        events: list[tuple[int, dict[str, Any]]] = []
        problems: list[Problem] = []
        conversation: str | None = None
        for line, obj, text in _lines(self):
            if obj is None and text.lstrip().startswith("{"):
                problems.append(Problem(line, "not a complete JSON object (malformed or too long; skipped)"))
            elif obj is None:  # the CLI's closing text (summary box, goodbye, ids): not events
                conversation = _conversation_id(text) or conversation
            elif not _is_event(obj):
                problems.append(Problem(line, "not an OpenHands event (no kind / id / source; skipped)"))
            else:
                events.append((line, obj))
                value = obj.get("value")
                if obj.get("kind") == "ConversationStateUpdateEvent" and isinstance(value, dict):
                    conversation = conversation or opt_str(value.get("id"))  # a full-state snapshot
        session_id = conversation or self.path.stem
        stamps = [s for s in (_stamp(e.get("timestamp")) for _, e in events) if s is not None]
        yield SessionRecord(id=session_id, source=self.source, started_at=min(stamps, default=None))
        yield from problems
        reported: set[str] = set()
        for line, event in events:
            found: list[Problem] = []
            where = f"line {line}"
            rows: list[MessageRecord] = safe_rows(event_rows, found, line, where, event, session_id, where, found)
            for row in rows:
                row.line = line
            yield from rows
            kind = str(event.get("kind"))
            for problem in found:
                if "unknown event kind" in problem.error:  # once per file, with its line
                    if kind in reported:
                        continue
                    reported.add(kind)
                    problem = Problem(line, f"unknown event kind {kind!r} (skipped; reported once per file)")
                yield problem
        yield Checkpoint(str(self.path.stat().st_size), 0)


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _lines(importer: Importer) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """``(line_no, object or None, text)`` for every non-blank line: the object when the line is
    one JSON object, else None and the line's text (cut to a few KB: only short lines matter).
    A line longer than the cap is drained unread and given as text (reported as malformed)."""
    with open(importer.path, "rb") as handle:
        line_no = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            line_no += 1
            importer.hasher.update(raw)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):
                    raw = handle.readline(1 << 20)
                    importer.hasher.update(raw)
                yield line_no, None, "{ (a line too long to read)"
                continue
            if raw.isspace():
                continue
            text = raw.decode("utf-8-sig" if line_no == 1 else "utf-8", errors="replace")
            try:
                obj = json.loads(text) if text.lstrip().startswith("{") else None
            except (ValueError, RecursionError):
                obj = None
            yield line_no, obj if isinstance(obj, dict) else None, text[:4096]
