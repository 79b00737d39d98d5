"""``hermes-json``: Hermes CLI snapshots ``sessions/session_<id>.json``.

One JSON object: ``session_id``, ``model``, ``platform``, ``session_start``,
``last_updated`` and ``messages``. Snapshots only ever grow, so a changed file
is re-read and the messages past those already indexed are added.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

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
from hermes_store.sessions.importers.doc_common import load_text
from hermes_store.sessions.importers.openai_common import (
    ToolNames,
    assistant_thinking,
    is_message_like,
    openai_message,
)

MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024


class HermesJsonImporter(Importer):
    """Whole-file JSON snapshots; messages beyond the stored count are appended."""

    name = "hermes-json"
    agent = "Hermes Agent (session snapshots)"
    indexes = "messages with tool calls; model, platform, start/end times; session_meta entries as metadata"
    source = "cli"
    resumable_by_offset = False
    snapshot = True  # the loader skips the messages a session already holds
    default_locations = {"linux": ("{hermes_home}/sessions/session_*.json",),
                         "darwin": ("{hermes_home}/sessions/session_*.json",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """One JSON object with ``session_id``, ``session_start``/``last_updated`` and ``messages``."""
        doc = head.document()
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            return 0.0
        if "session_id" in doc and ("session_start" in doc or "last_updated" in doc):
            return 0.95
        if head.path.name.startswith("session_") and all(
                is_message_like(m) or _is_meta(m) for m in doc["messages"][:8]):
            return 0.7
        return 0.0

    def default_session_id(self) -> str:
        stem = self.path.stem
        return stem[len("session_"):] if stem.startswith("session_") else stem

    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        loaded = load_text(self, problems, MAX_SNAPSHOT_BYTES, "snapshot")
        yield from problems
        if loaded is None:
            return
        text, size = loaded
        try:
            doc = json.loads(text, strict=False)
        except ValueError as exc:
            yield Problem(getattr(exc, "lineno", None), f"malformed JSON: {exc}")
            return
        except RecursionError:
            yield Problem(None, "malformed JSON: nested too deeply")
            return
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            yield Problem(1, "expected an object with a 'messages' list")
            return
        problems: list[Problem] = []
        session_id = opt_str(doc.get("session_id")) or self.default_session_id()
        extra = {k: doc[k] for k in ("base_url", "message_count", "session_key") if k in doc}
        yield SessionRecord(
            id=session_id,
            source=opt_str(doc.get("platform")) or "cli",
            model=opt_str(doc.get("model")),
            title=opt_str(doc.get("title")),
            workspace=opt_str(doc.get("cwd")),
            started_at=safe_timestamp(doc.get("session_start"), None, problems),
            ended_at=safe_timestamp(doc.get("last_updated"), None, problems),
            parent_session_id=opt_str(doc.get("parent_session_id")),
            meta=extra,
        )
        tools = ToolNames()
        for index, message in enumerate(doc["messages"]):
            where = f"messages[{index}]"
            if not isinstance(message, dict):
                problems.append(Problem(None, f"{where}: expected an object"))
                continue
            if _is_meta(message):  # a session_meta entry is metadata, not a message
                record = _meta_record(session_id, message, problems)
                if doc.get("session_start"):
                    record.started_at = None  # the snapshot's own start time wins
                yield record
                continue
            before = len(problems)
            record = openai_message(message, session_id, None, tools, problems)
            for problem in problems[before:]:
                problem.error = f"{where}: {problem.error}"
            if record is not None:
                record.line = index
                thinking = assistant_thinking(message) if record.role == "assistant" else None
                if thinking:
                    yield MessageRecord(session_id, "reasoning", thinking, timestamp=record.timestamp, line=index)
                yield record
        yield from problems
        yield Checkpoint(str(size), 0)


def _is_meta(message: object) -> bool:
    return isinstance(message, dict) and message.get("role") == "session_meta"


def _meta_record(session_id: str, entry: dict, problems: list[Problem]) -> SessionRecord:
    """The session fields a ``session_meta`` entry inside ``messages`` carries."""
    taken = ("role", "model", "platform", "source", "timestamp", "cwd", "title", "parent_session_id")
    return SessionRecord(
        id=session_id,
        source=opt_str(entry.get("platform")) or opt_str(entry.get("source")),
        model=opt_str(entry.get("model")),
        workspace=opt_str(entry.get("cwd")),
        title=opt_str(entry.get("title")),
        parent_session_id=opt_str(entry.get("parent_session_id")),
        started_at=safe_timestamp(entry.get("timestamp"), None, problems),
        meta={k: v for k, v in entry.items() if k not in taken},
    )
