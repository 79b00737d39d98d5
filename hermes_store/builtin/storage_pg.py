"""Built-in memory's provenance, history and entry index on PostgreSQL (schema/pg/0002).

MEMORY.md / USER.md stay each home's own files, so every row here belongs to one home: the
``home`` column holds the writer label of the database object (``host:home``, see
:func:`hermes_store.pgdb.writer_label`), and every read and write is scoped to it (the
storage's scope column, see :mod:`hermes_store.builtin.storage_sql`, where the statements
both engines share live). Here is only what PostgreSQL does its own way: history ids are
numbered per home (the next id is taken under the home's advisory lock), so a home's history
keeps the ids it had in SQLite after ``migrate``; index rows are loaded with ``COPY``; the
entry search uses ``tsvector`` / ``ts_rank_cd``, its excerpts ``ts_headline`` put in the form of
FTS5's ``snippet()`` (:mod:`hermes_store.pghighlight`), or the index's own tokens marked where
``ts_headline`` cannot mark them.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from hermes_store.builtin.storage_sql import HISTORY_COLUMNS, INDEX_COLUMNS, SqlBuiltinStorage
from hermes_store.excerpts import HIGHLIGHT_MARKS
from hermes_store.pghighlight import (
    PARSER_WHOLE,
    join_phrases,
    marks_tokens,
    with_ellipses,
)
from hermes_store.pgquery import SEARCH_CONFIG, TsQueryError, tsquery_sql
from hermes_store.query import Match, QueryPlan, QueryRejected, run_plan
from hermes_store.storage_pg_marks import index_marked_excerpts

if TYPE_CHECKING:
    from hermes_store.pgdb import PgDatabase

SNIPPET_WORDS = 24  # as the SQLite engine's snippet(..., 24)
SNIPPET_ELLIPSIS = "…"  # what the SQLite engine's snippet() puts where it cuts an entry


def _excerpt(row: dict[str, Any], match: Match, marks: tuple[str, str] = HIGHLIGHT_MARKS) -> str:
    """The row's ts_headline in the form FTS5's snippet() gives (phrases one span, ``…`` where
    it cuts the entry), or ``""`` where ts_headline cannot be trusted to mark what the index
    matched (no marks, marks that are not index tokens, or an entry holding a path, address or
    host its parser keeps whole, such as ``db.internal:5432``)."""
    headline, content = row["snippet"] or "", row["content"] or ""
    if marks[0] not in headline or not marks_tokens(headline, *marks) or PARSER_WHOLE.search(content):
        return ""
    headline = join_phrases(headline, match, *marks)
    return with_ellipses(headline, content, *marks, SNIPPET_ELLIPSIS)


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
        # MinWords just under MaxWords: an entry of up to SNIPPET_WORDS words comes back whole, as
        # FTS5's snippet() returns it (with half of it, ts_headline cut the entry's start off)
        options = (
            f'StartSel="{marks[0]}", StopSel="{marks[1]}", '
            f"MaxWords={SNIPPET_WORDS}, MinWords={SNIPPET_WORDS - 1}, ShortWord=0, HighlightAll=false"
        )
        rows = self.db.query(
            f"WITH q AS (SELECT {query_sql} AS q)"
            " SELECT e.target, e.entry_index, e.content,"
            f" ts_headline('{SEARCH_CONFIG}', e.content, q.q, %s) AS snippet,"
            " ts_rank_cd(e.tsv, q.q, 1) AS score"
            " FROM builtin_index_entries e, q WHERE e.tsv @@ q.q AND e.home = %s AND e.target = ANY(%s)"
            " ORDER BY score DESC, e.target, e.entry_index LIMIT %s",
            (*params, options, self.home, list(targets), int(count)),
        )
        unmarked: dict[int, str] = {}
        for i, row in enumerate(rows):
            row["snippet"] = _excerpt(row, match, marks)
            if not row["snippet"]:
                unmarked[i] = row["content"] or ""
        for i, excerpt in self._marked_tokens(unmarked, match, marks).items():
            rows[i]["snippet"] = excerpt  # still "": the caller highlights the entry itself
        return rows

    def _marked_tokens(self, contents: dict[int, str], match: Match,
                       marks: tuple[str, str] = HIGHLIGHT_MARKS) -> dict[int, str]:
        """An excerpt of each of ``contents`` (the entries ts_headline could not mark) with
        every token marked that the index stems or folds to a token of ``match``, cut as FTS5's
        snippet() cuts (:func:`~hermes_store.storage_pg_marks.index_marked_excerpts`)."""
        found = index_marked_excerpts(self.db, contents, match, *marks, SNIPPET_WORDS, SNIPPET_ELLIPSIS)
        return {i: join_phrases(excerpt, match, *marks)
                for i, excerpt in found.items() if excerpt is not None}

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
