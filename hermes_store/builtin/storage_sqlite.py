"""Built-in memory's storage on SQLite (APSW, FTS5): provenance, history and the entry index.

Tables: ``memory_entries``, ``memory_history``, ``memory_sync`` (``schema/0002_builtin.sql``)
and ``builtin_index_entries`` / ``builtin_index_files`` with the ``builtin_index_fts`` FTS5
index kept by triggers (``schema/0005_builtin_search.sql``). The statements both engines
share live in :mod:`hermes_store.builtin.storage_sql`; here is only what SQLite does its own
way (FTS5 search, rowid history ids, the write transaction, its errors as ``DatabaseError``).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import apsw

from hermes_store.builtin.scoring import IndexStats, entry_score
from hermes_store.builtin.storage_sql import SqlBuiltinStorage
from hermes_store.db import Database, DatabaseError
from hermes_store.excerpts import HIGHLIGHT_MARKS
from hermes_store.query import QueryPlan, run_match

SCORE_FUNCTION = "hs_entry_score"
_SEARCH_SQL = f"""
SELECT e.target, e.entry_index, e.content,
       snippet(builtin_index_fts, 0, ?, ?, '…', 24) AS snippet,
       {SCORE_FUNCTION}(builtin_index_fts) AS score
FROM builtin_index_fts JOIN builtin_index_entries AS e ON e.id = builtin_index_fts.rowid
WHERE builtin_index_fts MATCH ? AND e.target IN ({{marks}})
ORDER BY score DESC, e.target, e.entry_index LIMIT ?
"""
_registered: weakref.WeakSet[Any] = weakref.WeakSet()


def _index_stats(api: apsw.FTS5ExtensionApi) -> IndexStats:
    """The index's entries and tokens, and the entries holding each phrase (FTS5's counts)."""
    def count(_inner: apsw.FTS5ExtensionApi, found: list[int]) -> None:
        found[0] += 1

    docs = []
    for phrase in range(api.phrase_count):
        found = [0]
        api.query_phrase(phrase, count, found)
        docs.append(found[0])
    return IndexStats(api.row_count, api.column_total_size(-1), tuple(docs))


def hs_entry_score(api: apsw.FTS5ExtensionApi) -> float:
    """The FTS5 auxiliary function: the current entry's :func:`~hermes_store.builtin.scoring.entry_score`."""
    if api.aux_data is None:
        api.aux_data = _index_stats(api)
    counts = [[len(offsets) for offsets in api.phrase_locations(phrase)] for phrase in range(api.phrase_count)]
    return entry_score(counts, api.column_size(-1), api.aux_data)


class SqliteBuiltinStorage(SqlBuiltinStorage):
    """:class:`BuiltinStorage` over a :class:`~hermes_store.db.Database`."""

    engine = "sqlite"
    db: Database

    def transaction(self) -> AbstractContextManager[Any]:
        return self.db.write()

    def append_history(
        self,
        target: str,
        action: str,
        old_text: str | None,
        new_text: str | None,
        at: float,
        origin: str,
        session_id: str,
        restored_from: int | None,
    ) -> int:
        self.db.execute(
            "INSERT INTO memory_history(target, action, old_text, new_text, at, origin, session_id,"
            " restored_from) VALUES (?,?,?,?,?,?,?,?)",
            (target, action, old_text, new_text, at, origin, session_id, restored_from),
        )
        return int(self.db.conn.last_insert_rowid())

    # ---- entry search index

    def indexed_hash(self, target: str) -> str | None:
        try:
            return super().indexed_hash(target)
        except apsw.Error as exc:
            raise DatabaseError(f"{self.db.path}: cannot read the entry index: {exc}") from exc

    def replace_index(self, target: str, digest: str, entries: Sequence[str], at: float) -> None:
        try:
            super().replace_index(target, digest, entries, at)
        except apsw.Error as exc:
            raise DatabaseError(f"{self.db.path}: cannot write the entry index: {exc}") from exc

    def search_index(
        self, query: str | QueryPlan, targets: Sequence[str], limit: int,
        marks: tuple[str, str] = HIGHLIGHT_MARKS,
    ) -> tuple[list[dict[str, Any]], str | None]:
        sql = _SEARCH_SQL.format(marks=",".join("?" * len(targets)))
        if self.db.conn not in _registered:
            self.db.conn.register_fts5_function(SCORE_FUNCTION, hs_entry_score)
            _registered.add(self.db.conn)

        def fetch(expression: str, count: int) -> list[dict[str, Any]]:
            return self.db.query(
                sql, (*marks, expression, *targets, count)
            )

        outcome = run_match(
            fetch, query, limit, key=lambda row: (row["target"], row["entry_index"])
        )
        return list(outcome.rows), outcome.note
