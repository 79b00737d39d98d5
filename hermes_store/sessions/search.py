"""Message-level search over the session index (``messages_fts``).

:func:`search_messages` is the library entry point (the CLI, the
``session_search`` tool and the recall layer call it). Ranking, in order:

1. bm25 with column weights (:data:`COLUMN_WEIGHTS`; computed by
   :mod:`hermes_store.sessions.rank` in time independent of index size), or time order when
   ``sort`` is ``newest``/``oldest``;
2. hits whose session title contains every query word come first;
3. automation sources (:data:`AUTOMATION_SOURCES`) come after interactive ones;
4. a strict AND match first, then (via :func:`hermes_store.query.run_match`)
   OR-relaxed hits for natural-language questions.

Bounded work: ranking every match of a common word costs time linear in the
index, so only the newest :data:`RANK_BUDGET` matches that pass the filters
(the oldest for ``sort="oldest"``) are ranked: one newest-first walk of the
doclists that stops there, with the rank function
(:mod:`hermes_store.sessions.rank`, whose IDF is sampled) evaluated only for
those rows.

Snippets are built only for the rows returned, with ``>>>``/``<<<`` around
matched words.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_store import timeutil
from hermes_store.db import Database
from hermes_store.query import (
    HIGHLIGHT_CLOSE,
    HIGHLIGHT_OPEN,
    highlight_excerpt,
    run_match,
    tokenize,
)
from hermes_store.sessions.rank import ensure_rank_function

AUTOMATION_SOURCES: tuple[str, ...] = ("cron", "subagent")
COLUMN_WEIGHTS: tuple[float, float] = (1.0, 1.0)  # messages_fts(search_content, cjk)
SORTS: tuple[str, ...] = ("relevance", "newest", "oldest")
RANK_BUDGET = 1000  # newest filtered matches ranked per expression
SNIPPET_TOKENS = 24
MAX_LIMIT = 1000
# Context smoothing (relevance sort): a hit's score gains these fractions of the scores of
# matching messages 1 and 2 positions away in the same session (conversational evidence
# clusters). Measured on LoCoMo with scripts/eval_locomo.py: hit@10 +0.06.
CONTEXT_WEIGHTS: dict[int, float] = {1: 0.6, 2: 0.3}
SMOOTHING_POOL = 50  # candidates ranked before smoothing (at least ``limit``)


class SearchError(ValueError):
    """A search argument is invalid (the message names it)."""


@dataclass
class Hit:
    """One matching message (without its snippet until :func:`attach_snippets`)."""

    message_id: int
    session_id: str
    seq: int
    role: str
    timestamp: float | None
    source: str
    title: str | None
    score: float
    expression: str
    snippet: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of a result row."""
        return {
            "message_id": self.message_id,
            "session_id": self.session_id,
            "seq": self.seq,
            "role": self.role,
            "timestamp": self.timestamp,
            "source": self.source,
            "title": self.title,
            "snippet": self.snippet,
            "score": round(self.score, 4),
        }


@dataclass
class SearchResult:
    """What :func:`search_messages` returns.

    ``results`` are dicts with the keys ``message_id, session_id, seq, role,
    timestamp, source, title, snippet, score``; ``note`` explains a fallback or
    relaxation (``query_note`` in JSON); ``mode`` is ``strict``, ``relaxed``,
    ``literal`` or ``empty``.
    """

    query: str
    note: str | None
    results: list[dict[str, Any]] = field(default_factory=list)
    mode: str = "strict"

    @property
    def query_note(self) -> str | None:
        """The note under its JSON name."""
        return self.note

    @property
    def count(self) -> int:
        """Number of results."""
        return len(self.results)

    def to_json(self) -> dict[str, Any]:
        """``{"query", "query_note"?, "count", "results"}``."""
        data: dict[str, Any] = {"query": self.query}
        if self.note:
            data["query_note"] = self.note
        data["count"] = self.count
        data["results"] = self.results
        return data


# --------------------------------------------------------------------------- dates

def parse_when(value: Any, *, end_of_day: bool = False, now: float | None = None) -> float | None:
    """A date argument as epoch seconds (see :func:`hermes_store.timeutil.parse_when`).

    Raises :class:`SearchError` naming what is accepted.
    """
    try:
        return timeutil.parse_when(value, end_of_day=end_of_day, now=now)
    except timeutil.TimeParseError as exc:
        raise SearchError(str(exc)) from exc


# --------------------------------------------------------------------------- filters


@dataclass
class Filters:
    """Row filters applied inside the ranked query."""

    roles: Sequence[str] | None = None
    sources: Sequence[str] | None = None
    exclude_sources: Sequence[str] | None = None
    since: float | None = None
    until: float | None = None
    session_ids: Sequence[str] | None = None

    def sql(self) -> tuple[str, list[Any]]:
        """``AND ...`` clauses and their parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, values, negate in (
            ("m.role", self.roles, False),
            ("COALESCE(s.source, '')", self.sources, False),
            ("COALESCE(s.source, '')", self.exclude_sources, True),
            ("m.session_id", self.session_ids, False),
        ):
            if values is None:
                continue
            values = list(values)
            if not values:
                if not negate:
                    clauses.append("0")
                continue
            marks = ",".join("?" * len(values))
            clauses.append(f"{column} {'NOT IN' if negate else 'IN'} ({marks})")
            params.extend(values)
        if self.since is not None:
            clauses.append("m.timestamp >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("m.timestamp <= ?")
            params.append(self.until)
        return "".join(f" AND {c}" for c in clauses), params


def _clean_list(values: Iterable[str] | str | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = values.split(",")
    cleaned = [v.strip() for v in values if v and v.strip()]
    return cleaned


# --------------------------------------------------------------------------- engine


def index_ready(db: Database) -> bool:
    """True when the session index tables exist in ``db``."""
    return db.table_exists("messages_fts") and db.table_exists("sessions")


class _Ranker:
    """Runs one FTS5 expression and returns ranked :class:`Hit` rows (bounded work)."""

    def __init__(self, db: Database, filters: Filters, sort: str) -> None:
        self.db = db
        self.filters = filters
        self.sort = sort
        where, self.params = filters.sql()
        weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
        direction = "ASC" if sort == "oldest" else "DESC"
        # FTS5 consumes the rowid ORDER BY, so the scan stops after LIMIT filtered matches and
        # the rank function runs only for those rows.
        self.sql = (
            "SELECT m.id, m.session_id, m.seq, m.role, m.timestamp, COALESCE(s.source, ''), s.title, "
            f"{ensure_rank_function(db)}(messages_fts, {weights}) "
            "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
            "LEFT JOIN sessions s ON s.id = m.session_id "
            f"WHERE messages_fts MATCH ?{where} "
            f"ORDER BY messages_fts.rowid {direction} LIMIT ?"
        )

    def fetch(self, expression: str, limit: int) -> list[Hit]:
        """Up to ``limit`` best hits for ``expression`` (raises engine errors for run_match).

        Only the newest ``max(RANK_BUDGET, limit)`` matching rows that pass the
        filters are ranked (the oldest ones for ``sort='oldest'``).
        """
        rows = self.db.execute(self.sql, (expression, *self.params, max(RANK_BUDGET, limit))).fetchall()
        hits = [Hit(int(r[0]), r[1], int(r[2]), r[3], r[4], r[5], r[6], -float(r[7]), expression)
                for r in rows]
        hits.sort(key=self.sort_key)
        hits.sort(key=lambda h: h.source in AUTOMATION_SOURCES)  # stable: demote automation
        return hits[:limit]

    def sort_key(self, hit: Hit) -> tuple[float, float]:
        """Order inside one class of source."""
        ts = hit.timestamp if hit.timestamp is not None else 0.0
        if self.sort == "newest":
            return (-ts, -hit.score)
        if self.sort == "oldest":
            return (ts, -hit.score)
        return (-hit.score, 0.0)


def find_hits(
    db: Database,
    query: str,
    *,
    limit: int = 20,
    roles: Iterable[str] | str | None = None,
    sources: Iterable[str] | str | None = None,
    exclude_sources: Iterable[str] | str | None = None,
    since: Any = None,
    until: Any = None,
    sort: str = "relevance",
    session_ids: Iterable[str] | None = None,
    smooth: bool = True,
    expand_context: bool = False,
) -> tuple[list[Hit], str | None, str]:
    """Ranked hits without snippets: ``(hits, note, mode)``. See :func:`search_messages`."""
    if sort not in SORTS:
        raise SearchError(f"sort must be one of {', '.join(SORTS)}; got {sort!r}")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise SearchError(f"limit must be a positive integer; got {limit!r}")
    limit = min(limit, MAX_LIMIT)
    filters = Filters(
        roles=_clean_list(roles),
        sources=_clean_list(sources),
        exclude_sources=_clean_list(exclude_sources),
        since=parse_when(since),
        until=parse_when(until, end_of_day=True),
        session_ids=list(session_ids) if session_ids is not None else None,
    )
    if not index_ready(db):
        return [], None, "empty"
    ranker = _Ranker(db, filters, sort)
    smoothing = sort == "relevance" and (smooth or expand_context)
    pool = max(limit, SMOOTHING_POOL) if smoothing else limit
    outcome = run_match(ranker.fetch, query, pool, key=lambda h: h.message_id)
    hits: list[Hit] = list(outcome.rows)
    note, mode = outcome.note, outcome.mode
    if smoothing and hits:
        strict = outcome.plan.strict if outcome.plan else None
        hits = _smooth(db, hits, filters, strict=strict, expand=expand_context)[:limit]
        if mode == "relaxed":
            exact = sum(1 for h in hits if h.expression == strict)
            if exact == len(hits):
                mode, note = "strict", outcome.plan.note if outcome.plan else None
            elif outcome.plan is None or note != outcome.plan.note:
                note = (f"{exact} result(s) matched every word; "
                        f"added {len(hits) - exact} matching some of the words")
    hits = hits[:limit]
    if sort == "relevance" and hits:
        words = _title_words(query)
        if words:
            hits.sort(key=lambda h: not _title_has(h.title, words))
    return hits, note, mode


def _smooth(db: Database, hits: list[Hit], filters: Filters, *, strict: str | None,
            expand: bool) -> list[Hit]:
    """Re-rank by context: each score gains weighted scores of nearby matching messages.

    Strict (every-word) hits stay ahead of relaxed ones. With ``expand``, the
    immediate neighbours of matching messages become candidates too (scored by
    their neighbours only), so a reply next to a matching question can surface.
    bm25 sums over the query's phrases, so strict and relaxed scores of the same
    words are comparable.
    """
    raw = {(h.session_id, h.seq): h.score for h in hits}
    candidates = {(h.session_id, h.seq): h for h in hits}
    if expand:
        wanted = {(h.session_id, h.seq + d) for h in hits for d in (-1, 1)}
        wanted = wanted - set(raw)
        for hit in _load_positions(db, wanted, filters):
            candidates[(hit.session_id, hit.seq)] = hit
    scored: list[tuple[bool, float, int, Hit]] = []
    for index, ((sid, seq), hit) in enumerate(candidates.items()):
        bonus = sum(
            weight * raw.get((sid, seq + step), 0.0)
            for distance, weight in CONTEXT_WEIGHTS.items()
            for step in (-distance, distance)
        )
        hit.score = raw.get((sid, seq), 0.0) + bonus
        scored.append((strict is not None and hit.expression == strict, hit.score, index, hit))
    scored.sort(key=lambda item: (not item[0], -item[1], item[2]))
    ordered = [item[3] for item in scored]
    ordered.sort(key=lambda h: h.source in AUTOMATION_SOURCES)
    return ordered


def _load_positions(db: Database, positions: set[tuple[str, int]], filters: Filters) -> list[Hit]:
    """Hits (score 0) for the messages at ``(session_id, seq)`` positions that pass ``filters``."""
    found: list[Hit] = []
    where, params = filters.sql()
    for sid, seq in sorted(positions):
        row = db.execute(
            "SELECT m.id, m.session_id, m.seq, m.role, m.timestamp, COALESCE(s.source, ''), s.title "
            "FROM messages m LEFT JOIN sessions s ON s.id = m.session_id "
            f"WHERE m.session_id = ? AND m.seq = ?{where}",
            (sid, seq, *params),
        ).fetchone()
        if row is not None:
            found.append(Hit(int(row[0]), row[1], int(row[2]), row[3], row[4], row[5], row[6], 0.0, ""))
    return found


def _title_words(query: str) -> list[str]:
    return [t.lower() for t in tokenize(query or "") if t.upper() not in ("AND", "OR", "NOT")]


def _title_has(title: str | None, words: list[str]) -> bool:
    if not title:
        return False
    have = {t.lower() for t in tokenize(title)}
    return all(w in have for w in words)


def search_messages(
    db: Database,
    query: str,
    *,
    limit: int = 20,
    roles: Iterable[str] | str | None = None,
    sources: Iterable[str] | str | None = None,
    exclude_sources: Iterable[str] | str | None = None,
    since: Any = None,
    until: Any = None,
    sort: str = "relevance",
    session_ids: Iterable[str] | None = None,
    expand_context: bool = False,
) -> SearchResult:
    """Search past messages; never raises on query syntax.

    ``roles``/``sources``/``exclude_sources`` take lists or comma-separated
    strings; ``since``/``until`` take what :func:`parse_when` accepts (a bare
    ``until`` date includes that whole day); ``sort`` is ``relevance``,
    ``newest`` or ``oldest``. Relevance order is context-smoothed (see
    :data:`CONTEXT_WEIGHTS`); ``expand_context=True`` also lets the immediate
    neighbours of matching messages into the results (best evidence recall, as
    the recall layer wants; such rows may not contain the query words). Raises
    :class:`SearchError` for bad arguments.
    """
    hits, note, mode = find_hits(
        db, query, limit=limit, roles=roles, sources=sources, exclude_sources=exclude_sources,
        since=since, until=until, sort=sort, session_ids=session_ids, expand_context=expand_context,
    )
    attach_snippets(db, hits, query)
    return SearchResult(query, note, [h.to_dict() for h in hits], mode)


# --------------------------------------------------------------------------- snippets


def _fts_snippet(db: Database, hit: Hit) -> str | None:
    """FTS5's snippet of the content column for ``hit`` (None when unavailable)."""
    if not hit.expression:
        return None
    try:
        return db.scalar(
            "SELECT snippet(messages_fts, 0, ?, ?, '...', ?) FROM messages_fts "
            "WHERE messages_fts MATCH ? AND rowid = ?",
            (HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE, SNIPPET_TOKENS, hit.expression, hit.message_id),
        )
    except Exception:  # noqa: BLE001 - a snippet must never break a search
        return None


def attach_snippets(db: Database, hits: Sequence[Hit], query: str) -> None:
    """Fill ``hit.snippet`` with a highlighted excerpt of each hit's content."""
    for hit in hits:
        snippet = _fts_snippet(db, hit)
        if not snippet or HIGHLIGHT_OPEN not in snippet:
            content = db.scalar("SELECT content FROM messages WHERE id = ?", (hit.message_id,)) or ""
            snippet = highlight_excerpt(content, query) if content else (snippet or "")
        hit.snippet = snippet



# --------------------------------------------------------------------------- lineage


class Lineage:
    """Resolves sessions to their lineage root by walking ``parent_session_id`` (cached)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._parent: dict[str, str | None] = {}
        self._root: dict[str, str] = {}

    def parent(self, session_id: str) -> str | None:
        """The parent session id, or None."""
        if session_id not in self._parent:
            row = self.db.query_one("SELECT parent_session_id FROM sessions WHERE id = ?", (session_id,))
            self._parent[session_id] = (row or {}).get("parent_session_id") or None
        return self._parent[session_id]

    def root(self, session_id: str) -> str:
        """The lineage root of ``session_id`` (itself when it has no parent; cycles stop)."""
        if session_id in self._root:
            return self._root[session_id]
        seen = [session_id]
        current = session_id
        while True:
            parent = self.parent(current)
            if parent is None or parent in seen:
                break
            if parent in self._root:
                current = self._root[parent]
                break
            seen.append(parent)
            current = parent
        for sid in seen:
            self._root[sid] = current
        return current


def session_meta(db: Database, session_id: str) -> dict[str, Any]:
    """A session's ``meta`` JSON as a dict ({} when absent or unreadable)."""
    raw = db.scalar("SELECT meta FROM sessions WHERE id = ?", (session_id,))
    try:
        value = json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
