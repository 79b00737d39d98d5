"""Built-in memory's provenance, history and entry index on PostgreSQL (schema/pg/0002).

MEMORY.md / USER.md stay each home's own files, so every row here belongs to one home: the
``home`` column holds the writer label of the database object (``host:home``, see
:func:`hermes_store.pgdb.writer_label`), and every read and write is scoped to it (the
storage's scope column, see :mod:`hermes_store.builtin.storage_sql`, where the statements
both engines share live). Here is only what PostgreSQL does its own way: history ids are
numbered per home (the next id is taken under the home's advisory lock), so a home's history
keeps the ids it had in SQLite after ``migrate``; index rows are loaded with ``COPY``; the
entry search uses ``tsvector``, scored as :mod:`hermes_store.builtin.scoring` defines for both
engines, its excerpts FTS5's ``snippet()`` replayed on
the index's own tokens (:mod:`hermes_store.storage_pg_marks`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from hermes_store.builtin.scoring import IndexStats, entry_score
from hermes_store.builtin.storage_sql import HISTORY_COLUMNS, INDEX_COLUMNS, SqlBuiltinStorage
from hermes_store.excerpts import HIGHLIGHT_MARKS
from hermes_store.pghighlight import INDEX_TOKEN
from hermes_store.pgquery import TsQueryError, tsquery_sql
from hermes_store.query import Match, QueryPlan, QueryRejected, run_plan
from hermes_store.storage_pg_marks import index_marked_excerpts, phrase_instances, query_phrases

if TYPE_CHECKING:
    from hermes_store.pgdb import PgDatabase

INDEX_LOCK_CLASS = 0x48534958  # 'HSIX': advisory locks of one home's entry index, per target
SNIPPET_WORDS = 24  # as the SQLite engine's snippet(..., 24)
SNIPPET_ELLIPSIS = "…"  # what the SQLite engine's snippet() puts where it cuts an entry


class PgBuiltinStorage(SqlBuiltinStorage):
    """:class:`BuiltinStorage` over a :class:`~hermes_store.pgdb.PgDatabase`, scoped to one home."""

    engine = "postgresql"
    db: PgDatabase
    scope_columns = ("home",)
    # ``written_by``: the home's writer label, so history read from a shared store names its home
    history_columns = f"{HISTORY_COLUMNS}, home AS written_by"

    def __init__(self, db: PgDatabase) -> None:
        super().__init__(db)
        self.home = db.writer

    def scope_values(self) -> tuple[Any, ...]:
        return (self.home,)

    def transaction(self) -> AbstractContextManager[Any]:
        return self.db.transaction()

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
        with self.db.transaction() as conn:
            # one writer per home at a time picks the next id (other homes are not held up)
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)",
                (0x48534D48, zlib.crc32(self.home.encode("utf-8")) - 2**31),
            )
            row = conn.execute(
                "INSERT INTO memory_history(home, id, target, action, old_text, new_text, at, origin,"
                " session_id, restored_from) SELECT %s, coalesce(max(id), 0) + 1, %s, %s, %s, %s, %s,"
                " %s, %s, %s FROM memory_history WHERE home = %s RETURNING id",
                (
                    self.home,
                    target,
                    action,
                    old_text,
                    new_text,
                    at,
                    origin,
                    session_id,
                    restored_from,
                    self.home,
                ),
            ).fetchone()
        return int(row["id"])

    # ---- entry search index

    def hold_index(self, target: str) -> None:
        # two sessions replacing the same index at once each deleted the rows they could see,
        # and the second's COPY then met the first's new rows (UniqueViolation on
        # (home, target, entry_index)): the home's target is refreshed by one at a time. Bounded
        # by the transaction's lock_timeout (a read's refresh waits 0.5 s, then is skipped).
        self.db.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)",
            (INDEX_LOCK_CLASS, zlib.crc32(f"{self.home}\0{target}".encode()) - 2**31),
        )

    def insert_index_rows(self, rows: Sequence[tuple[Any, ...]]) -> None:
        self.db.copy_rows(
            f"COPY builtin_index_entries ({self._columns(*INDEX_COLUMNS)}) FROM STDIN", rows
        )

    def _fetch(self, match: Match, count: int, targets: Sequence[str],
               marks: tuple[str, str] = HIGHLIGHT_MARKS) -> list[dict[str, Any]]:
        try:
            query_sql, params = tsquery_sql(match)
        except TsQueryError as exc:
            raise QueryRejected(str(exc)) from exc
        rows = self.db.query(
            "SELECT e.target, e.entry_index, e.content FROM builtin_index_entries e"
            f" WHERE e.tsv @@ ({query_sql}) AND e.home = %s AND e.target = ANY(%s)",
            (*params, self.home, list(targets)),
        )
        scores = self._scores(match) if rows else {}
        for row in rows:
            row["score"] = scores.get((row["target"], row["entry_index"]), 0.0)
        rows.sort(key=lambda row: (-row["score"], row["target"], row["entry_index"]))
        rows = rows[: int(count)]
        # FTS5's snippet() replayed (the SQLite engine's snippet(..., '…', 24)); "" where no
        # phrase of the match is in the text: the caller highlights the entry itself
        found = index_marked_excerpts(self.db, {i: row["content"] or "" for i, row in enumerate(rows)},
                                      match, *marks, SNIPPET_WORDS, SNIPPET_ELLIPSIS)
        for i, row in enumerate(rows):
            row["snippet"] = found.get(i) or ""
        return rows

    def _scores(self, match: Match) -> dict[tuple[str, int], float]:
        """:func:`~hermes_store.builtin.scoring.entry_score` of every entry of the home's index
        (both targets, as the SQLite index holds both) by ``(target, entry_index)``: the
        phrases' instances in the entry text and its CJK projection, found as the index
        tokenizes them (:func:`~hermes_store.storage_pg_marks.phrase_instances`)."""
        entries = self.db.query(
            "SELECT target, entry_index, content, coalesce(cjk, '') AS cjk FROM builtin_index_entries"
            " WHERE home = %s", (self.home,))
        phrases = query_phrases(match, cjk=True)
        columns = ("content", "cjk")
        texts = {(e["target"], e["entry_index"], c): e[name] or "" for e in entries
                 for c, name in enumerate(columns)}
        found = phrase_instances(self.db, texts, phrases)
        counts: dict[tuple[str, int], list[list[int]]] = {}
        lengths: dict[tuple[str, int], int] = {}
        for (target, index, column), text in texts.items():
            key = (target, index)
            per_phrase = counts.setdefault(key, [[0] * len(columns) for _ in phrases])
            for _, phrase in found[(target, index, column)]:
                per_phrase[phrase][column] += 1
            lengths[key] = lengths.get(key, 0) + len(INDEX_TOKEN.findall(text))
        docs = tuple(sum(1 for c in counts.values() if any(c[p])) for p in range(len(phrases)))
        stats = IndexStats(len(counts), sum(lengths.values()), docs)
        return {key: entry_score(c, lengths[key], stats) for key, c in counts.items()}

    def search_index(
        self, query: str | QueryPlan, targets: Sequence[str], limit: int,
        marks: tuple[str, str] = HIGHLIGHT_MARKS,
    ) -> tuple[list[dict[str, Any]], str | None]:
        if not targets:
            return [], None
        outcome = run_plan(
            lambda match, count: self._fetch(match, count, targets, marks),
            query,
            limit,
            key=lambda row: (row["target"], row["entry_index"]),
        )
        return list(outcome.rows), outcome.note
