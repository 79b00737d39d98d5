"""``hermes-jsonl``: Hermes ``sessions/<session_id>.jsonl`` transcripts (append-only).

The first line may be ``{"role": "session_meta", "model", "platform", "tools",
"timestamp"}``; the other lines are OpenAI-style messages. An assistant message's thinking
(``reasoning``, ``reasoning_content`` or ``reasoning_details``, which Hermes keeps beside the
reply) is a ``reasoning`` row before it, as in the ``session_*.json`` snapshots. The session id is
the file stem. Appended lines are picked up incrementally (byte offset).
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
    opt_str,
    read_jsonl,
    safe_timestamp,
)
from hermes_store.sessions.importers.openai_common import (
    HERMES_ID,
    ToolNames,
    assistant_thinking,
    is_message_like,
    openai_message,
)


class HermesJsonlImporter(Importer):
    """Hermes per-session JSONL transcripts."""

    name = "hermes-jsonl"
    agent = "Hermes Agent (session JSONL)"
    indexes = ("OpenAI-style messages with tool calls, the assistant's thinking (role reasoning); the "
               "session_meta line as session fields")
    source = "cli"
    reader = 2  # 2: an assistant message's reasoning / reasoning_details as a reasoning row (2026-12-07)
    default_locations = {"linux": ("{hermes_home}/sessions/*.jsonl",),
                         "darwin": ("{hermes_home}/sessions/*.jsonl",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``session_meta`` first line, or OpenAI-style messages in a Hermes-named file."""
        objects = head.objects()
        if not objects:
            # a Hermes session file whose first lines are unreadable is still one by its name
            return 0.6 if head.suffix == ".jsonl" and HERMES_ID.match(head.path.stem) else 0.0
        if objects[0].get("role") == "session_meta":
            return 0.95
        if HERMES_ID.match(head.path.stem) and all(is_message_like(o) for o in objects):
            return 0.8
        return 0.0

    def read(self, state: SourceState) -> Iterator[Event]:
        session_id = self.default_session_id()
        tools = ToolNames(state.meta)
        if not state.resume_at:
            yield SessionRecord(id=session_id, source="cli")

        def handle(obj: dict[str, Any], line: int) -> Event | list[Event] | None:
            problems: list[Problem] = []
            if obj.get("role") == "session_meta":
                meta = {k: v for k, v in obj.items() if k not in ("role", "model", "platform", "timestamp")}
                return [SessionRecord(
                    id=session_id,
                    source=opt_str(obj.get("platform")) or opt_str(obj.get("source")),
                    model=opt_str(obj.get("model")),
                    started_at=safe_timestamp(obj.get("timestamp"), line, problems),
                    workspace=opt_str(obj.get("cwd")),
                    title=opt_str(obj.get("title")),
                    parent_session_id=opt_str(obj.get("parent_session_id")),
                    meta=meta,
                ), *problems]
            record = openai_message(obj, session_id, line, tools, problems)
            thinking = assistant_thinking(obj) if record is not None and record.role == "assistant" else None
            if thinking:  # the thinking Hermes keeps beside the reply: a reasoning row before it
                found: list[Event] = [MessageRecord(session_id, "reasoning", thinking,
                                                    timestamp=record.timestamp, line=line), record]
                return [*found, *problems]
            if not problems:
                return record
            return [record, *problems] if record is not None else problems

        yield from read_jsonl(self, state, handle)
