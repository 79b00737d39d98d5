"""Built-in memory's provenance, history and entry index on PostgreSQL (schema/pg/0002).

MEMORY.md / USER.md stay each home's own files, so every row here belongs to one home: the
``home`` column holds the writer label of the database object (``host:home``, see
:func:`hermes_store.pgdb.writer_label`), and every read and write is scoped to it. History
ids are numbered per home (the next id is taken under the home's advisory lock), so a home's
history keeps the ids it had in SQLite after ``migrate``.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from hermes_store.builtin.storage import BuiltinStorage
from hermes_store.pgquery import SEARCH_CONFIG, TsQueryError, tsquery_sql
from hermes_store.query import (
    HIGHLIGHT_CLOSE,
    HIGHLIGHT_OPEN,
    Match,
    QueryPlan,
    QueryRejected,
    run_plan,
)
from hermes_store.tokens import cjk_projection

# ``written_by``: the home's writer label, so history read from a shared store names its home
HISTORY_COLUMNS = ("id, target, action, old_text, new_text, at, origin, session_id, restored_from,"
                   " home AS written_by")
SNIPPET_WORDS = 24


class PgBuiltinStorage(BuiltinStorage):
    """:class:`BuiltinStorage` over a :class:`~hermes_store.pgdb.PgDatabase`, scoped to one home."""

    engine = "postgresql"

    def __init__(self, db: Any) -> None:
        super().__init__(db)
        self.home = db.writer

    def transaction(self) -> AbstractContextManager[Any]:
        return self.db.transaction()

    # ---- provenance

    def synced_hash(self, target: str) -> str | None:
        return self.db.scalar("SELECT content_hash FROM memory_sync WHERE home = %s AND target = %s",
                              (self.home, target))

    def set_synced_hash(self, target: str, digest: str, at: float) -> None:
        self.db.execute(
            "INSERT INTO memory_sync(home, target, content_hash, synced_at) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (home, target) DO UPDATE SET content_hash = excluded.content_hash,"
            " synced_at = excluded.synced_at", (self.home, target, digest, at))

    def entry_texts(self, target: str) -> list[str]:
        return [r["text"] for r in self.db.query(
            "SELECT text FROM memory_entries WHERE home = %s AND target = %s ORDER BY created_at, text",
            (self.home, target))]

    def entry_exists(self, target: str, text: str) -> bool:
        return self.db.scalar("SELECT 1 FROM memory_entries WHERE home = %s AND target = %s AND text = %s",
                              (self.home, target, text)) is not None

    def insert_entry(self, target: str, text: str, at: float, origin: str, session_id: str) -> None:
        self.db.execute(
            "INSERT INTO memory_entries(home, target, text, created_at, updated_at, created_origin,"
            " created_session, updated_origin, updated_session) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (home, target, text) DO NOTHING",
            (self.home, target, text, at, at, origin, session_id, origin, session_id))

    def delete_entry(self, target: str, text: str) -> None:
        self.db.execute("DELETE FROM memory_entries WHERE home = %s AND target = %s AND text = %s",
                        (self.home, target, text))

    def rename_entry(self, target: str, old: str, new: str) -> None:
        self.db.execute("UPDATE memory_entries SET text = %s WHERE home = %s AND target = %s AND text = %s",
                        (new, self.home, target, old))

    def touch_entry(self, target: str, text: str, at: float, origin: str, session_id: str) -> None:
        self.db.execute(
            "UPDATE memory_entries SET updated_at = %s, updated_origin = %s, updated_session = %s"
            " WHERE home = %s AND target = %s AND text = %s",
            (at, origin, session_id, self.home, target, text))

    def entry_rows(self, target: str) -> list[dict[str, Any]]:
        return self.db.query(
            "SELECT text, created_at, updated_at, created_origin, created_session,"
            " updated_origin, updated_session FROM memory_entries WHERE home = %s AND target = %s",
            (self.home, target))

    def append_history(self, target: str, action: str, old_text: str | None, new_text: str | None,
                       at: float, origin: str, session_id: str, restored_from: int | None) -> int:
        with self.db.transaction() as conn:
            # one writer per home at a time picks the next id (other homes are not held up)
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                         (0x48534D48, zlib.crc32(self.home.encode("utf-8")) - 2**31))
            row = conn.execute(
                "INSERT INTO memory_history(home, id, target, action, old_text, new_text, at, origin,"
                " session_id, restored_from) SELECT %s, coalesce(max(id), 0) + 1, %s, %s, %s, %s, %s,"
                " %s, %s, %s FROM memory_history WHERE home = %s RETURNING id",
                (self.home, target, action, old_text, new_text, at, origin, session_id, restored_from,
                 self.home)).fetchone()
        return int(row["id"])

    def history(self, target: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        sql = f"SELECT {HISTORY_COLUMNS} FROM memory_history WHERE home = %s"
        params: list[Any] = [self.home]
        if target is not None:
            sql += " AND target = %s"
            params.append(target)
        sql += " ORDER BY id DESC LIMIT %s"
        params.append(None if limit is None else int(limit))
        return self.db.query(sql, params)

    def history_event(self, event_id: int) -> dict[str, Any] | None:
        return self.db.query_one(f"SELECT {HISTORY_COLUMNS} FROM memory_history WHERE home = %s AND id = %s",
                                 (self.home, int(event_id)))

    # ---- entry search index

    def indexed_hash(self, target: str) -> str | None:
        return self.db.scalar("SELECT content_hash FROM builtin_index_files WHERE home = %s AND target = %s",
                              (self.home, target))

    def replace_index(self, target: str, digest: str, entries: Sequence[str], at: float) -> None:
        with self.db.transaction():
            self.db.execute("DELETE FROM builtin_index_entries WHERE home = %s AND target = %s",
                            (self.home, target))
            self.db.copy_rows(
                "COPY builtin_index_entries (home, target, entry_index, content, cjk) FROM STDIN",
                [(self.home, target, i, entry, cjk_projection(entry)) for i, entry in enumerate(entries, 1)])
            self.db.execute(
                "INSERT INTO builtin_index_files(home, target, content_hash, refreshed_at)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (home, target) DO UPDATE SET"
                " content_hash = excluded.content_hash, refreshed_at = excluded.refreshed_at",
                (self.home, target, digest, at))

    def _fetch(self, match: Match, count: int, targets: Sequence[str]) -> list[dict[str, Any]]:
        try:
            query_sql, params = tsquery_sql(match)
        except TsQueryError as exc:
            raise QueryRejected(str(exc)) from exc
        options = (f'StartSel="{HIGHLIGHT_OPEN}", StopSel="{HIGHLIGHT_CLOSE}", '
                   f'MaxWords={SNIPPET_WORDS}, MinWords={SNIPPET_WORDS // 2}, ShortWord=0')
        return self.db.query(
            f"WITH q AS (SELECT {query_sql} AS q)"
            " SELECT e.target, e.entry_index, e.content,"
            f" ts_headline('{SEARCH_CONFIG}', e.content, q.q, %s) AS snippet,"
            " ts_rank_cd(e.tsv, q.q, 1) AS score"
            " FROM builtin_index_entries e, q WHERE e.tsv @@ q.q AND e.home = %s AND e.target = ANY(%s)"
            " ORDER BY score DESC, e.target, e.entry_index LIMIT %s",
            (*params, options, self.home, list(targets), int(count)))

    def search_index(self, query: str | QueryPlan, targets: Sequence[str],
                     limit: int) -> tuple[list[dict[str, Any]], str | None]:
        if not targets:
            return [], None
        outcome = run_plan(lambda match, count: self._fetch(match, count, targets), query, limit,
                           key=lambda row: (row["target"], row["entry_index"]))
        rows = []
        for row in outcome.rows:
            if HIGHLIGHT_OPEN not in (row["snippet"] or ""):
                row["snippet"] = ""  # the caller highlights it itself (see the module docstring)
            rows.append(row)
        return rows, outcome.note
