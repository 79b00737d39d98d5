"""``hermes-db``: a Hermes ``state.db`` (opened read-only; any schema version).

Sessions are upserted on every run (titles and end times change); messages are
read incrementally by native id. Lineage comes from ``parent_session_id``.
Rows with ``active=0`` are skipped unless they are compaction archives
(``compacted=1``). Multimodal ``"\\x00json:"`` contents are flattened to text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hermes_store.foreign_db import ForeignDB, ForeignDBError, quote_identifier
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
)
from hermes_store.sessions.importers.openai_common import ToolNames

_SESSION_EXTRA = ("end_reason", "user_id", "system_prompt_hash", "input_tokens", "output_tokens",
                  "tool_call_count", "estimated_cost_usd", "git_branch", "profile_name", "archived",
                  "pinned", "title_source")
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
    agent = "Hermes Agent (state.db)"
    indexes = ("every session (lineage, titles, sources) and active message incl. tool calls; "
               "compaction archives kept, rewound rows skipped; read-only, incremental by id")
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
        sessions table (count, summed end times and title lengths). None when the file is
        not a state.db. Opened read-only; waits at most ``busy_seconds`` on a lock."""
        with ForeignDB(path, busy_seconds=busy_seconds) as db:
            if not (db.table_exists("sessions") and db.table_exists("messages")):
                return None
            scols = set(_columns(db, "sessions"))
            max_id = db.scalar("SELECT COALESCE(MAX(id), 0) FROM messages")
            row = db.query_one(_SIGNATURE_SQL[("ended_at" in scols, "title" in scols)])
        return (max_id, row["n"], row["ended"], row["titles"]) if row is not None else (max_id,)

    def is_rewritten(self, state: SourceState) -> bool:
        """True when the database was replaced: its message ids no longer reach the resume point."""
        if not state.resume_at:
            return False
        try:
            with ForeignDB(self.path) as db:
                max_id = int(db.scalar("SELECT COALESCE(MAX(id), 0) FROM messages") or 0)
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
        for row in db.query(f"SELECT {quoted} FROM sessions ORDER BY started_at, id", table="sessions", key="id"):
            yield _session_record(row, scols)
        tools = ToolNames()
        wanted = [c for c in ("id", "session_id", "role", "content", "tool_call_id", "tool_calls",
                              "tool_name", "timestamp", "active", "compacted") if c in mcols]
        select = f"SELECT {', '.join(wanted)} FROM messages WHERE id > ? ORDER BY id LIMIT {CHUNK}"
        skipped = 0
        while True:
            rows = db.query(select, (last_id,), table="messages", key="id")
            if not rows:
                break
            for row in rows:
                last_id = int(row["id"])
                active = row.get("active", 1)
                if active == 0 and not row.get("compacted"):
                    skipped += 1
                    continue
                if row.get("tool_calls"):
                    tools.remember(row["tool_calls"])
                role = str(row.get("role") or "user")
                tool_name = opt_str(row.get("tool_name"))
                if role == "tool" and tool_name is None:
                    tool_name = tools.lookup(opt_str(row.get("tool_call_id")))
                timestamp = row.get("timestamp")
                yield MessageRecord(
                    session_id=str(row["session_id"]),
                    role=role,
                    content=flatten_content(row.get("content")),
                    tool_name=tool_name,
                    tool_calls=opt_str(row.get("tool_calls")),
                    tool_call_id=opt_str(row.get("tool_call_id")),
                    timestamp=float(timestamp) if isinstance(timestamp, (int, float)) else None,
                    line=last_id,
                )
                yield Checkpoint(str(last_id))
        state.meta["inactive_skipped"] = int(state.meta.get("inactive_skipped", 0)) + skipped
        yield Checkpoint(str(last_id))


def _message_columns(path) -> frozenset[str]:
    """Column names of the ``messages`` table (empty when unreadable); used by the sniff."""
    try:
        with ForeignDB(path, busy_seconds=0.2) as db:
            return frozenset(db.columns("messages"))
    except Exception:  # a sniff never raises
        return frozenset()


def _columns(db: ForeignDB, table: str) -> list[str]:
    return db.columns(table)


def _session_record(row: dict[str, Any], columns: list[str]) -> SessionRecord:
    meta = {k: row[k] for k in _SESSION_EXTRA if k in row and row[k] not in (None, "", 0)}
    config = row.get("model_config")
    if config:
        try:
            decoded = json.loads(config)
        except (TypeError, ValueError):
            decoded = None
        if isinstance(decoded, dict):
            meta.update({k: decoded[k] for k in ("_branched_from", "_delegate_from", "_reset_from")
                         if k in decoded})
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
