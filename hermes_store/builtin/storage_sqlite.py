"""Built-in memory's storage on SQLite (APSW, FTS5): provenance, history and the entry index.

Tables: ``memory_entries``, ``memory_history``, ``memory_sync`` (``schema/0002_builtin.sql``)
and ``builtin_index_entries`` / ``builtin_index_files`` with the ``builtin_index_fts`` FTS5
index kept by triggers (``schema/0005_builtin_search.sql``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import apsw

from hermes_store.builtin.storage import BuiltinStorage
from hermes_store.db import Database, DatabaseError
from hermes_store.query import HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN, QueryPlan, run_match
from hermes_store.tokens import cjk_projection

HISTORY_COLUMNS = "id, target, action, old_text, new_text, at, origin, session_id, restored_from"
_SEARCH_SQL = """
SELECT e.target, e.entry_index, e.content,
       snippet(builtin_index_fts, 0, ?, ?, '…', 24) AS snippet,
       -bm25(builtin_index_fts, 1.0, 0.8) AS score
FROM builtin_index_fts JOIN builtin_index_entries AS e ON e.id = builtin_index_fts.rowid
WHERE builtin_index_fts MATCH ? AND e.target IN ({marks})
ORDER BY rank LIMIT ?
"""


class SqliteBuiltinStorage(BuiltinStorage):
    """:class:`BuiltinStorage` over a :class:`~hermes_store.db.Database`."""

    engine = "sqlite"
    db: Database

    def transaction(self) -> AbstractContextManager[Any]:
        return self.db.write()

    # ---- provenance

    def synced_hash(self, target: str) -> str | None:
        return self.db.scalar("SELECT content_hash FROM memory_sync WHERE target=?", (target,))

    def set_synced_hash(self, target: str, digest: str, at: float) -> None:
        self.db.execute(
            "INSERT INTO memory_sync(target, content_hash, synced_at) VALUES (?,?,?)"
            " ON CONFLICT(target) DO UPDATE SET content_hash=excluded.content_hash,"
            " synced_at=excluded.synced_at",
            (target, digest, at),
        )

    def entry_texts(self, target: str) -> list[str]:
        return [r["text"] for r in self.db.query(
            "SELECT text FROM memory_entries WHERE target=? ORDER BY created_at, text", (target,))]

    def entry_exists(self, target: str, text: str) -> bool:
        return self.db.scalar("SELECT 1 FROM memory_entries WHERE target=? AND text=?",
                              (target, text)) is not None

    def insert_entry(self, target: str, text: str, at: float, origin: str, session_id: str) -> None:
        self.db.execute(
            "INSERT INTO memory_entries(target, text, created_at, updated_at, created_origin,"
            " created_session, updated_origin, updated_session) VALUES (?,?,?,?,?,?,?,?)"
            " ON CONFLICT(target, text) DO NOTHING",
            (target, text, at, at, origin, session_id, origin, session_id),
        )

    def delete_entry(self, target: str, text: str) -> None:
        self.db.execute("DELETE FROM memory_entries WHERE target=? AND text=?", (target, text))

    def rename_entry(self, target: str, old: str, new: str) -> None:
        self.db.execute("UPDATE memory_entries SET text=? WHERE target=? AND text=?", (new, target, old))

    def touch_entry(self, target: str, text: str, at: float, origin: str, session_id: str) -> None:
        self.db.execute(
            "UPDATE memory_entries SET updated_at=?, updated_origin=?, updated_session=?"
            " WHERE target=? AND text=?",
            (at, origin, session_id, target, text),
        )

    def entry_rows(self, target: str) -> list[dict[str, Any]]:
        return self.db.query(
            "SELECT text, created_at, updated_at, created_origin, created_session,"
            " updated_origin, updated_session FROM memory_entries WHERE target=?",
            (target,),
        )

    def append_history(self, target: str, action: str, old_text: str | None, new_text: str | None,
                       at: float, origin: str, session_id: str, restored_from: int | None) -> int:
        self.db.execute(
            "INSERT INTO memory_history(target, action, old_text, new_text, at, origin, session_id,"
            " restored_from) VALUES (?,?,?,?,?,?,?,?)",
            (target, action, old_text, new_text, at, origin, session_id, restored_from),
        )
        return int(self.db.conn.last_insert_rowid())

    def history(self, target: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        sql = f"SELECT {HISTORY_COLUMNS} FROM memory_history"
        params: list[Any] = []
        if target is not None:
            sql += " WHERE target=?"
            params.append(target)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return self.db.query(sql, params)

    def history_event(self, event_id: int) -> dict[str, Any] | None:
        return self.db.query_one(f"SELECT {HISTORY_COLUMNS} FROM memory_history WHERE id=?", (int(event_id),))

    # ---- entry search index

    def indexed_hash(self, target: str) -> str | None:
        try:
            return self.db.scalar("SELECT content_hash FROM builtin_index_files WHERE target=?", (target,))
        except apsw.Error as exc:
            raise DatabaseError(f"{self.db.path}: cannot read the entry index: {exc}") from exc

    def replace_index(self, target: str, digest: str, entries: Sequence[str], at: float) -> None:
        try:
            with self.db.write():
                self.db.execute("DELETE FROM builtin_index_entries WHERE target=?", (target,))
                self.db.executemany(
                    "INSERT INTO builtin_index_entries(target, entry_index, content, cjk) VALUES (?,?,?,?)",
                    [(target, i, entry, cjk_projection(entry)) for i, entry in enumerate(entries, start=1)],
                )
                self.db.execute(
                    "INSERT INTO builtin_index_files(target, content_hash, refreshed_at) VALUES (?,?,?) "
                    "ON CONFLICT(target) DO UPDATE SET content_hash=excluded.content_hash, "
                    "refreshed_at=excluded.refreshed_at",
                    (target, digest, at),
                )
        except apsw.Error as exc:
            raise DatabaseError(f"{self.db.path}: cannot write the entry index: {exc}") from exc

    def search_index(self, query: str | QueryPlan, targets: Sequence[str],
                     limit: int) -> tuple[list[dict[str, Any]], str | None]:
        sql = _SEARCH_SQL.format(marks=",".join("?" * len(targets)))

        def fetch(expression: str, count: int) -> list[dict[str, Any]]:
            return self.db.query(sql, (HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE, expression, *targets, count))

        outcome = run_match(fetch, query, limit, key=lambda row: (row["target"], row["entry_index"]))
        return list(outcome.rows), outcome.note
