"""The session index on PostgreSQL (:class:`PgSessionStorage`, engine ``"postgresql"``).

Same tables and JSON as the SQLite implementation (schema/pg/0001). Full-text search uses the
``tsv`` column (tsvector, GIN index) and a ``tsquery`` compiled from the same
:class:`~hermes_store.query.Match` the SQLite engine renders as FTS5
(:mod:`hermes_store.pgquery`, every term a bound parameter). Hits are scored with bm25
(k1 = 1.2, b = 0.75) over the query's terms, document frequencies estimated from a bounded
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
import time
import unicodedata
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from hermes_store.db import current_budget
from hermes_store.pgquery import (
    SEARCH_CONFIG,
    TERM_CAP,
    Op,
    Term,
    TsQueryError,
    pair_keys_sql,
    positive_terms,
    required_phrases,
    tsquery_sql,
)
from hermes_store.query import Match, QueryRejected
from hermes_store.sessions import bm25
from hermes_store.sessions.calltext import derived
from hermes_store.sessions.rows import (
    SESSION_COLUMNS,
    SessionNotFound,
    cjk_for,
    decode_meta,
    session_row,
)
from hermes_store.sessions.storage import (
    MESSAGE_ROW_FIELDS,
    Batch,
    BulkWriter,
    Filters,
    Hit,
    Hits,
    IndexLockTimeout,
    full_rows,
)
from hermes_store.sessions.storage_sql import FilterDialect, SqlSessionStorage, filter_clauses

logger = logging.getLogger(__name__)
PROJECTION_BACKFILL_KEY = "sessions_projection_backfill"  # as storage_sqlite (SQLite migration 0007)
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
GIN_REST_CAP = 100_000  # estimated GIN candidates one statement may recheck (~0.5 s; the rest of a walk)
SETTLE_AFTER = 20_000  # messages of one bulk load after which the index is settled (see settle)
SNIPPET_CHARS = 65536  # prefix of a message ts_headline reads
MESSAGE_TEXT_INDEXES = ("messages_tsv", "messages_pairs")  # GIN: words (pg 0001), phrase pairs (pg 0006)
_SESSION_SELECT = ", ".join(SESSION_COLUMNS)
_COPY_MESSAGES = f"COPY {{table}} ({', '.join(MESSAGE_ROW_FIELDS)}) FROM STDIN"


# (at, rows, avgdl) per open database
_CORPUS_STATS: weakref.WeakKeyDictionary[Any, tuple[float, int, float]] = weakref.WeakKeyDictionary()
# (at, {lexeme: share of rows}, least share listed) per open database
_LEXEME_SHARES: weakref.WeakKeyDictionary[Any, tuple[float, dict[str, float], float | None]] = (
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
    (:func:`hermes_store.db.current_budget`), else :data:`WALK_BUDGET`."""
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


def _sampled_idf(sample: Sequence[dict[str, Any]], size: int, rows: int) -> float:
    """bm25's IDF from ``sample``, a term's first matches in id order, at most ``size`` of
    them: ``size`` matches spread over an id span stand for ``size * rows / span`` documents
    (as the SQLite ranker estimates)."""
    docs = float(len(sample))
    if docs >= size:
        span = max(1, abs(int(sample[0]["id"]) - int(sample[-1]["id"])) + 1)
        docs = size * rows / span
    return bm25.idf(rows, docs)  # the cached row count may lag behind other writers: capped there


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



def _with_ellipses(headline: str, content: str, open_mark: str, close_mark: str) -> str:
    """``headline`` with ``...`` where it starts after / ends before the content (as FTS5's
    snippet marks a cut)."""
    plain = headline.replace(open_mark, "").replace(close_mark, "").strip()
    text = content.strip()
    if not plain or plain == text:
        return headline
    start = text.find(plain)
    prefix = "..." if start != 0 else ""
    suffix = "..." if start == -1 or start + len(plain) < len(text) else ""
    return prefix + headline.strip() + suffix


def _fold(text: str) -> str:
    """``text`` lower-cased with Latin diacritics removed, character for character (offsets kept)."""
    out = []
    for char in text:
        parts = unicodedata.normalize("NFD", char)
        base = parts[0]
        if len(parts) > 1 and base.isascii() and base.isalpha() and all(
                unicodedata.category(p) == "Mn" for p in parts[1:]):
            out.append(base.lower())
        else:
            low = char.lower()
            out.append(low if len(low) == 1 else char)
    return "".join(out)


_TOKEN = re.compile(r"[^\W_]+")  # a token as the index splits text (unicode61, hermes_tokens)
HIGHLIGHT_TOKENS = 4000  # distinct tokens of one message the highlighter looks up at most


def _marked_excerpt(content: str, marked: set[str], open_mark: str, close_mark: str,
                    words: int) -> str | None:
    """An excerpt of ``words`` tokens of ``content`` from a little before its first token in
    ``marked``, each such token between the marks; None when none occurs."""
    spans = [m.span() for m in _TOKEN.finditer(content)]
    hits = [i for i, (lo, hi) in enumerate(spans) if content[lo:hi] in marked]
    if not hits:
        return None
    # a message of up to ``words`` tokens comes back whole, a longer one as ``words`` tokens
    # from a little before the first match (as FTS5's snippet() cuts it)
    first = max(0, min(hits[0] - max(1, words // 4), len(spans) - words))
    last = min(len(spans), first + words) - 1
    start = spans[first][0] if first else 0
    end = spans[last][1] if last < len(spans) - 1 else len(content)
    pieces, cursor = [], start
    for i in hits:
        if i > last:
            break
        if i >= first:
            lo, hi = spans[i]
            pieces += [content[cursor:lo], open_mark, content[lo:hi], close_mark]
            cursor = hi
    pieces.append(content[cursor:end])
    return ("..." if start else "") + "".join(pieces) + ("..." if end < len(content) else "")


def _marks_tokens(headline: str, open_mark: str, close_mark: str) -> bool:
    """True when every marked piece of ``headline`` is one index token (ts_headline marks a
    whole e-mail address or URL its parser saw as one word)."""
    pattern = re.escape(open_mark) + "(.*?)" + re.escape(close_mark)
    return all(_TOKEN.fullmatch(piece) for piece in re.findall(pattern, headline, re.S))


def _token_match(match: Match) -> Op | Term | None:
    """Any single token of ``match``'s positive, non-CJK terms (a prefix where the term's
    last token is one): what marks a word of a snippet."""
    nodes: list[Op | Term] = []
    for term in positive_terms(match):
        if getattr(term, "cjk", False):
            continue  # projected bigrams: the generic highlighter marks CJK words
        for i, token in enumerate(term.tokens):
            node = Term((token,), bool(term.prefix and i == len(term.tokens) - 1))
            if node not in nodes:
                nodes.append(node)
    if not nodes:
        return None
    tree = nodes[0]
    for node in nodes[1:]:
        tree = Op("OR", tree, node)
    return tree


def _marked_spans(headline: str, open_mark: str, close_mark: str) -> tuple[str, list[tuple[int, int]]]:
    """``headline`` without its marks, and the marked ``(start, end)`` spans of that text."""
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    length, cursor = 0, 0
    while True:
        lo = headline.find(open_mark, cursor)
        hi = headline.find(close_mark, lo + len(open_mark)) if lo >= 0 else -1
        if lo < 0 or hi < 0:
            plain.append(headline[cursor:])
            break
        before, inside = headline[cursor:lo], headline[lo + len(open_mark):hi]
        plain += [before, inside]
        length += len(before)
        spans.append((length, length + len(inside)))
        length += len(inside)
        cursor = hi + len(close_mark)
    return "".join(plain), spans


def _join_phrases(headline: str, match: Match, open_mark: str, close_mark: str) -> str:
    """``headline`` with each multi-token term (a phrase, ``ask-codex``, ``src/auth.py``) marked
    as one span from its first to its last token, as FTS5's ``snippet()`` marks it
    (``ts_headline`` marks word by word, and not at all inside what its parser keeps whole)."""
    phrases = [t for t in positive_terms(match)
               if len(getattr(t, "tokens", ())) > 1 and not getattr(t, "cjk", False)]
    if not phrases or open_mark not in headline:
        return headline
    plain, spans = _marked_spans(headline, open_mark, close_mark)
    folded = _fold(plain)
    found: list[tuple[int, int]] = []
    for term in phrases:
        body = r"[\W_]+".join(re.escape(_fold(token)) for token in term.tokens)
        tail = r"[^\W_]*" if term.prefix else r"(?![^\W_])"
        found += [m.span() for m in re.finditer(r"(?<![^\W_])" + body + tail, folded)]
    if not found:
        return headline
    kept = [s for s in spans if not any(lo < s[1] and s[0] < hi for lo, hi in found)]
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(kept + found):
        if merged and lo < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    pieces, cursor = [], 0
    for lo, hi in merged:
        pieces += [plain[cursor:lo], open_mark, plain[lo:hi], close_mark]
        cursor = hi
    pieces.append(plain[cursor:])
    return "".join(pieces)


class PgSessionStorage(SqlSessionStorage):
    """Every read and write of the session index, in PostgreSQL."""

    engine = "postgresql"
    dialect = _DIALECT

    def __init__(self, db: Any) -> None:
        super().__init__(db)
        self._idf_seen: dict[tuple[str, int], tuple[float, float]] = {}  # -> (at, idf)

    # -- state ----------------------------------------------------------------

    def ready(self) -> bool:
        return self.db.table_exists("messages") and self.db.table_exists("sessions")

    def location(self) -> str:
        # not a file: nothing beside it to exclude from indexing (concurrent writers are kept
        # apart by the server's transactions and row locks, indexing runs by index_run_lock)
        return ""

    def one_connection(self) -> contextlib.AbstractContextManager[None]:
        """The block's statements over one pooled connection (:meth:`PgDatabase.held_connection`)."""
        return self.db.held_connection()

    @contextlib.contextmanager
    def index_run_lock(self, timeout: float) -> Iterator[None]:
        """A session-level advisory lock of this database, held on one pooled connection for
        the run (the server drops it if the host dies), tried every ``INDEX_LOCK_POLL`` s."""
        deadline = time.monotonic() + max(0.0, float(timeout))
        with self.db.connection() as conn:
            while not conn.execute("SELECT pg_try_advisory_lock(%s) AS got",
                                   (INDEX_RUN_LOCK,)).fetchone()["got"]:
                if time.monotonic() >= deadline:
                    raise IndexLockTimeout(
                        f"{self.db.display_url}: another `sessions index` run (on this or another "
                        f"host) has held the indexing lock for {timeout:g} s; try again when it finishes")
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
                       cjk: str | None) -> int:
        with self.db.transaction() as conn:
            row = conn.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFound(session_id)
            new = conn.execute(
                "INSERT INTO messages(session_id, seq, role, content, tool_name, tool_calls,"
                " tool_call_id, timestamp, cjk, calls, tools, search_text)"
                " SELECT %s, coalesce(max(seq) + 1, 0), %s, %s, %s, %s, %s, %s, %s, %s, %s, %s"
                " FROM messages WHERE session_id = %s RETURNING id",
                (session_id, role, content, tool_name, tool_calls, tool_call_id, timestamp, cjk,
                 *derived(role, content, tool_name, tool_calls), session_id)).fetchone()
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

    def _tsqueries(self, matches: Sequence[Match]) -> list[tuple[str, list[int]]]:
        """Each match compiled once by the server into ``tsquery`` text, with the phrase pair
        keys (schema/pg/0006) every row matching it holds (one round trip).

        Later statements bind that text as a constant (``%s::tsquery``): the planner then
        estimates its selectivity from the column statistics, and nothing of the compiled
        form (``hermes_tokens``, ``phraseto_tsquery``) is evaluated again for every row.
        """
        parts, params = [], []
        for i, match in enumerate(matches):
            sql, term_params = self._compile(match)
            keys_sql, key_params = pair_keys_sql(required_phrases(match))
            parts.append(f"({sql})::text AS q{i}, {keys_sql} AS k{i}")
            params.extend([*term_params, *key_params])
        row = self.db.query_one("SELECT " + ", ".join(parts), params)
        return [(row[f"q{i}"], list(row[f"k{i}"] or [])) for i in range(len(matches))]

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
            avgdl = float(self.db.scalar(
                "SELECT avg(length(tsv)) FROM (SELECT tsv FROM messages ORDER BY id DESC LIMIT %s) t",
                (AVGDL_SAMPLE,)) or 1.0)
            stats = _CORPUS_STATS[self.db] = (now, rows, max(avgdl, 1e-9))
        return stats[1], stats[2]

    def _walk(self, columns: str, tsquery: str, limit: int, *, where: str = "",
              where_params: Sequence[Any] = (), descending: bool = True, joins: str = "",
              where_joins: str | None = None,
              column_params: Sequence[Any] = (), windowed: bool = True,
              pair_keys: Sequence[int] = ()) -> Walk:
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
        ``where_joins`` (when given) only what ``where`` reads: the rest of a walk through GIN
        sorts matching ids without the others.

        A walk that outlasts its time budget (:func:`walk_budget`) stops between windows and
        says how far it read (:attr:`Walk.partial`).
        """
        order = "DESC" if descending else "ASC"
        way_in, test, test_args = _match_test(tsquery, pair_keys)
        base = f"SELECT {columns} FROM messages m{joins} WHERE {test}{where}"
        params = (*column_params, *test_args, *where_params)
        with self.db.connection() as conn:
            def fetch(sql: str, args: Sequence[Any]) -> list[dict[str, Any]]:
                # never a prepared statement: a generic plan cannot see how common the words
                # are, and walks the id index for a rare one
                return list(conn.execute(sql, args, prepare=False).fetchall())

            inner_joins = joins if where_joins is None else where_joins

            def through_gin(first: int, last: int, want: int) -> list[dict[str, Any]]:
                # "+ 0": the id index is no way in; the GIN matches are filtered and sorted by
                # id alone (a join the filters do not read is removed by the planner), and
                # only the rows kept are then read whole
                return fetch(
                    f"SELECT {columns} FROM messages m{joins} WHERE m.id IN (SELECT m.id"
                    f" FROM messages m{inner_joins} WHERE {test}{where} AND m.id + 0 BETWEEN %s AND %s"
                    f" ORDER BY m.id + 0 {order} LIMIT %s) ORDER BY m.id {order}",
                    (*params, first, last, want))

            def candidates(first: int, last: int) -> float:
                plan = fetch(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM messages m"
                             f" WHERE {way_in} AND m.id BETWEEN %s AND %s",
                             (*test_args[:1], first, last))
                return float(plan[0]["QUERY PLAN"][0]["Plan"]["Plan Rows"])

            if not windowed:
                return Walk(fetch(f"{base} ORDER BY m.id + 0 {order} LIMIT %s", (*params, int(limit))))
            began, budget = time.monotonic(), walk_budget()
            bounds = fetch("SELECT min(id) AS lo, max(id) AS hi FROM messages", ())
            if not bounds or bounds[0]["lo"] is None:
                return Walk([])
            lo, hi = int(bounds[0]["lo"]), int(bounds[0]["hi"])
            statement = f"{base} AND m.id BETWEEN %s AND %s ORDER BY m.id {order} LIMIT %s"
            found: list[dict[str, Any]] = []
            span, edge = FIRST_WINDOW, hi if descending else lo
            while True:
                first, last = (max(lo, edge - span + 1), edge) if descending else (edge, min(hi, edge + span - 1))
                want = limit - len(found)
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

    def _idf(self, tsquery: str, rows: int, pair_keys: Sequence[int] = ()) -> float:
        """bm25's IDF of one term, kept by this storage object (one search opens one: its
        strict and relaxed forms share their terms) for at most :data:`STATS_TTL` seconds,
        :data:`IDF_KEPT` terms.

        A word among the planner's most common lexemes (:meth:`_lexeme_shares`) takes its
        share of rows from there, at no cost per search; any other term is counted through
        GIN (:meth:`_sampled_docs`), a word then at most as common as the least common word
        listed."""
        now = time.monotonic()
        known = self._idf_seen.get((tsquery, rows))
        if known is None or now - known[0] > STATS_TTL:
            if len(self._idf_seen) >= IDF_KEPT:
                self._idf_seen.clear()
            shares, floor = self._lexeme_shares()
            lexeme = _plain_lexeme(tsquery)
            if lexeme is not None and lexeme in shares:
                docs = shares[lexeme] * rows
            else:
                docs = self._sampled_docs(tsquery, pair_keys, rows)
                if lexeme is not None and floor is not None:
                    docs = min(docs, floor * rows)
            idf = bm25.idf(rows, docs)
            known = self._idf_seen[(tsquery, rows)] = (now, idf)
        return known[1]

    def _lexeme_shares(self) -> tuple[dict[str, float], float | None]:
        """The planner's most common lexemes of ``messages.tsv``, each with the share of rows
        holding it (ANALYZE's estimate from its sample of rows), and the smallest share a
        lexeme needs to be listed (every lexeme not listed is rarer); ``({}, None)`` before the
        table was first analysed. Refreshed every :data:`STATS_TTL` seconds, shared by every
        storage object over the same database."""
        now = time.monotonic()
        known = _LEXEME_SHARES.get(self.db)
        if known is None or now - known[0] > STATS_TTL:
            row = self.db.query_one(
                "SELECT most_common_elems::text::text[] AS elems, most_common_elem_freqs AS shares"
                " FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'messages'"
                " AND attname = 'tsv'")
            shares: dict[str, float] = {}
            floor = None
            if row and row["elems"] and row["shares"]:
                elems, values = list(row["elems"]), [float(v) for v in row["shares"]]
                shares = dict(zip(elems, values[:len(elems)], strict=False))
                # after the elements' shares come the least and greatest of them
                floor = values[len(elems)] if len(values) > len(elems) else min(shares.values())
            known = _LEXEME_SHARES[self.db] = (now, shares, floor)
        return known[1], known[2]

    def _sampled_docs(self, tsquery: str, pair_keys: Sequence[int], rows: int) -> float:
        """The rows matching one term, estimated from its first :data:`IDF_SAMPLE` matches
        as GIN returns them (in table order, which is about id order): exact when it has
        fewer, else ``IDF_SAMPLE * rows / id span`` as :func:`_sampled_idf` estimates.

        The plan is held to the GIN index (a bitmap scan that stops at the sample), never a
        table scan: a rare word the planner took for a common one would make a table scan
        read every row. A phrase is read through its pair keys (schema/pg/0006)."""
        _, test, args = _match_test(tsquery, pair_keys)
        with self.db.connection() as conn, conn.transaction():
            saved = conn.execute(
                "SELECT current_setting('enable_seqscan') AS seq, current_setting('enable_indexscan') AS ix,"
                " set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true)"
            ).fetchone()
            found = conn.execute(
                f"SELECT count(*) AS n, min(id) AS lo, max(id) AS hi FROM"
                f" (SELECT m.id FROM messages m WHERE {test} LIMIT %s) t",
                (*args, IDF_SAMPLE), prepare=False).fetchone()
            conn.execute("SELECT set_config('enable_seqscan', %s, true), set_config('enable_indexscan', %s, true)",
                         (saved["seq"], saved["ix"]))
        count = float(found["n"] or 0)
        if count < IDF_SAMPLE:
            return count
        return IDF_SAMPLE * rows / max(1, int(found["hi"]) - int(found["lo"]) + 1)

    def hits(self, match: Match, filters: Filters, *, sort: str, budget: int) -> list[Hit]:
        terms = positive_terms(match)
        (query, pair_keys), *compiled = self._tsqueries([match, *terms])
        term_queries = [text for text, _ in compiled]
        presence = "".join(f", (m.tsv @@ %s::tsquery) AS t{i}" for i in range(len(term_queries)))
        where, where_params = _filters_sql(filters)
        # the session's source and title: looked up for each row kept (an index probe), never a
        # join the planner may turn into a scan of every session for a window of few matches
        joins = (" LEFT JOIN LATERAL (SELECT s.source, s.title FROM sessions s"
                 " WHERE s.id = m.session_id OFFSET 0) s ON true")
        by_source = any(field == "source" for field, _, _ in filters.value_filters())
        walk = self._walk(
            "m.id, m.session_id, m.seq, m.role, m.timestamp, coalesce(s.source, '') AS source,"
            f" s.title, length(m.tsv) AS dl{presence}", query, int(budget),
            where=where, where_params=where_params, descending=sort != "oldest",
            joins=joins, where_joins=joins if by_source else "", column_params=term_queries,
            # a session filter: that session's few messages, through its own index
            windowed=filters.session_ids is None, pair_keys=pair_keys)
        rows = walk.rows
        if not rows:
            return Hits([], note=walk.note())
        corpus_rows, avgdl = self._corpus()
        corpus_rows = max(corpus_rows, len(rows))
        if len(terms) == 1 and terms[0] == match and _corpus_wide(filters) and walk.partial is None:
            # one term: the walk itself is a larger sample of its newest matches (the rows a
            # filter on hidden roles drops aside); one IDF only scales every score alike
            idf = [_sampled_idf(rows, int(budget), corpus_rows)]
        else:
            idf = [self._idf(text, corpus_rows, keys) for text, keys in compiled]
        hits = []
        for row in rows:
            norm = bm25.length_norm(float(row["dl"] or 0), avgdl)
            score = sum(bm25.term_score(weight, 1.0, norm) for i, weight in enumerate(idf) if row[f"t{i}"])
            hits.append(Hit(int(row["id"]), row["session_id"], int(row["seq"]), row["role"],
                            row["timestamp"], row["source"], row["title"], score, match))
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

    def snippet(self, match: Match, message_id: int, *, open_mark: str, close_mark: str,
                tokens: int) -> str | None:
        """ts_headline of the content, else of the tool calls when only they match (marked
        ``[tool call]``); None when neither can be marked."""
        text = self._snippet_of("content", match, message_id, open_mark, close_mark, tokens)
        if text and open_mark in text and self._text_matches(match, message_id):
            return text
        calls = self._snippet_of("calls", match, message_id, open_mark, close_mark, tokens)
        if calls and open_mark in calls:
            return f"[tool call] {calls}"
        return text

    def _text_matches(self, match: Match, message_id: int) -> bool:
        """True when the message's own text (not its tool calls) matches ``match``."""
        try:
            query_sql, params = tsquery_sql(match)
        except TsQueryError:
            return True
        return bool(self.db.scalar(
            f"SELECT to_tsvector('{SEARCH_CONFIG}', hermes_tokens(coalesce(search_text, content), 262144))"
            f" || to_tsvector('{SEARCH_CONFIG}', left(coalesce(cjk, ''), 262144)) @@ ({query_sql})"
            " FROM messages WHERE id = %s", (*params, int(message_id))))

    def _snippet_of(self, column: str, match: Match, message_id: int, open_mark: str,
                    close_mark: str, tokens: int) -> str | None:
        column = {"content": "content", "calls": "coalesce(calls, '')"}[column]
        try:
            query_sql, params = tsquery_sql(match)
        except TsQueryError:
            return None
        words = max(3, int(tokens))
        # MinWords just under MaxWords: a message of up to ``tokens`` words comes back whole, as
        # FTS5's snippet() returns it (with words // 2 ts_headline cut short messages mid-way)
        options = (f'StartSel="{open_mark}", StopSel="{close_mark}", MaxWords={words}, '
                   f'MinWords={words - 1}, ShortWord=0, HighlightAll=false')
        row = self.db.query_one(
            f"SELECT left({column}, {SNIPPET_CHARS}) AS content,"
            f" ts_headline('{SEARCH_CONFIG}', left({column}, {SNIPPET_CHARS}), {query_sql}, %s) AS headline"
            " FROM messages WHERE id = %s", (*params, options, int(message_id)))
        if row is None or row["headline"] is None:
            return None
        if open_mark in row["headline"] and _marks_tokens(row["headline"], open_mark, close_mark):
            headline = _join_phrases(row["headline"], match, open_mark, close_mark)
            return _with_ellipses(headline, row["content"], open_mark, close_mark)
        # ts_headline reads the raw text with its own parser (no diacritics folding; a path,
        # e-mail address or URL is one token): mark the tokens the index sees ourselves
        excerpt = self._highlight(row["content"], match, open_mark, close_mark, words)
        return None if excerpt is None else _join_phrases(excerpt, match, open_mark, close_mark)

    def _highlight(self, content: str, match: Match, open_mark: str, close_mark: str,
                   words: int) -> str | None:
        """An excerpt of ``content`` with every token marked that the index stems or folds to
        a token of ``match`` (``runs`` for ``running``, ``cafés`` for ``cafe``): the tokens are
        split as the index splits text and looked up with the index's own configuration."""
        tokens_match = _token_match(match)
        if tokens_match is None:
            return None
        distinct = list(dict.fromkeys(m.group() for m in _TOKEN.finditer(content)))[:HIGHLIGHT_TOKENS]
        if not distinct:
            return None
        query_sql, params = tsquery_sql(tokens_match)
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT t FROM unnest(%s::text[]) AS t WHERE"
                f" to_tsvector('{SEARCH_CONFIG}', hermes_tokens(t, {TERM_CAP})) @@ ({query_sql})",
                (distinct, *params), prepare=False).fetchall()
        return _marked_excerpt(content, {r["t"] for r in rows}, open_mark, close_mark, words)

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

    def delete_session(self, session_id: str) -> int:
        with self.db.transaction() as conn:
            row = conn.execute("SELECT parent_session_id FROM sessions WHERE id = %s FOR UPDATE",
                               (session_id,)).fetchone()
            if row is None:
                raise SessionNotFound(session_id)
            # the file it came from is read again by the next index run (see storage_sqlite)
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

    def stats(self) -> dict[str, Any]:
        per_source = {
            r["source"]: {"sessions": int(r["sessions"]), "messages": int(r["messages"])}
            for r in self.db.query(
                "SELECT source, count(*) AS sessions, coalesce(sum(message_count), 0) AS messages"
                " FROM sessions GROUP BY source ORDER BY source")
        }
        return {
            "sessions": int(self.db.scalar("SELECT count(*) FROM sessions") or 0),
            "messages": int(self.db.scalar("SELECT count(*) FROM messages") or 0),
            "per_source": per_source,
            "sources_indexed": int(self.db.scalar("SELECT count(*) FROM sources") or 0),
            "db_bytes": self.db.size_bytes(),
            "index_bytes": int(self.db.scalar(
                "SELECT sum(pg_relation_size(to_regclass(i))) FROM unnest(%s::text[]) AS i",
                (list(MESSAGE_TEXT_INDEXES),)) or 0),
        }

    # -- health -----------------------------------------------------------------------

    def integrity_problems(self) -> list[str]:
        problems = []
        orphans = int(self.db.scalar(
            "SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id)") or 0)
        if orphans:
            problems.append(f"{orphans} message(s) belong to no session")
        invalid = self.db.query(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND NOT i.indisvalid")
        problems += [f"index {r['relname']} is invalid (rebuild it with REINDEX)" for r in invalid]
        return problems

    def text_indexes(self) -> list[str]:
        rows = self.db.query(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE a.amname = 'gin' AND n.nspname = current_schema() ORDER BY c.relname")
        return [r["relname"] for r in rows]

    def check_text_index(self, name: str) -> str | None:
        if name not in self.text_indexes():
            return f"no full-text index named {name}"
        valid = self.db.scalar(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname = %s", (name,))
        return None if valid else f"index {name} is invalid"

    def rebuild_text_index(self, name: str) -> None:
        if name not in self.text_indexes():
            raise ValueError(f"no full-text index named {name}")
        from psycopg import sql

        with self.db.connection() as conn:
            conn.execute(sql.SQL("REINDEX INDEX {}").format(sql.Identifier(name)))

    def session_counts(self, source_ids: Sequence[int]) -> dict[int, int]:
        rows = self.db.query("SELECT source_id, count(*) AS n FROM sessions WHERE source_id = ANY(%s)"
                             " GROUP BY source_id", ([int(i) for i in source_ids],))
        return {int(r["source_id"]): int(r["n"]) for r in rows}

    def backfill_projection(self, chunk: int) -> int:
        """Recompute the ``cjk`` projection of messages with non-ASCII text while the marker a
        SQLite migration left (copied over by ``migrate``) is present, then drop it."""
        if not self.ready() or self.db.scalar(
                "SELECT value FROM store_meta WHERE key = %s", (PROJECTION_BACKFILL_KEY,)) is None:
            return 0
        updated, last_id = 0, 0
        while True:
            rows = self.db.query(
                "SELECT id, role, content, cjk FROM messages WHERE id > %s AND content ~ '[^\\x01-\\x7f]'"
                " ORDER BY id LIMIT %s", (last_id, int(chunk)))
            if not rows:
                break
            last_id = int(rows[-1]["id"])
            changes = [(new, row["id"]) for row in rows
                       if (new := cjk_for(str(row["role"]), str(row["content"]))) != row["cjk"]]
            if changes:
                self.db.executemany("UPDATE messages SET cjk = %s WHERE id = %s", changes)
                updated += len(changes)
        self.db.execute("DELETE FROM store_meta WHERE key = %s", (PROJECTION_BACKFILL_KEY,))
        return updated

    def rebuild_message_index(self) -> None:
        """Rebuild the GIN indexes over the messages' stored tsvectors (words, phrase pairs)."""
        for name in MESSAGE_TEXT_INDEXES:
            if name in self.text_indexes():
                self.rebuild_text_index(name)

    def probe_word(self, message_id: int, word: str) -> str | None:
        """ts_headline of ``word`` on that message, matched through its stored tsvector."""
        found = self.db.scalar(
            f"SELECT ts_headline('{SEARCH_CONFIG}', left(content, {SNIPPET_CHARS}),"
            f" phraseto_tsquery('{SEARCH_CONFIG}', %s), 'StartSel=[, StopSel=]')"
            f" FROM messages WHERE id = %s AND tsv @@ phraseto_tsquery('{SEARCH_CONFIG}', %s)",
            (word, message_id, word))
        if not found or "[" not in found:
            return f"message {message_id} is not found by searching for {word!r}"
        return None


class PgBulkWriter(BulkWriter):
    """Bulk-loader batches in one transaction each: sources, sessions, then messages by COPY."""

    def __init__(self, db: Any, *, pipeline: bool, on_commit: Callable[[int, int], None]) -> None:
        self.db = db
        self.on_commit = on_commit
        self.cpu_seconds = 0.0
        self.inserted = 0  # messages this writer committed
        self._pool = ThreadPoolExecutor(max_workers=1) if pipeline else None
        self._future: Future[None] | None = None

    def write(self, batch: Batch, *, wait: bool) -> None:
        self.wait()
        if self._pool is None:
            self._timed(self._write, batch)
            return
        self._future = self._pool.submit(self._timed, self._write, batch)
        if wait:
            self.wait()

    def forget_source(self, source_id: int) -> None:
        self.wait()
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE source_id = %s", (source_id,))
            conn.execute("UPDATE sources SET resume_at = NULL, content_hash = NULL, meta = '{}'"
                         " WHERE id = %s", (source_id,))

    def wait(self) -> None:
        future, self._future = self._future, None
        if future is not None:
            future.result()

    def close(self) -> None:
        failed = False
        try:
            if self._future is not None:
                try:
                    self._future.result()
                except BaseException:  # the caller already propagates the first error
                    failed = True
                self._future = None
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
        if not failed:
            self.settle()

    def settle(self) -> None:
        """After a bulk load of at least :data:`SETTLE_AFTER` messages (or a tenth of the
        table): merge the GIN index's pending list into the index and refresh the planner's
        statistics, so the next search neither scans a long unsorted pending list nor plans
        with the counts of an emptier table. A failure here loses nothing (the rows are
        committed; autovacuum does the same later) and is only logged."""
        if self.inserted < SETTLE_AFTER:
            estimate = float(self.db.scalar(
                "SELECT reltuples FROM pg_class WHERE oid = to_regclass('messages')") or -1)
            if self.inserted == 0 or self.inserted * 10 < estimate:
                return
        try:
            with self.db.connection() as conn:
                for name in MESSAGE_TEXT_INDEXES:
                    conn.execute("SELECT gin_clean_pending_list(to_regclass(%s))", (name,))
                conn.execute("ANALYZE messages, sessions")
        except Exception as exc:  # noqa: BLE001 - maintenance only, see the docstring
            logger.warning("after the bulk load: refreshing the search index statistics failed: %s", exc)

    def _timed(self, work: Callable[[Batch], None], batch: Batch) -> None:
        started = time.thread_time()
        try:
            work(batch)
        finally:
            self.cpu_seconds += time.thread_time() - started

    def _write(self, batch: Batch) -> None:
        with self.db.transaction() as conn:
            # a whole batch is one COPY: bounded by its own, longer limit (10 minutes)
            conn.execute("SET LOCAL statement_timeout = '600s'")
            for handle, _ in batch.sources:
                handle.source_id = int(conn.execute(
                    "INSERT INTO sources(path, format, imported_at) VALUES (%s, %s, %s)"
                    " ON CONFLICT (path) DO UPDATE SET format = excluded.format RETURNING id",
                    (handle.key, handle.format, time.time())).fetchone()["id"])
            for delta in batch.sessions:
                self._write_session(conn, delta)
            inserted = self._copy_messages(conn, full_rows(batch.rows)) if batch.rows else 0
            for delta in batch.sessions:
                if delta.added:
                    conn.execute(
                        "UPDATE sessions SET message_count = message_count + %s,"
                        " started_at = coalesce(started_at, %s),"
                        " ended_at = CASE WHEN %s AND %s::float8 IS NOT NULL"
                        "   THEN greatest(coalesce(ended_at, %s), %s) ELSE ended_at END WHERE id = %s",
                        (delta.added, delta.min_ts, bool(delta.derive_end), delta.max_ts,
                         delta.max_ts, delta.max_ts, delta.session_id))
            for handle, progress in batch.sources:
                conn.execute(
                    "UPDATE sources SET size = %s, mtime = %s, content_hash = %s, resume_at = %s,"
                    " imported_at = %s, meta = %s WHERE id = %s",
                    (progress["size"], progress["mtime"], progress["content_hash"],
                     progress["resume_at"], time.time(), progress["meta"], handle.source_id))
        self.inserted += inserted
        self.on_commit(inserted, sum(1 for delta in batch.sessions if delta.is_new))

    @staticmethod
    def _write_session(conn: Any, delta: Any) -> None:
        fields = dict(delta.fields)
        meta = fields.pop("meta", None)
        owner = delta.owner
        if delta.is_new:
            conn.execute(
                "INSERT INTO sessions(id, origin_format, source, title, model, workspace, started_at,"
                " ended_at, parent_session_id, source_id, meta)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                (delta.session_id, owner.format, fields.get("source") or "cli", fields.get("title"),
                 fields.get("model"), fields.get("workspace"), fields.get("started_at"),
                 fields.get("ended_at"), fields.get("parent_session_id"), owner.source_id,
                 json.dumps(meta or {}, ensure_ascii=False)))
            return
        if fields:
            from psycopg import sql

            names = sorted(fields)
            statement = sql.SQL("UPDATE sessions SET {} WHERE id = %s").format(
                sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(n)) for n in names))
            conn.execute(statement, [fields[n] for n in names] + [delta.session_id])
        if meta:
            row = conn.execute("SELECT meta FROM sessions WHERE id = %s FOR UPDATE",
                               (delta.session_id,)).fetchone()
            stored = decode_meta(row["meta"] if row else None)
            stored.update(meta)
            conn.execute("UPDATE sessions SET meta = %s WHERE id = %s",
                         (json.dumps(stored, ensure_ascii=False), delta.session_id))

    @staticmethod
    def _copy_messages(conn: Any, rows: list[tuple[Any, ...]]) -> int:
        """COPY the rows straight in; rows already stored (same session and seq) are skipped."""
        import psycopg

        try:
            with conn.transaction(), conn.cursor() as cursor:  # a savepoint
                with cursor.copy(_COPY_MESSAGES.format(table="messages")) as copy:
                    for row in rows:
                        copy.write_row(row)
            return len(rows)
        except psycopg.errors.UniqueViolation:
            pass
        with conn.cursor() as cursor:
            cursor.execute(
                "CREATE TEMP TABLE IF NOT EXISTS hs_message_batch (ord bigserial, session_id text,"
                " seq integer, role text, content text, tool_name text, tool_calls text,"
                " tool_call_id text, timestamp double precision, cjk text, calls text, tools text,"
                " search_text text) ON COMMIT DELETE ROWS")
            with cursor.copy(_COPY_MESSAGES.format(table="hs_message_batch")) as copy:
                for row in rows:
                    copy.write_row(row)
            fields = ", ".join(MESSAGE_ROW_FIELDS)
            cursor.execute(f"INSERT INTO messages ({fields}) SELECT {fields} FROM hs_message_batch"
                           " ORDER BY ord ON CONFLICT (session_id, seq) DO NOTHING")
            return cursor.rowcount
