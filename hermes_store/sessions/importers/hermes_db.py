"""``hermes-db``: a Hermes ``state.db`` (opened read-only; any schema version).

Sessions are upserted on every run (titles and end times change); messages are
read incrementally by native id. Lineage comes from ``parent_session_id``.
Rows with ``active=0`` are skipped unless they are compaction archives
(``compacted=1``); how many of a session's messages are such archives is kept in its meta
(``compacted_messages``) for ``session_search``. A session whose ``rewind_count`` changed since
the last read (Hermes' ``/rewind`` deactivates rows already imported) is imported again, so
the rewound rows leave the index as they leave Hermes' own search. Multimodal ``"\\x00json:"`` contents are flattened to text.

Schema 31 (the newest Hermes): ``sessions.auto_archived`` is kept in the session's meta
beside ``archived``; a busy-queue accept row (``display_metadata._queued_prompt``) is never
a message of its own: the drain deactivates it and writes an unmarked copy at the end of
the transcript (imported then), and a row still marked is one a restart discards, so
marked rows are skipped whether active or not (``state.meta["queued_skipped"]``). Every
session's end reason is classified as Hermes does (``meta["end_kind"]``: ``boundary``
for a deliberate reset or /new, ``automatic`` for cleanup ends, ``recoverable`` among them
counting as resumable, ``compression``), and a pre-marker reset child (same non-empty
``session_key`` as a parent that ended at a reset boundary) gets ``meta["_reset_from"]``
like a marked one, so it is its own conversation rather than its parent's continuation.
A ``display_kind='hidden'`` row is model-facing scaffolding the person never saw (an
interrupted turn's placeholder, a delegation result handed to the model); Hermes keeps it out
of every search and preview, so it is never imported (``state.meta["hidden_skipped"]``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

from hermes_store.db import query_in_chunks
from hermes_store.foreign_db import ForeignDB, ForeignDBError, quote_identifier
from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    Rewritten,
    SessionRecord,
    SourceState,
    flatten_content,
    opt_str,
)
from hermes_store.sessions.importers.openai_common import ToolNames, assistant_thinking

_SESSION_EXTRA = ("end_reason", "user_id", "system_prompt_hash", "input_tokens", "output_tokens",
                  "tool_call_count", "estimated_cost_usd", "git_branch", "profile_name", "archived",
                  "pinned", "title_source", "auto_archived")
# Hermes' end-reason taxonomy (hermes_state_common, schema 31).
RESET_END_REASONS = frozenset({"session_reset", "session_switch", "idle", "daily", "suspended",
                               "resume_pending_expired"})
BOUNDARY_END_REASONS = RESET_END_REASONS | {"new_session"}
RECOVERABLE_END_REASONS = frozenset({"agent_close", "ws_orphan_reap", "superseded_by_resume",
                                     "startup_orphan_reap"})
AUTOMATIC_END_REASONS = RECOVERABLE_END_REASONS | {"tui_shutdown", "ws_disconnect", "idle_timeout", "lru_evict"}
QUEUED_PROMPT_KEY = "_queued_prompt"  # display_metadata flag of a busy-queue accept row
# an assistant row's thinking (hermes_state.append_message; the lists as JSON text)
THINKING_COLUMNS = ("reasoning", "reasoning_content", "reasoning_details", "codex_reasoning_items")
HIDDEN_DISPLAY_KIND = "hidden"  # display_kind of model-facing scaffolding Hermes never shows
COMPACTED_META_KEY = "compacted_messages"  # session meta: its leading messages archived by compaction
REWINDS_KEY = "rewinds"  # source state: {session id: sessions.rewind_count} as last read (non-zero only)


def end_kind(reason: Any) -> str | None:
    """Hermes' class of an end reason: ``compression``, ``boundary`` (a deliberate reset or
    /new), ``recoverable`` (an accidental end recovery may resume), ``automatic`` (other
    cleanup), ``other``; None for a session that has not ended."""
    if not isinstance(reason, str) or not reason:
        return None
    if reason == "compression":
        return "compression"
    if reason in BOUNDARY_END_REASONS:
        return "boundary"
    if reason in RECOVERABLE_END_REASONS:
        return "recoverable"
    return "automatic" if reason in AUTOMATIC_END_REASONS else "other"


def is_queued_prompt(display_metadata: Any) -> bool:
    """True for a row Hermes' busy queue stamped ``_queued_prompt`` (JSON text; bad JSON is not)."""
    if not display_metadata or not isinstance(display_metadata, str) or QUEUED_PROMPT_KEY not in display_metadata:
        return False
    try:
        decoded = json.loads(display_metadata)
    except ValueError:
        return False
    return isinstance(decoded, dict) and bool(decoded.get(QUEUED_PROMPT_KEY))
CHUNK = 5000
# The sessions aggregate of HermesDbImporter.signature, by (has ended_at, has title).
_SIGNATURE_SQL = {
    (True, True): "SELECT count(*) AS n, total(COALESCE(ended_at, 0)) AS ended, "
                  "total(length(COALESCE(title, ''))) AS titles FROM sessions",
    (True, False): "SELECT count(*) AS n, total(COALESCE(ended_at, 0)) AS ended, 0 AS titles FROM sessions",
    (False, True): "SELECT count(*) AS n, 0 AS ended, total(length(COALESCE(title, ''))) AS titles FROM sessions",
    (False, False): "SELECT count(*) AS n, 0 AS ended, 0 AS titles FROM sessions",
}


class HermesDbImporter(Importer):
    """A Hermes SQLite ``state.db``; incremental by message id."""

    name = "hermes-db"
    reader = 2  # hidden display rows left out (2026-12-06)
    agent = "Hermes Agent (state.db)"
    indexes = ("every session (lineage, titles, sources) and active message incl. tool calls; "
               "compaction archives kept, rewound and hidden scaffolding rows skipped; read-only, "
               "incremental by id")
    source = "cli"
    skip_when_unchanged = False  # WAL writes do not touch the main file's mtime
    resumable_by_offset = False
    derives_end_time = False  # Hermes records ended_at itself; an open session stays open
    default_locations = {"linux": ("{hermes_home}/state.db",), "darwin": ("{hermes_home}/state.db",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A SQLite file with Hermes' ``sessions`` and ``messages`` tables (not our own store)."""
        if not head.is_sqlite:
            return 0.0
        tables = head.sqlite_tables()
        if not {"sessions", "messages"} <= tables:
            return 0.0
        if "sources" in tables and "fts_deferred" in tables:
            return 0.2  # a hermes-store index database, not a Hermes state.db
        if "content" not in _message_columns(head.path):
            return 0.1  # same table names, other columns (e.g. Goose's sessions.db: content_json)
        return 0.95

    @staticmethod
    def signature(path: Any, *, busy_seconds: float = 1.0) -> tuple[Any, ...] | None:
        """What changes when Hermes writes: the largest message id and an aggregate of the
        sessions table (count, summed end times, title lengths and rewinds). None when the file
        is not a state.db. Opened read-only; waits at most ``busy_seconds`` on a lock."""
        with ForeignDB(path, busy_seconds=busy_seconds) as db:
            if not (db.table_exists("sessions") and db.table_exists("messages")):
                return None
            scols = set(_columns(db, "sessions"))
            max_id = db.scalar("SELECT COALESCE(MAX(id), 0) FROM messages")
            row = db.query_one(_SIGNATURE_SQL[("ended_at" in scols, "title" in scols)])
            rewinds = db.scalar("SELECT total(rewind_count) FROM sessions") if "rewind_count" in scols else 0
        return (max_id, row["n"], row["ended"], row["titles"], rewinds) if row is not None else (max_id,)

    def is_rewritten(self, state: SourceState) -> bool:
        """True when the database was replaced: its message ids no longer reach the resume point,
        or (schema 31) the row at the resume point no longer carries the ``message_uid`` read
        there, so ids were renumbered and reading on by id would import messages twice."""
        if not state.resume_at:
            return False
        try:
            with ForeignDB(self.path) as db:
                max_id = int(db.scalar("SELECT COALESCE(MAX(id), 0) FROM messages") or 0)
                cursor_uid = state.meta.get("cursor_uid")
                if cursor_uid and max_id >= int(state.resume_at) and "message_uid" in _columns(db, "messages"):
                    found = db.scalar("SELECT message_uid FROM messages WHERE id = ?", (int(state.resume_at),))
                    return found != cursor_uid
        except Exception:  # unreadable now: read() reports why
            return False
        return max_id < int(state.resume_at)

    def read(self, state: SourceState) -> Iterator[Event]:
        try:
            db = ForeignDB(self.path)
        except ForeignDBError as exc:
            yield Problem(None, str(exc))
            return
        try:
            for event in self._read(db, state):
                for row, message in db.drain_problems():
                    yield Problem(row, message)
                yield event
        except ForeignDBError as exc:  # this input stops here; what was read is kept, the run goes on
            yield Problem(None, str(exc))
        finally:
            db.close()
        for row, message in db.drain_problems():
            yield Problem(row, message)

    def _read(self, db: ForeignDB, state: SourceState) -> Iterator[Event]:
        if not (db.table_exists("sessions") and db.table_exists("messages")):
            yield Problem(None, "not a Hermes state.db (no sessions/messages tables)")
            return
        scols = _columns(db, "sessions")
        mcols = _columns(db, "messages")
        last_id = int(state.resume_at or 0)
        quoted = ", ".join(quote_identifier(c) for c in scols)
        rows = db.query(f"SELECT {quoted} FROM sessions ORDER BY started_at, id", table="sessions", key="id")
        by_id = {str(r["id"]): r for r in rows}
        rewinds = {str(r["id"]): int(r["rewind_count"]) for r in rows
                   if isinstance(r.get("rewind_count"), int) and r["rewind_count"] > 0}
        seen = state.meta.get(REWINDS_KEY) or {}
        # Hermes' /rewind deactivates rows read before (hermes_state_rewind.rewind_to_message):
        # such a session is imported again, as a first import would read it.
        rewound = [sid for sid, n in rewinds.items() if last_id and n != seen.get(sid, 0)]
        for session_id in rewound:
            yield Rewritten(session_id)
        archived = _compaction_archives(db, mcols, last_id, also=rewound)
        for row in rows:
            yield _session_record(row, scols, by_id, archived.get(str(row["id"]), 0))
        tools = ToolNames()
        wanted = [c for c in ("id", "session_id", "role", "content", "tool_call_id", "tool_calls",
                              "tool_name", "timestamp", "active", "compacted", "display_kind",
                              "display_metadata", "message_uid") + THINKING_COLUMNS
                  if c in mcols]
        again = query_in_chunks(partial(db.query, table="messages"),
                                f"SELECT {', '.join(wanted)} FROM messages WHERE session_id IN ({{marks}})"
                                " AND id <= ?", rewound, after=(last_id,)) if rewound else []
        for row in sorted(again, key=lambda r: int(r["id"])):
            if _skip_reason(row) is None:
                yield from _message_records(row, tools, int(row["id"]))
        state.meta[REWINDS_KEY] = rewinds
        select = f"SELECT {', '.join(wanted)} FROM messages WHERE id > ? ORDER BY id LIMIT {CHUNK}"
        skipped = queued = hidden = 0
        cursor_uid = None
        while True:
            rows = db.query(select, (last_id,), table="messages", key="id")
            if not rows:
                break
            for row in rows:
                last_id = int(row["id"])
                cursor_uid = row.get("message_uid")
                reason = _skip_reason(row)
                if reason is not None:
                    skipped += reason == "inactive"
                    queued += reason == "queued"
                    hidden += reason == "hidden"
                    continue
                yield from _message_records(row, tools, last_id)
                yield Checkpoint(str(last_id))
        state.meta["inactive_skipped"] = int(state.meta.get("inactive_skipped", 0)) + skipped
        if cursor_uid:  # the uid at the resume point: is_rewritten checks it is still there
            state.meta["cursor_uid"] = str(cursor_uid)
        if queued:
            state.meta["queued_skipped"] = int(state.meta.get("queued_skipped", 0)) + queued
        if hidden:
            state.meta["hidden_skipped"] = int(state.meta.get("hidden_skipped", 0)) + hidden
        yield Checkpoint(str(last_id))


def _message_records(row: dict[str, Any], tools: ToolNames, line: int) -> list[MessageRecord]:
    """The rows of a ``messages`` row: an assistant's thinking (its ``reasoning`` columns) as a
    ``reasoning`` row first, as ``hermes-jsonl`` and ``hermes-json`` read it, then the message."""
    message = _message_record(row, tools, line)
    thinking = assistant_thinking(row) if message.role == "assistant" else None
    if not thinking:
        return [message]
    uid = f"{message.message_uid}:reasoning" if message.message_uid else None
    return [MessageRecord(session_id=message.session_id, role="reasoning", content=thinking,
                          timestamp=message.timestamp, line=line, message_uid=uid), message]


def _message_record(row: dict[str, Any], tools: ToolNames, line: int) -> MessageRecord:
    """The message of a ``messages`` row (a tool result named after the call it answers)."""
    if row.get("tool_calls"):
        tools.remember(row["tool_calls"])
    role = str(row.get("role") or "user")
    tool_name = opt_str(row.get("tool_name"))
    if role == "tool" and tool_name is None:
        tool_name = tools.lookup(opt_str(row.get("tool_call_id")))
    timestamp = row.get("timestamp")
    return MessageRecord(
        session_id=str(row["session_id"]),
        role=role,
        content=flatten_content(row.get("content")),
        tool_name=tool_name,
        tool_calls=opt_str(row.get("tool_calls")),
        tool_call_id=opt_str(row.get("tool_call_id")),
        timestamp=float(timestamp) if isinstance(timestamp, (int, float)) else None,
        line=line,
        message_uid=opt_str(row.get("message_uid")),
    )


def _message_columns(path) -> frozenset[str]:
    """Column names of the ``messages`` table (empty when unreadable); used by the sniff."""
    try:
        with ForeignDB(path, busy_seconds=0.2) as db:
            return frozenset(db.columns("messages"))
    except Exception:  # a sniff never raises
        return frozenset()


def _columns(db: ForeignDB, table: str) -> list[str]:
    return db.columns(table)


def _skip_reason(row: dict[str, Any]) -> str | None:
    """Why a message row is not imported: ``inactive`` (rewound or undone: ``active=0`` and not a
    compaction archive), ``queued`` (a busy-queue accept row: its drained copy is the message),
    ``hidden`` (scaffolding Hermes' search and previews leave out too); None when it is."""
    if row.get("active", 1) == 0 and not row.get("compacted"):
        return "inactive"
    if is_queued_prompt(row.get("display_metadata")):
        return "queued"
    return "hidden" if row.get("display_kind") == HIDDEN_DISPLAY_KIND else None


def _compaction_archives(db: ForeignDB, columns: list[str], since_id: int,
                         also: list[str] | None = None) -> dict[str, int]:
    """How many imported messages of each session written to after message ``since_id`` are
    in-place compaction archives (``active=0, compacted=1``). Hermes compacts by archiving every
    live row and appending the summary, so the archives are the session's first messages in id
    order: :data:`COMPACTED_META_KEY` counts them, and ``session_search`` lets a hit among them
    through on the calling session (its live context no longer holds them). A session not
    written to since keeps the count stored before (a compaction always appends rows)."""
    if not {"active", "compacted"} <= set(columns):
        return {}
    # the new rows by primary key, then each touched session through Hermes' session index
    touched = sorted({str(r["session_id"]) for r in
                      db.query("SELECT session_id FROM messages WHERE id > ?", (since_id,), table="messages")}
                     | set(also or ()))
    wanted = [c for c in ("session_id", "active", "compacted", "display_kind", "display_metadata") if c in columns]
    counts: dict[str, int] = {}
    for row in query_in_chunks(partial(db.query, table="messages"),
                               f"SELECT {', '.join(wanted)} FROM messages WHERE session_id IN ({{marks}}) "
                               "AND active = 0 AND compacted = 1", touched):
        if _skip_reason(row) is None:
            counts[str(row["session_id"])] = counts.get(str(row["session_id"]), 0) + 1
    return counts


def _session_record(row: dict[str, Any], columns: list[str],
                    by_id: dict[str, dict[str, Any]] | None = None, archived: int = 0) -> SessionRecord:
    meta = {k: row[k] for k in _SESSION_EXTRA if k in row and row[k] not in (None, "", 0)}
    if archived:
        meta[COMPACTED_META_KEY] = archived
    kind = end_kind(row.get("end_reason"))
    if kind is not None:
        meta["end_kind"] = kind
    config = row.get("model_config")
    if config:
        try:
            decoded = json.loads(config)
        except (TypeError, ValueError):
            decoded = None
        if isinstance(decoded, dict):
            meta.update({k: decoded[k] for k in ("_branched_from", "_delegate_from", "_reset_from")
                         if k in decoded})
    parent = (by_id or {}).get(str(row.get("parent_session_id") or ""))
    key = row.get("session_key")
    if (parent is not None and "_reset_from" not in meta and isinstance(key, str) and key
            and parent.get("end_reason") in RESET_END_REASONS and parent.get("session_key") == key):
        meta["_reset_from"] = str(parent["id"])  # Hermes' pre-marker reset-continuation heuristic
    return SessionRecord(
        id=str(row["id"]),
        source=opt_str(row.get("source")) or "cli",
        title=opt_str(row.get("title")),
        model=opt_str(row.get("model")),
        workspace=opt_str(row.get("cwd")),
        started_at=_float(row.get("started_at")),
        ended_at=_float(row.get("ended_at")),
        parent_session_id=opt_str(row.get("parent_session_id")),
        meta=meta,
    )


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None
