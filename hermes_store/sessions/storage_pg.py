"""The session index on PostgreSQL (:class:`PgSessionStorage`, engine ``"postgresql"``).

Same tables and JSON as the SQLite implementation (schema/pg/0001). Full-text search uses the
``tsv`` column (tsvector, GIN index) and a ``tsquery`` compiled from the same
:class:`~hermes_store.query.Match` the SQLite engine renders as FTS5
(:mod:`hermes_store.pgquery`, every term a bound parameter). Hits are scored with bm25
(k1 = 1.2, b = 0.5: :mod:`.bm25`) over the query's terms, document frequencies estimated from a bounded
sample as the SQLite ranker does, so both engines order results alike.

Concurrency across hosts: appending takes the session row's lock (``FOR UPDATE``) so two
writers never pick the same ``seq``; counters are updated in SQL (``x = x + n``), never
read-modify-written in Python. Bulk batches go through ``COPY``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_store.budget import current_budget
from hermes_store.pgdb import PgDatabase
from hermes_store.pgquery import (
    TsQueryError,
    pair_keys_sql,
    positive_terms,
    required_phrases,
    tsquery_sql,
)
from hermes_store.query import AllOf, AnyOf, Match, QueryRejected
from hermes_store.sessions import bm25
from hermes_store.sessions.calltext import derived
from hermes_store.sessions.rows import (
    SESSION_COLUMNS,
    SessionNotFound,
    decode_meta,
    session_row,
)
from hermes_store.sessions.storage import (
    BulkWriter,
    Filters,
    Hit,
    Hits,
    IndexLockTimeout,
    index_wait_note,
)
from hermes_store.sessions.storage_pg_bulk import PgBulkWriter
from hermes_store.sessions.storage_pg_health import (
    PgIndexHealth,
)
from hermes_store.sessions.storage_pg_rank import average_length, row_scores, term_lexemes
from hermes_store.sessions.storage_pg_snippets import PgSnippets, SearchReads
from hermes_store.sessions.storage_sql import FilterDialect, SqlSessionStorage, filter_clauses

logger = logging.getLogger(__name__)
_IDLE = 0  # psycopg.pq.TransactionStatus.IDLE: a connection outside any transaction
IDF_SAMPLE = 500  # matches sampled to estimate a term's document frequency
IDF_KEPT = 256  # terms whose IDF one storage object keeps
INDEX_RUN_LOCK = 0x48534958  # advisory lock key ("HSIX") held by a `sessions index` run
INDEX_LOCK_POLL = 0.25  # seconds between tries while another run holds it
AVGDL_SAMPLE = 2000  # newest rows whose lexeme count estimates the average length
STATS_TTL = 60.0  # seconds corpus statistics are reused
COUNT_BELOW = 100_000  # estimated rows under which the corpus size is counted exactly
FIRST_WINDOW = 4096  # ids the first window of a search walk covers
WINDOW_GROWTH = 8  # a window after empty ones covers this many times the ids covered so far
MAX_WINDOW = 262_144  # ids one window covers at most (the walk checks its time between windows)
WALK_BUDGET = 1.0  # seconds a search walk may take when no query budget is set
DENSE_PAIR_SHARE = 0.01  # a phrase's pair keys this common: its first window tests rows in id order
GIN_REST_CAP = 100_000  # estimated GIN candidates one statement may recheck (~0.5 s; the rest of a walk)
_SESSION_SELECT = ", ".join(SESSION_COLUMNS)


# (at, rows, avgdl) per open database
_CORPUS_STATS: weakref.WeakKeyDictionary[Any, tuple[float, int, float, float]] = weakref.WeakKeyDictionary()
# (at, {"tsv" | "pairs": ({element: share of rows}, least share listed)}) per open database
_LEXEME_SHARES: weakref.WeakKeyDictionary[Any, tuple[float, dict[str, tuple[dict[str, float], float | None]]]] = (
    weakref.WeakKeyDictionary())

def _in_values(column: str, values: Sequence[Any], negate: bool) -> tuple[str, list[Any]]:
    return f"{'NOT ' if negate else ''}({column} = ANY(%s))", [list(values)]


_DIALECT = FilterDialect(param="%s", never="false", in_values=_in_values, no_limit=None,
                         contains=lambda column: f"strpos({column}, ?) > 0")


def _filters_sql(filters: Filters) -> tuple[str, list[Any]]:
    """``AND ...`` clauses (over ``m`` = messages, ``s`` = sessions) and their parameters."""
    return filter_clauses(filters, _DIALECT)


def walk_budget() -> float:
    """Seconds a search walk may read windows: the query budget of the caller
    (:func:`hermes_store.budget.current_budget`), else :data:`WALK_BUDGET`."""
    budget = current_budget()
    return budget if budget is not None else WALK_BUDGET


@dataclass
class Walk:
    """Rows of a search walk; ``partial`` = (ids covered, ids in the table) when it stopped
    at its time budget before reading every window."""

    rows: list[dict[str, Any]]
    partial: tuple[int, int] | None = None

    def note(self) -> str | None:
        """What to tell the user when the walk stopped early."""
        if self.partial is None:
            return None
        covered, total = self.partial
        return (f"the search stopped at its {walk_budget():.1f} s time budget after reading the "
                f"newest {covered:,} of {total:,} message ids; results are partial "
                f"({len(self.rows)} found before it)")


_PLAIN_LEXEME = re.compile(r"'((?:[^'\\]|''|\\.)+)'")


def _plain_lexeme(tsquery: str) -> str | None:
    """The lexeme of a ``tsquery`` text that is one plain lexeme (``'word'``), else None."""
    found = _PLAIN_LEXEME.fullmatch(tsquery.strip())
    if found is None:
        return None
    return re.sub(r"\\(.)", r"\1", found.group(1).replace("''", "'"))


def _match_test(tsquery: str, pair_keys: Sequence[int]) -> tuple[str, str, list[Any]]:
    """How a statement finds the rows of ``messages m`` matching ``tsquery``:
    ``(way_in, test, args)``. ``way_in`` is the GIN condition the planner reads candidates
    through: a phrase's pair keys (schema/pg/0006) when it has them, else the vector's own
    index; ``test`` is ``way_in`` plus, for a phrase, the phrase test of each candidate's
    vector (``ts_match_vq``: the ``@@`` test as a filter, never a second index scan); ``args``
    are ``test``'s parameters (``way_in``'s come first)."""
    if pair_keys:
        way_in = "hermes_pair_keys(m.tsv) @> %s::integer[]"
        return way_in, f"{way_in} AND ts_match_vq(m.tsv, %s::tsquery)", [list(pair_keys), tsquery]
    way_in = "m.tsv @@ %s::tsquery"
    return way_in, way_in, [tsquery]


def _corpus_wide(filters: Filters) -> bool:
    """True when ``filters`` keep every message but those of excluded roles."""
    return (filters.roles is None and filters.sources is None and filters.exclude_sources is None
            and filters.session_ids is None and filters.since is None and filters.until is None
            and filters.started_after is None and filters.started_before is None)


def _like_escape(text: str) -> str:
    """``text`` as a literal LIKE pattern (backslash is PostgreSQL's default escape)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class PgSessionStorage(PgSnippets, PgIndexHealth, SqlSessionStorage):
    """Every read and write of the session index, in PostgreSQL."""

    engine = "postgresql"
    dialect = _DIALECT
    db: PgDatabase

    def __init__(self, db: PgDatabase) -> None:
        super().__init__(db)
        self._idf_seen: dict[tuple[str, int], tuple[float, float]] = {}  # -> (at, idf)
        self._reads_local = threading.local()  # .reads: this thread's SearchReads (one_connection)

    # -- state ----------------------------------------------------------------

    def ready(self) -> bool:
        # one round trip (every search asks)
        return self.db.scalar("SELECT to_regclass('messages') IS NOT NULL"
                              " AND to_regclass('sessions') IS NOT NULL") is True

    def location(self) -> str:
        # not a file: nothing beside it to exclude from indexing (concurrent writers are kept
        # apart by the server's transactions and row locks, indexing runs by index_run_lock)
        return ""

    @contextlib.contextmanager
    def one_connection(self) -> Iterator[None]:
        """The block's statements over one pooled connection (:meth:`PgDatabase.held_connection`).

        The block is one search: what it read for one step and the next wants again (the
        relaxed form of a question compiled with the strict one, the table's bounds, the
        contents of the messages excerpted) is kept for the block and dropped at its end."""
        reads = self._search()
        if reads is None:
            reads = self._reads_local.reads = SearchReads()
        reads.depth += 1
        try:
            with self.db.held_connection():
                yield
        finally:
            reads.depth -= 1
            if reads.depth == 0:
                self._reads_local.reads = None

    @contextlib.contextmanager
    def index_run_lock(self, timeout: float, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """A session-level advisory lock of this database, held on one pooled connection for
        the run (the server drops it if the host dies), tried every ``INDEX_LOCK_POLL`` s."""
        deadline, told = time.monotonic() + max(0.0, float(timeout)), False
        with self.db.connection() as conn:
            while not conn.execute("SELECT pg_try_advisory_lock(%s) AS got",
                                   (INDEX_RUN_LOCK,)).fetchone()["got"]:
                if time.monotonic() >= deadline:
                    raise IndexLockTimeout(
                        f"{self.db.display_url}: another `sessions index` run (on this or another "
                        f"host) has held the indexing lock for {timeout:g} s; try again when it finishes")
                if on_wait is not None and not told:  # once, before the first wait
                    on_wait(index_wait_note(self.db.display_url, timeout))
                    told = True
                time.sleep(INDEX_LOCK_POLL)
            try:
                yield
            finally:
                try:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (INDEX_RUN_LOCK,))
                except Exception:  # noqa: BLE001 - a broken connection has released it already
                    pass

    # -- live writes ------------------------------------------------------------

    def add_session(self, session_id: str, *, origin_format: str, source: str, title: str | None,
                    model: str | None, workspace: str | None, started_at: float | None,
                    parent_session_id: str | None, meta: dict[str, Any]) -> bool:
        count = self.db.execute(
            "INSERT INTO sessions(id, origin_format, source, title, model, workspace, started_at,"
            " parent_session_id, meta) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)"
            " ON CONFLICT (id) DO NOTHING",
            (session_id, origin_format, source, title, model, workspace, started_at,
             parent_session_id, json.dumps(meta or {}, ensure_ascii=False)))
        return count == 1

    def append_message(self, session_id: str, *, role: str, content: str, tool_name: str | None,
                       tool_calls: str | None, tool_call_id: str | None, timestamp: float,
                       cjk: str | None, message_uid: str | None = None) -> int:
        with self.db.transaction() as conn:
            row = conn.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFound(session_id)
            new = conn.execute(
                "INSERT INTO messages(session_id, seq, role, content, tool_name, tool_calls,"
                " tool_call_id, timestamp, cjk, calls, tools, search_text, message_uid)"
                " SELECT %s, coalesce(max(seq) + 1, 0), %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s"
                " FROM messages WHERE session_id = %s RETURNING id",
                (session_id, role, content, tool_name, tool_calls, tool_call_id, timestamp, cjk,
                 *derived(role, content, tool_name, tool_calls), message_uid, session_id)).fetchone()
            conn.execute(
                "UPDATE sessions SET message_count = message_count + 1,"
                " started_at = coalesce(started_at, %s) WHERE id = %s", (timestamp, session_id))
        return int(new["id"])

    def end_session(self, session_id: str, ended_at: float, end_reason: str | None) -> None:
        with self.db.transaction() as conn:
            row = conn.execute("SELECT meta FROM sessions WHERE id = %s FOR UPDATE",
                               (session_id,)).fetchone()
            if row is None:
                raise SessionNotFound(session_id)
            meta = decode_meta(row["meta"])
            if end_reason:
                meta["end_reason"] = end_reason
            conn.execute("UPDATE sessions SET ended_at = %s, meta = %s WHERE id = %s",
                         (ended_at, json.dumps(meta, ensure_ascii=False), session_id))

    def set_title(self, session_id: str, title: str | None) -> None:
        if self.db.execute("UPDATE sessions SET title = %s WHERE id = %s", (title, session_id)) == 0:
            raise SessionNotFound(session_id)

    # -- reading sessions ---------------------------------------------------------

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        return session_row(self.db.query_one(
            f"SELECT {_SESSION_SELECT} FROM sessions WHERE id = %s", (session_id,)))

    def session_writers(self, session_ids: Sequence[str]) -> dict[str, str]:
        rows = self.db.query("SELECT id, written_by FROM sessions WHERE id = ANY(%s) AND written_by <> ''",
                             ([str(s) for s in session_ids],))
        return {r["id"]: r["written_by"] for r in rows}

    def has_session(self, session_id: str) -> bool:
        return self.db.scalar("SELECT 1 FROM sessions WHERE id = %s", (session_id,)) is not None

    def session_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        pattern = _like_escape(prefix) + "%"
        rows = self.db.query("SELECT id FROM sessions WHERE id LIKE %s ORDER BY id LIMIT %s",
                             (pattern, int(limit)))
        return [r["id"] for r in rows]

    def list_sessions(self, *, source: str | None = None, exclude_sources: Sequence[str] = (),
                      limit: int | None = 20) -> list[dict[str, Any]]:
        clauses, params = [], []
        if source:
            clauses.append("source = %s")
            params.append(source)
        if exclude_sources:
            clauses.append("NOT (source = ANY(%s))")
            params.append(list(exclude_sources))
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        params.append(None if limit is None else int(limit))
        rows = self.db.query(
            f"SELECT {_SESSION_SELECT} FROM sessions{where}"
            " ORDER BY coalesce(ended_at, started_at) DESC NULLS LAST, id LIMIT %s", params)
        return [session_row(r) for r in rows]  # type: ignore[misc]

    # -- reading messages -----------------------------------------------------------

    # -- search ----------------------------------------------------------------------

    def _compile(self, match: Match) -> tuple[str, list[Any]]:
        try:
            return tsquery_sql(match)
        except TsQueryError as exc:
            raise QueryRejected(str(exc)) from exc

    def _tsqueries(self, matches: Sequence[Match]) -> tuple[list[tuple[str, list[int]]], tuple[int, int] | None]:
        """Each match compiled once by the server into ``tsquery`` text, with the phrase pair
        keys (schema/pg/0006) every row matching it holds, and the table's ``(min, max)`` id
        (None when it is empty) that a search walk starts from: one round trip.

        Later statements bind that text as a constant (``%s::tsquery``): the planner then
        estimates its selectivity from the column statistics, and nothing of the compiled
        form (``hermes_tokens``, ``phraseto_tsquery``) is evaluated again for every row.

        Inside one search (:meth:`one_connection`) the relaxed form of an all-words match
        (any of its parts, what a question falls back to when too few rows hold every word) is
        compiled in the same round trip, and its walk then needs none.
        """
        search = self._search()
        kept = search.compiled if search is not None else {}
        if matches[0] in kept and all(m in kept for m in matches):
            return [kept[m][:2] for m in matches], kept[matches[0]][2]
        wanted = list(dict.fromkeys(matches))
        if search is not None and isinstance(matches[0], AllOf) and len(matches[0].parts) > 1:
            wanted.append(AnyOf(matches[0].parts))
        parts, params = [], []
        for i, match in enumerate(wanted):
            sql, term_params = self._compile(match)
            keys_sql, key_params = pair_keys_sql(required_phrases(match))
            parts.append(f"({sql})::text AS q{i}, {keys_sql} AS k{i}")
            params.extend([*term_params, *key_params])
        parts.append("(SELECT min(id) FROM messages) AS lo, (SELECT max(id) FROM messages) AS hi")
        row = self.db.query_one("SELECT " + ", ".join(parts), params)
        bounds = None if row["lo"] is None else (int(row["lo"]), int(row["hi"]))
        compiled = {match: (row[f"q{i}"], list(row[f"k{i}"] or []), bounds) for i, match in enumerate(wanted)}
        if search is not None:
            search.compiled = compiled
        return [compiled[m][:2] for m in matches], bounds

    def _corpus(self) -> tuple[int, float]:
        """(rows, average lexemes per row) of this database, refreshed every :data:`STATS_TTL`
        seconds (shared by every storage object over the same database: a search opens one).

        The row count is the planner's estimate (``pg_class.reltuples``, kept by ANALYZE and
        autovacuum, refreshed after a bulk load) when the table is large, so it costs nothing;
        a small or never-analysed table is counted.
        """
        now = time.monotonic()
        stats = _CORPUS_STATS.get(self.db)
        if stats is None or now - stats[0] > STATS_TTL:
            estimate = float(self.db.scalar(
                "SELECT reltuples FROM pg_class WHERE oid = to_regclass('messages')") or -1)
            if estimate >= COUNT_BELOW:
                rows = int(estimate)
            else:
                rows = int(self.db.scalar("SELECT count(*) FROM messages") or 0)
            avgdl, ratio = average_length(self.db, AVGDL_SAMPLE)
            stats = _CORPUS_STATS[self.db] = (now, rows, max(avgdl, 1e-9), ratio)
        return stats[1], stats[2]

    def _tokens_per_lexeme(self) -> float:
        self._corpus()
        return _CORPUS_STATS[self.db][3]

    def _walk(self, columns: str, tsquery: str, limit: int, *, bounds: tuple[int, int] | None,
              where: str = "", where_params: Sequence[Any] = (), descending: bool = True,
              joins: str = "", where_joins: str | None = None, column_params: Sequence[Any] = (),
              windowed: bool = True, pair_keys: Sequence[int] = (), joined: tuple[str, str] = ("", ""),
              dense_pairs: bool = False) -> Walk:
        """The first ``limit`` rows of ``messages m`` matching ``tsquery`` (and ``where``),
        newest (highest id) first, or oldest first.

        A GIN index returns its matches in no order, so ``ORDER BY id LIMIT n`` over a common
        word read every match from the heap and sorted them (linear in the index). The walk
        reads id windows instead, newest first. In each window the planner either walks the
        id index backwards testing the stored vector and stops after ``limit`` rows (a common
        word), or intersects the GIN matches with the window (a rare one). The first window
        covers :data:`FIRST_WINDOW` ids; each next one is sized from the match density seen so
        far to fill what is missing (:data:`WINDOW_GROWTH` times the ids covered when nothing
        matched yet), at most :data:`MAX_WINDOW` ids. The rows read are then about ``limit``
        / density whatever the index size, and the result is exactly the first ``limit``
        matches in id order.

        Sparse matches among common words (a phrase of two frequent words) would make the
        windows test most of the table row by row; when the planner's estimate of the GIN
        candidates left (rows holding every word) is under half the ids the windows would
        still read, and at most :data:`GIN_REST_CAP`, the rest is read in one statement
        through the GIN index instead (its cost is the candidates' rechecks).

        A phrase (``pair_keys`` given) takes its candidates, in every window and in the rest,
        from the adjacent-pair index of schema/pg/0006 (ANDed with the window's id range):
        the rows holding its pair keys, about as many as its matches, rather than every row
        holding its words. Only those rows' vectors are tested (``ts_match_vq``: the ``@@``
        test, never a second index scan), and no row's keys are computed.

        ``joins`` give what ``columns`` and ``where`` read besides ``messages m``;
        ``where_joins`` (when given) only what ``where`` reads. ``joined`` = ``(columns, join)``
        is read besides ``columns`` for each row kept (the join over ``t``, the row's columns):
        the rest of a walk through GIN sorts its matches' ``columns`` without it. ``bounds``
        is the table's ``(min, max)`` id (None: empty). ``dense_pairs``: the phrase's pair keys
        are common (:meth:`_dense_pairs`), its first window is tested row by row in id order.

        A walk that outlasts its time budget (:func:`walk_budget`) stops between windows and
        says how far it read (:attr:`Walk.partial`).
        """
        order = "DESC" if descending else "ASC"
        way_in, test, test_args = _match_test(tsquery, pair_keys)
        kept_columns, kept_join = joined
        base = f"SELECT {columns}{kept_columns} FROM messages m{joins} WHERE {test}{where}"
        params = (*column_params, *test_args, *where_params)
        with self.db.connection() as conn:
            def fetch(sql: str, args: Sequence[Any]) -> list[dict[str, Any]]:
                # never a prepared statement: a generic plan cannot see how common the words
                # are, and walks the id index for a rare one
                return list(conn.execute(sql, args, prepare=False).fetchall())

            inner_joins = joins if where_joins is None else where_joins

            def through_gin(first: int, last: int, want: int) -> list[dict[str, Any]]:
                # "+ 0": the id index is no way in; the GIN matches are filtered and sorted by
                # id alone, then only the rows kept read their columns (each term's test and
                # the length of the stored vector: computed for every match before the sort,
                # they were most of a relaxed question's time) and are joined
                return fetch(
                    f"SELECT t.*{kept_columns} FROM (SELECT {columns} FROM (SELECT m.id FROM messages m"
                    f"{inner_joins} WHERE {test}{where} AND m.id + 0 BETWEEN %s AND %s"
                    f" ORDER BY m.id + 0 {order} LIMIT %s) k JOIN messages m ON m.id = k.id{inner_joins}) t"
                    f"{kept_join} ORDER BY t.id {order}",
                    (*column_params, *test_args, *where_params, first, last, want))

            def candidates(first: int, last: int) -> float:
                plan = fetch(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM messages m"
                             f" WHERE {way_in} AND m.id BETWEEN %s AND %s",
                             (*test_args[:1], first, last))
                return float(plan[0]["QUERY PLAN"][0]["Plan"]["Plan Rows"])

            if not windowed:
                return Walk(fetch(f"{base} ORDER BY m.id + 0 {order} LIMIT %s", (*params, int(limit))))
            began, budget = time.monotonic(), walk_budget()
            if bounds is None:
                return Walk([])
            lo, hi = bounds
            statement = f"{base} AND m.id BETWEEN %s AND %s ORDER BY m.id {order} LIMIT %s"
            # a phrase of common pairs: its first window tests the newest rows in id order
            # (ts_match_vq is no way into an index; every match holds the keys it skips)
            plain = (f"SELECT {columns}{kept_columns} FROM messages m{joins} WHERE ts_match_vq(m.tsv, %s::tsquery)"
                     f"{where} AND m.id BETWEEN %s AND %s ORDER BY m.id {order} LIMIT %s")
            found: list[dict[str, Any]] = []
            span, edge = FIRST_WINDOW, hi if descending else lo
            while True:
                first, last = (max(lo, edge - span + 1), edge) if descending else (edge, min(hi, edge + span - 1))
                want = limit - len(found)
                if dense_pairs:  # the first window only
                    rows, dense_pairs = fetch(plain, (*column_params, tsquery, *where_params, first, last, want)), False
                else:
                    rows = fetch(statement, (*params, first, last, want))
                found.extend(rows)
                if len(rows) >= want or (first <= lo if descending else last >= hi):
                    return Walk(found)
                edge = first - 1 if descending else last + 1
                covered, left = (hi - edge, edge - lo + 1) if descending else (edge - lo, hi - edge + 1)
                if time.monotonic() - began > budget:
                    return Walk(found, partial=(covered, hi - lo + 1))
                want = limit - len(found)
                needed = min(left, want * covered / len(found)) if found else left
                rest = (lo, edge) if descending else (edge, hi)
                if needed > 4 * FIRST_WINDOW:
                    estimate = candidates(*rest)
                    if estimate * 2 < needed and estimate <= GIN_REST_CAP:
                        return Walk(found + through_gin(*rest, want))
                if found:
                    span = int(needed * 1.25) + 1
                else:
                    span = covered * WINDOW_GROWTH
                span = min(max(span, FIRST_WINDOW), MAX_WINDOW)

    def _idfs(self, compiled: Sequence[tuple[str, Sequence[int]]], rows: int) -> list[float]:
        """bm25's IDF of each term (``(tsquery, pair keys)``), kept by this storage object (one
        search opens one: its strict and relaxed forms share their terms) for at most
        :data:`STATS_TTL` seconds, :data:`IDF_KEPT` terms.

        A word among the planner's most common lexemes (:meth:`_lexeme_shares`) takes its
        share of rows from there, at no cost per search; the other terms are counted through
        GIN, all in one statement (:meth:`_sampled_docs`), a word then at most as common as
        the least common word listed."""
        now = time.monotonic()
        found: dict[str, float] = {}
        wanted: dict[str, Sequence[int]] = {}
        for tsquery, pair_keys in compiled:
            known = self._idf_seen.get((tsquery, rows))
            if known is not None and now - known[0] <= STATS_TTL:
                found[tsquery] = known[1]
            else:
                wanted.setdefault(tsquery, pair_keys)
        if wanted:
            if len(self._idf_seen) + len(wanted) > IDF_KEPT:
                self._idf_seen.clear()
            # a store under COUNT_BELOW rows counts every term (cheap there): the planner's
            # sampled shares, present or not depending on when autovacuum last analysed the
            # table, made the same small store rank differently from one run to the next
            shares, floor = self._lexeme_shares() if rows >= COUNT_BELOW else ({}, None)
            docs: dict[str, float] = {}
            for tsquery in wanted:
                lexeme = _plain_lexeme(tsquery)
                if lexeme is not None and lexeme in shares:
                    docs[tsquery] = shares[lexeme] * rows
            counted = self._sampled_docs([(q, k) for q, k in wanted.items() if q not in docs], rows)
            for tsquery, count in counted.items():
                lexeme = _plain_lexeme(tsquery)
                docs[tsquery] = min(count, floor * rows) if lexeme is not None and floor is not None else count
            for tsquery, value in docs.items():
                found[tsquery] = bm25.idf(rows, value)
                self._idf_seen[(tsquery, rows)] = (now, found[tsquery])
        return [found[tsquery] for tsquery, _ in compiled]

    def _lexeme_shares(self, column: str = "tsv") -> tuple[dict[str, float], float | None]:
        """The planner's most common elements of ``messages.tsv`` (lexemes) or, for
        ``column="pairs"``, of the pair index's keys (schema/pg/0006), each with the share of
        rows holding it (ANALYZE's estimate from its sample of rows), and the smallest share
        an element needs to be listed (every element not listed is rarer); ``({}, None)``
        before the table was first analysed. Refreshed every :data:`STATS_TTL` seconds (one
        statement for both), shared by every storage object over the same database."""
        now = time.monotonic()
        known = _LEXEME_SHARES.get(self.db)
        if known is None or now - known[0] > STATS_TTL:
            rows = self.db.query(
                "SELECT tablename, most_common_elems::text::text[] AS elems, most_common_elem_freqs AS shares"
                " FROM pg_stats WHERE schemaname = current_schema() AND ((tablename = 'messages'"
                " AND attname = 'tsv') OR (tablename = 'messages_pairs' AND attname = 'hermes_pair_keys'))")
            stats: dict[str, tuple[dict[str, float], float | None]] = {"tsv": ({}, None), "pairs": ({}, None)}
            for row in rows:
                if row["elems"] and row["shares"]:
                    elems, values = list(row["elems"]), [float(v) for v in row["shares"]]
                    shares = dict(zip(elems, values[:len(elems)], strict=False))
                    # after the elements' shares come the least and greatest of them
                    floor = values[len(elems)] if len(values) > len(elems) else min(shares.values())
                    stats["tsv" if row["tablename"] == "messages" else "pairs"] = (shares, floor)
            known = _LEXEME_SHARES[self.db] = (now, stats)
        return known[1][column]

    def _dense_pairs(self, pair_keys: Sequence[int], rows: int) -> bool:
        """True when every pair key of a phrase is held by at least :data:`DENSE_PAIR_SHARE`
        of the rows: reading the keys' index costs more than testing the newest
        :data:`FIRST_WINDOW` rows one by one."""
        if not pair_keys or rows < COUNT_BELOW:
            return False
        shares, _ = self._lexeme_shares("pairs")
        return all(shares.get(str(key), 0.0) >= DENSE_PAIR_SHARE for key in pair_keys)

    def _sampled_docs(self, terms: Sequence[tuple[str, Sequence[int]]], rows: int) -> dict[str, float]:
        """The rows matching each term (``(tsquery, pair keys)``), estimated from its first
        :data:`IDF_SAMPLE` matches as GIN returns them (in table order, which is about id
        order): exact when it has fewer, else ``IDF_SAMPLE * rows / id span`` as
        :func:`bm25.sampled_idf` estimates. One statement for all of them.

        The plan is held to the GIN index (a bitmap scan that stops at the sample), never a
        table scan: a rare word the planner took for a common one would make a table scan
        read every row. A phrase is read through its pair keys (schema/pg/0006)."""
        if not terms:
            return {}
        parts, args = [], []
        for i, (tsquery, pair_keys) in enumerate(terms):
            _, test, test_args = _match_test(tsquery, pair_keys)
            parts.append(f"(SELECT %s::integer AS term, m.id FROM messages m WHERE {test} LIMIT %s)")
            args.extend([i, *test_args, IDF_SAMPLE])
        with self.db.connection() as conn:
            # outside a transaction the settings below end with this one; inside one (a
            # savepoint here) they are put back. Pipelined: one round trip, then the commit
            nested = conn.info.transaction_status != _IDLE
            with conn.pipeline(), conn.transaction():
                setting = conn.execute(
                    "SELECT current_setting('enable_seqscan') AS seq, current_setting('enable_indexscan') AS ix,"
                    " set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true)")
                counting = conn.execute(
                    "SELECT term, count(*) AS n, min(id) AS lo, max(id) AS hi FROM ("
                    + " UNION ALL ".join(parts) + ") t GROUP BY term", args, prepare=False)
                counts = {int(r["term"]): r for r in counting.fetchall()}
                saved = setting.fetchone()
                if nested:
                    conn.execute("SELECT set_config('enable_seqscan', %s, true),"
                                 " set_config('enable_indexscan', %s, true)", (saved["seq"], saved["ix"]))
        out: dict[str, float] = {}
        for i, (tsquery, _) in enumerate(terms):
            found = counts.get(i)
            count = float(found["n"]) if found else 0.0
            out[tsquery] = count if count < IDF_SAMPLE else (
                IDF_SAMPLE * rows / max(1, int(found["hi"]) - int(found["lo"]) + 1))
        return out

    def hits(self, match: Match, filters: Filters, *, sort: str, budget: int) -> list[Hit]:
        terms = positive_terms(match)
        compiled, bounds = self._tsqueries([match, *terms])
        (query, pair_keys), *compiled = compiled
        term_queries = [text for text, _ in compiled]
        presence = "".join(f", (m.tsv @@ %s::tsquery) AS t{i}" for i in range(len(term_queries)))
        where, where_params = _filters_sql(filters)
        # the session's source and title: looked up for each row kept (an index probe), never a
        # join the planner may turn into a scan of every session for a window of few matches
        joins = (" LEFT JOIN LATERAL (SELECT s.source, s.title FROM sessions s"
                 " WHERE s.id = m.session_id OFFSET 0) s ON true")
        by_source = any(field == "source" for field, _, _ in filters.value_filters())
        walk = self._walk(
            f"m.id, m.session_id, m.seq, m.role, m.timestamp, length(m.tsv) AS dl{presence}", query, int(budget),
            bounds=bounds, where=where, where_params=where_params, descending=sort != "oldest",
            joins=joins, where_joins=joins if by_source else "", column_params=term_queries,
            joined=(", coalesce(s.source, '') AS source, s.title", joins.replace("m.session_id", "t.session_id")),
            # a session filter: that session's few messages, through its own index
            windowed=filters.session_ids is None, pair_keys=pair_keys,
            dense_pairs=bool(pair_keys) and self._dense_pairs(pair_keys, self._corpus()[0]))
        rows = walk.rows
        if not rows:
            return Hits([], note=walk.note())
        corpus_rows, avgdl = self._corpus()
        corpus_rows = max(corpus_rows, len(rows))
        if len(terms) == 1 and terms[0] == match and _corpus_wide(filters) and walk.partial is None:
            # one term: the walk itself is a larger sample of its newest matches (the rows a
            # filter on hidden roles drops aside); one IDF only scales every score alike
            idf = [bm25.sampled_idf(len(rows), int(budget), rows[0]["id"], rows[-1]["id"], corpus_rows)]
        else:
            idf = self._idfs(compiled, corpus_rows)
        scores = row_scores(self.db, rows, idf, avgdl, [term_lexemes(t) for t in term_queries],
                            self._tokens_per_lexeme())
        hits = [Hit(int(row["id"]), row["session_id"], int(row["seq"]), row["role"], row["timestamp"],
                    row["source"], row["title"], score, match) for row, score in zip(rows, scores, strict=True)]
        return Hits(hits, note=walk.note())

    def hits_at(self, positions: Iterable[tuple[str, int]], filters: Filters) -> list[Hit]:
        wanted = sorted(set(positions))
        if not wanted:
            return []
        where, params = _filters_sql(filters)
        rows = self.db.query(
            "SELECT m.id, m.session_id, m.seq, m.role, m.timestamp, coalesce(s.source, '') AS source,"
            " s.title FROM messages m LEFT JOIN sessions s ON s.id = m.session_id"
            " JOIN unnest(%s::text[], %s::int[]) AS p(sid, seq) ON m.session_id = p.sid AND m.seq = p.seq"
            f" WHERE true{where} ORDER BY m.session_id, m.seq",
            ([sid for sid, _ in wanted], [int(seq) for _, seq in wanted], *params))
        return [Hit(int(r["id"]), r["session_id"], int(r["seq"]), r["role"], r["timestamp"],
                    r["source"], r["title"], 0.0, None) for r in rows]

    # -- bulk loading ------------------------------------------------------------------

    def source_state(self, key: str) -> dict[str, Any] | None:
        return self.db.query_one(
            "SELECT id, path, format, size, mtime, content_hash, resume_at, meta FROM sources"
            " WHERE path = %s", (key,))

    def session_cursor(self, session_id: str) -> tuple[int | None, int] | None:
        row = self.db.query_one(
            "SELECT s.source_id, (SELECT coalesce(max(seq) + 1, 0) FROM messages m"
            " WHERE m.session_id = s.id) AS next_seq FROM sessions s WHERE s.id = %s", (session_id,))
        if row is None:
            return None
        return row["source_id"], int(row["next_seq"])

    def bulk_writer(self, *, pipeline: bool, on_commit: Callable[[int, int], None]) -> BulkWriter:
        return PgBulkWriter(self.db, pipeline=pipeline, on_commit=on_commit)

    # -- maintenance ------------------------------------------------------------------

    def delete_session(self, session_id: str, *, reread_source: bool = True) -> int:
        with self.db.transaction() as conn:
            row = conn.execute("SELECT parent_session_id FROM sessions WHERE id = %s FOR UPDATE",
                               (session_id,)).fetchone()
            if row is None:
                raise SessionNotFound(session_id)
            # the file it came from is read again by the next index run (see storage_sqlite)
            if reread_source:
                conn.execute("UPDATE sources SET size = -1, mtime = -1, resume_at = NULL, content_hash = NULL,"
                             " meta = '{}' WHERE id = (SELECT source_id FROM sessions WHERE id = %s)",
                             (session_id,))
            removed = conn.execute("DELETE FROM messages WHERE session_id = %s", (session_id,)).rowcount
            conn.execute("UPDATE sessions SET parent_session_id = %s WHERE parent_session_id = %s",
                         (row["parent_session_id"], session_id))
            conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,))
        return int(removed)

    def lineage_rows(self) -> list[dict[str, Any]]:
        return self.db.query(
            "SELECT s.id, s.parent_session_id, s.origin_format, s.ended_at, s.started_at,"
            " CASE WHEN s.ended_at IS NULL THEN (SELECT max(m.timestamp) FROM messages m"
            "   WHERE m.session_id = s.id) END AS last_message FROM sessions s")
