"""``claude-code-web``: a Claude Code on the web (cloud) session, exported as one JSON document.

The web sessions API and the tools that save from it (e.g. ``claude-code-transcripts``
by Simon Willison) write ``{"id" | "session_id", "title"?, "created_at"?,
"loglines": [...]}`` where ``loglines`` are the very lines a local Claude Code
transcript holds (``type`` user/assistant/system/summary with ``message``,
``uuid``, ``sessionId``, ``timestamp``, tool_use/tool_result blocks, thinking).
They are read by the Claude Code reader, line ``n`` being ``loglines[n-1]``; the
document's id names the session when its lines carry no ``sessionId``, and its
``title`` titles it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    Problem,
    SessionRecord,
    SourceState,
    head_chars,
    opt_str,
    safe_timestamp,
)
from hermes_store.sessions.importers.claude_code import _Reader
from hermes_store.sessions.importers.doc_common import (
    NamedByDocument,
    ReplacedWhenChanged,
    load_document,
    shape_guarded,
)


def _is_logline(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("type"), str) and (
        isinstance(obj.get("message"), dict) or "uuid" in obj or "leafUuid" in obj)


class ClaudeWebImporter(NamedByDocument, ReplacedWhenChanged, Importer):
    """A Claude Code web/cloud session document (``{"loglines": [Claude Code lines]}``)."""

    name = "claude-code-web"
    agent = "Claude Code on the web (session export)"
    indexes = "the loglines as a Claude Code transcript: messages, thinking, tool calls and results, title"
    source = "claude-code"
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """One JSON object whose ``loglines`` is a list of Claude Code lines."""
        if head.is_sqlite or head.data.lstrip()[:1] != b"{":
            return 0.0
        doc = head.document()
        lines = doc.get("loglines") if isinstance(doc, dict) else None
        if not isinstance(lines, list) or not lines:
            return 0.0
        return 0.9 if all(_is_logline(obj) for obj in lines[:8]) else 0.0


    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if not isinstance(doc, dict) or not isinstance(doc.get("loglines"), list):
            yield Problem(1, "expected an object with a 'loglines' list")
            return
        self.doc_id = opt_str(doc.get("session_id")) or opt_str(doc.get("id"))
        reader = _Reader(self, state)  # type: ignore[arg-type]
        sessions: list[str] = []
        for index, obj in enumerate(doc["loglines"], 1):
            if not isinstance(obj, dict):
                yield Problem(index, f"loglines[{index - 1}]: expected an object")
                continue
            for event in reader.handle(obj, index) or ():
                if isinstance(event, SessionRecord) and event.id not in sessions:
                    sessions.append(event.id)
                yield event
        yield from reader.finish()
        main = sessions[0] if sessions else self.default_session_id()
        title = opt_str(doc.get("title")) or opt_str(doc.get("name"))
        times: list[Problem] = []
        started = safe_timestamp(doc.get("created_at"), None, times)
        if title or started:
            yield SessionRecord(id=main, title=head_chars(" ".join(title.split()), 200) if title else None,
                                started_at=started, meta={"web_session": True})
        yield from times
        yield Checkpoint("done")


