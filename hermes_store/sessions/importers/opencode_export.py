"""``opencode-jsonl`` and ``opencode-export``: OpenCode sessions exported from the CLI or SDK.

``opencode export [sessionID]`` (``packages/opencode/src/cli/cmd/export.ts``) prints one
pretty-printed JSON document, ``{"info": <session>, "messages": [{"info", "parts"}],
"todos"?: [...]}`` (``todos`` since 2025; no conversation): the ``opencode-export``
reader, re-read whole when the file changes.

``opencode-jsonl``: OpenCode messages written one per line.

What ``opencode export`` and the SDK's ``session.messages()`` give, written as
JSONL: each line ``{"info": {id: "msg_...", sessionID: "ses_...", role,
time: {created, completed?} (ms), modelID?, providerID?}, "parts": [...]}`` with
the same parts as the storage tree (:mod:`.opencode_json`: ``text``,
``reasoning``, ``tool`` with ``state.input``/``output``, ``file``, ...). A line
whose ``info`` is a session (``{id: "ses_...", title, directory, parentID?,
time}``, no ``role``) names the session. The session id and times come from the
lines, never from the file name.
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
    opt_str,
    read_jsonl,
)
from hermes_store.sessions.importers.doc_common import (
    NamedByDocument,
    ReplacedWhenChanged,
    load_document,
    safe_rows,
    shape_guarded,
)
from hermes_store.sessions.importers.opencode_json import (
    _time,
    message_rows,
    model_of,
    session_record,
)


def _is_message(obj: dict[str, Any]) -> bool:
    info = obj.get("info")
    return (isinstance(info, dict) and isinstance(obj.get("parts"), list)
            and isinstance(info.get("sessionID"), str) and info.get("role") in ("user", "assistant"))


def _is_session(obj: dict[str, Any]) -> bool:
    info = obj.get("info")
    return (isinstance(info, dict) and "role" not in info and str(info.get("id", "")).startswith("ses_")
            and "parts" not in obj)


class OpenCodeJsonlImporter(Importer):
    """OpenCode messages as JSONL (``{info, parts}`` per line, as ``opencode export`` gives them)."""

    name = "opencode-jsonl"
    agent = "OpenCode (exported messages, JSONL)"
    indexes = "every message's parts (text, reasoning, tool calls with input and output), session id, title, times"
    source = "opencode"

    @classmethod
    def sniff(cls, head: Head) -> float:
        """JSONL of ``{info: {sessionID, role}, parts}`` lines (and optionally a session line)."""
        objects = head.objects()
        if not objects or not any(_is_message(o) for o in objects):
            return 0.0
        return 0.9 if all(_is_message(o) or _is_session(o) for o in objects) else 0.0

    def read(self, state: SourceState) -> Iterator[Event]:
        seen: set[str] = set()

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            problems: list[Problem] = []
            if _is_session(obj):
                seen.add(str(obj["info"]["id"]))
                yield session_record(obj["info"], self.source_label(), {})
                return
            if not _is_message(obj):
                yield Problem(line, "expected {info: {sessionID, role}, parts} (skipped)")
                return
            info = obj["info"]
            session_id = str(info["sessionID"])
            if session_id not in seen:
                seen.add(session_id)
                yield SessionRecord(id=session_id, started_at=_time(info, "created"),
                                    workspace=opt_str((info.get("path") or {}).get("cwd"))
                                    if isinstance(info.get("path"), dict) else None)
            model = model_of(info)
            if model:
                yield SessionRecord(id=session_id, model=model)
            for row in message_rows(session_id, info, obj["parts"], f"line {line}", problems):
                row.line = line
                yield row
            for problem in problems:
                yield Problem(line, problem.error)

        yield from read_jsonl(self, state, handle)


def _is_session_info(info: Any) -> bool:
    return isinstance(info, dict) and "role" not in info and str(info.get("id", "")).startswith("ses_")


class OpenCodeExportImporter(NamedByDocument, ReplacedWhenChanged, Importer):
    """``opencode export`` output: one ``{info, messages: [{info, parts}], todos?}`` document."""

    name = "opencode-export"
    agent = "OpenCode (opencode export)"
    indexes = "the exported session: every message's parts (text, reasoning, tool calls with input and output), " \
              "title, directory, parent, times"
    source: str | None = "opencode"
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """One object whose ``info`` is a session (``ses_…``, no role) and whose ``messages`` are
        ``{info: {sessionID, role}, parts}``."""
        if head.is_sqlite or head.data.lstrip()[:1] != b"{":
            return 0.0
        doc = head.document()
        if not isinstance(doc, dict) or not _is_session_info(doc.get("info")):
            return 0.0
        messages = doc.get("messages")
        if not isinstance(messages, list):
            return 0.0
        sample = [m for m in messages[:20] if isinstance(m, dict)]
        return 0.95 if sample and all(_is_message(m) for m in sample) else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if not isinstance(doc, dict) or not _is_session_info(doc.get("info")) \
                or not isinstance(doc.get("messages"), list):
            yield Problem(1, "expected {info: <session ses_...>, messages: [{info, parts}]}")
            return
        info = doc["info"]
        self.doc_id = str(info["id"])
        yield session_record(info, self.source_label(), {})
        model_seen = False
        for index, message in enumerate(doc["messages"]):
            where = f"messages[{index}]"
            if not _is_message(message):
                yield Problem(None, f"{where}: expected {{info: {{sessionID, role}}, parts}} (skipped)")
                continue
            header = message["info"]
            if not model_seen and model_of(header):
                model_seen = True
                yield SessionRecord(id=self.doc_id, model=model_of(header))
            rows_problems: list[Problem] = []
            yield from safe_rows(message_rows, rows_problems, None, where, self.doc_id, header,
                                 message["parts"], where, rows_problems)
            yield from rows_problems  # each names its message and part (``where``)
        yield Checkpoint("done")
