"""Message-level search over the session index.

:func:`search_messages` is the library entry point (the CLI, the
``session_search`` tool and the recall layer call it). The query is compiled
once (:func:`hermes_store.query.compile_query`); matching, scoring and
snippets are the session storage's (:mod:`hermes_store.sessions.storage`),
the ordering policy is this module's. Ranking, in order:

1. the storage's relevance score (on SQLite: bm25 with column weights, computed by
   :mod:`hermes_store.sessions.rank` in time independent of index size), or time order when
   ``sort`` is ``newest``/``oldest``;
2. hits whose session title contains every query word come first;
3. automation sources (:data:`AUTOMATION_SOURCES`) come after interactive ones;
4. a strict AND match first, then (via :func:`hermes_store.query.run_plan`)
   OR-relaxed hits for natural-language questions.

Bounded work: ranking every match of a common word costs time linear in the
index, so only the newest :data:`RANK_BUDGET` matches that pass the filters
(the oldest for ``sort="oldest"``) are ranked: one newest-first walk of the
doclists that stops there, with the rank function
(:mod:`hermes_store.sessions.rank`, whose IDF is sampled) evaluated only for
those rows.

Snippets are built only for the rows returned, with ``>>>``/``<<<`` around
matched words (or the ``marks`` a front end passes, which stored text cannot hold).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_store import timeutil
from hermes_store.db import Database
from hermes_store.excerpts import HIGHLIGHT_MARKS, cap_marked, highlight_excerpt
from hermes_store.query import Match, QueryPlan, compile_query, relaxed_note, run_plan
from hermes_store.sessions.dated import DATED_POOL, dated_first, named_window
from hermes_store.sessions.importers.base import MAX_CONTENT_CHARS, MAX_SNIPPET_CHARS, cap_title
from hermes_store.sessions.storage import (
    SORTS,
    Filters,
    Hit,
    SessionStorage,
    open_session_storage,
)
from hermes_store.threats import guard_past
from hermes_store.tokens import tokenize

AUTOMATION_SOURCES: tuple[str, ...] = ("cron", "subagent")
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


# --------------------------------------------------------------------------- filters

# roles searched only when asked for by name (thinking / reasoning text)
HIDDEN_ROLES = ("reasoning",)
# every role a message is stored with (importers map their own words onto these)
MESSAGE_ROLES = ("user", "assistant", "system", "tool", "reasoning")


def unknown_roles_problem(roles: Iterable[str]) -> str | None:
    """A sentence naming the roles that are not :data:`MESSAGE_ROLES`, or None when all are."""
    unknown = [r for r in roles if r not in MESSAGE_ROLES]
    if not unknown:
        return None
    return f"unknown role {', '.join(map(repr, unknown))} (valid: {', '.join(MESSAGE_ROLES)})"



def _clean_list(values: Iterable[str] | str | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = values.split(",")
    cleaned = [v.strip() for v in values if v and v.strip()]
    return cleaned


# --------------------------------------------------------------------------- engine


def index_ready(db: Database | SessionStorage) -> bool:
    """True when the session index exists in ``db``."""
    return _storage(db).ready()


def _storage(db: Database | SessionStorage) -> SessionStorage:
    return db if isinstance(db, SessionStorage) else open_session_storage(db)


class _Ranker:
    """Runs one match through the storage and orders its hits (bounded work)."""

    def __init__(self, storage: SessionStorage, filters: Filters, sort: str) -> None:
        self.storage = storage
        self.filters = filters
        self.sort = sort
        self.notes: list[str] = []  # what the storage said about partial results

    def fetch(self, match: Match, limit: int) -> list[Hit]:
        """Up to ``limit`` best hits for ``match`` (QueryRejected propagates to run_plan).

        Only the newest ``max(RANK_BUDGET, limit)`` matching rows that pass the
        filters are ranked (the oldest ones for ``sort='oldest'``).
        """
        hits = self.storage.hits(match, self.filters, sort=self.sort, budget=max(RANK_BUDGET, limit))
        note = getattr(hits, "note", None)
        if note and note not in self.notes:
            self.notes.append(note)
        hits = list(hits)
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
    db: Database | SessionStorage,
    query: str | QueryPlan,
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
    after: Any = None,
    before: Any = None,
    tools: Iterable[str] | str | None = None,
) -> tuple[list[Hit], str | None, str]:
    """Ranked hits without snippets: ``(hits, note, mode)``. See :func:`search_messages`.

    ``query`` is user text or the :class:`~hermes_store.query.QueryPlan` compiled from it.
    """
    if sort not in SORTS:
        raise SearchError(f"sort must be one of {', '.join(SORTS)}; got {sort!r}")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise SearchError(f"limit must be a positive integer; got {limit!r}")
    limit = min(limit, MAX_LIMIT)
    try:
        since_ts = timeutil.parse_when(since)
        until_ts = timeutil.parse_when(until, end_of_day=True)
        after_ts, before_ts = timeutil.parse_bound(after), timeutil.parse_bound(before)
    except timeutil.TimeParseError as exc:
        raise SearchError(str(exc)) from exc
    filters = Filters(
        roles=_clean_list(roles),
        exclude_roles=list(HIDDEN_ROLES) if roles is None else None,
        sources=_clean_list(sources),
        exclude_sources=_clean_list(exclude_sources),
        since=since_ts,
        until=until_ts,
        session_ids=list(session_ids) if session_ids is not None else None,
        started_after=after_ts,
        started_before=before_ts,
        tools=_clean_list(tools),
    )
    storage = _storage(db)
    with storage.one_connection():
        return _find_hits(storage, query, filters, limit=limit, sort=sort, smooth=smooth,
                          expand_context=expand_context)


def hits_at_positions(db: Database | SessionStorage, scored: Sequence[tuple[str, int, float]], *,
                      roles: Iterable[str] | str | None = None,
                      exclude_sources: Iterable[str] | str | None = None,
                      after: Any = None, before: Any = None) -> list[Hit]:
    """Hits for ``(session_id, seq, score)`` positions found another way (the semantic
    index), narrowed by the same filters as :func:`find_hits`, in the order given."""
    filters = Filters(roles=_clean_list(roles), exclude_roles=list(HIDDEN_ROLES) if roles is None else None,
                      exclude_sources=_clean_list(exclude_sources),
                      started_after=timeutil.parse_bound(after), started_before=timeutil.parse_bound(before))
    storage = _storage(db)
    with storage.one_connection():
        found = {(h.session_id, h.seq): h for h in storage.hits_at([(sid, seq) for sid, seq, _ in scored], filters)}
    out = []
    for sid, seq, score in scored:
        hit = found.get((sid, seq))
        if hit is not None:
            hit.score = score
            out.append(hit)
    return out


def _find_hits(storage: SessionStorage, query: str | QueryPlan, filters: Filters, *, limit: int,
               sort: str, smooth: bool, expand_context: bool) -> tuple[list[Hit], str | None, str]:
    if not storage.ready():
        return [], None, "empty"
    plan = compile_query(query)
    ranker = _Ranker(storage, filters, sort)
    smoothing = sort == "relevance" and (smooth or expand_context)
    pool = max(limit, SMOOTHING_POOL) if smoothing else limit
    outcome = run_plan(ranker.fetch, plan, pool, key=lambda h: h.message_id)
    hits: list[Hit] = list(outcome.rows)
    note, mode = outcome.note, outcome.mode
    if smoothing and hits:
        strict = plan.strict_match
        hits = _smooth(storage, hits, filters, strict=strict, expand=expand_context)[:limit]
        if mode == "relaxed":
            exact = sum(1 for h in hits if h.expression == strict)
            if exact == len(hits):
                mode, note = "strict", outcome.plan.note if outcome.plan else None
            elif outcome.plan is None or note != outcome.plan.note:
                note = relaxed_note(exact, len(hits) - exact)
    hits = hits[:limit]
    if sort == "relevance" and hits:
        words = plan.folded_terms()
        if words:
            hits.sort(key=lambda h: not _title_has(h.title, words))
    if ranker.notes:  # the storage stopped early: say that results may be partial
        note = "; ".join([note, *ranker.notes] if note else ranker.notes)
    return hits, note, mode


def _smooth(storage: SessionStorage, hits: list[Hit], filters: Filters, *, strict: Match | None,
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
        for hit in storage.hits_at(wanted, filters):
            candidates[(hit.session_id, hit.seq)] = hit
    scored: list[tuple[bool, float, int, Hit]] = []
    for index, ((sid, seq), hit) in enumerate(candidates.items()):
        bonus = sum(
            weight * raw.get((sid, seq + step), 0.0)
            for distance, weight in CONTEXT_WEIGHTS.items()
            for step in (-distance, distance)
        )
        hit.own_score = raw.get((sid, seq), 0.0)
        hit.score = hit.own_score + bonus
        scored.append((strict is not None and hit.expression == strict, hit.score, index, hit))
    scored.sort(key=lambda item: (not item[0], -item[1], item[2]))
    ordered = [item[3] for item in scored]
    ordered.sort(key=lambda h: h.source in AUTOMATION_SOURCES)
    return ordered


def _title_has(title: str | None, words: list[str]) -> bool:
    if not title:
        return False
    have = {t.lower() for t in tokenize(title)}
    return all(w in have for w in words)


def search_messages(
    db: Database | SessionStorage,
    query: str | QueryPlan,
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
    after: Any = None,
    before: Any = None,
    exclude_session_ids: Iterable[str] | None = None,
    tools: Iterable[str] | str | None = None,
    marks: tuple[str, str] = HIGHLIGHT_MARKS,
) -> SearchResult:
    """Search past messages; never raises on query syntax.

    ``roles``/``sources``/``exclude_sources`` take lists or comma-separated
    strings; ``since``/``until`` take what :func:`hermes_store.timeutil.parse_when` accepts (a bare
    ``until`` date includes that whole day) and bound the message's time; ``after`` (inclusive)
    and ``before`` (exclusive) bound the session's start in Hermes' grammar
    (:func:`hermes_store.timeutil.parse_bound`: a date-only ``before`` is midnight UTC); ``sort`` is ``relevance``,
    ``newest`` or ``oldest``. Relevance order is context-smoothed (see
    :data:`CONTEXT_WEIGHTS`); ``expand_context=True`` also lets the immediate
    neighbours of matching messages into the results (best evidence recall, as
    the recall layer wants; such rows may not contain the query words). ``tools`` keeps
    messages that call one of these tools or are their results (names compared without
    case). ``query`` may be
    a :class:`~hermes_store.query.QueryPlan` compiled once for several indexes. Raises
    :class:`SearchError` for bad arguments. ``exclude_session_ids`` leaves out those sessions and
    every session of their lineages. ``marks`` (open, close) surround the matched words of each
    snippet (:data:`~hermes_store.excerpts.HIGHLIGHT_MARKS` by default).
    """
    plan = compile_query(query)
    storage = _storage(db)
    window = named_window(plan.text) if sort == "relevance" else None  # its messages first
    with storage.one_connection():
        hits, note, mode = find_hits(
            storage, plan, limit=limit if window is None else max(limit, DATED_POOL), roles=roles, sources=sources,
            exclude_sources=exclude_sources, since=since, until=until, sort=sort, session_ids=session_ids,
            expand_context=expand_context, after=after, before=before, tools=tools,
        )
        if exclude_session_ids:
            lineage = Lineage(storage)
            roots = {lineage.root(sid) for sid in exclude_session_ids} | set(exclude_session_ids)
            hits = [h for h in hits if h.session_id not in roots and lineage.root(h.session_id) not in roots]
        if window is not None:
            hits = dated_first(hits, window, lambda hit: (hit,))[: max(0, limit)]
        attach_snippets(storage, hits, plan, marks)
    text = query.text if isinstance(query, QueryPlan) else query
    return SearchResult(text, note, [h.to_dict() for h in hits], mode)


# --------------------------------------------------------------------------- snippets


def attach_snippets(db: Database | SessionStorage, hits: Sequence[Hit],
                    query: str | QueryPlan, marks: tuple[str, str] = HIGHLIGHT_MARKS) -> None:
    """Fill ``hit.snippet`` with a highlighted excerpt of each hit's content (``query``: the
    user text or its compiled plan), the matched words between ``marks`` (open, close)."""
    open_mark, close_mark = marks
    storage = _storage(db)
    plan = compile_query(query)
    groups: dict[int, tuple[Any, list[int]]] = {}  # one batch per expression (one in a plain search)
    for hit in hits:
        if hit.expression is not None:
            groups.setdefault(id(hit.expression), (hit.expression, []))[1].append(hit.message_id)
    snippets: dict[tuple[int, int], str | None] = {}
    for key, (expression, ids) in groups.items():
        for mid, text in storage.snippets(expression, ids, open_mark=open_mark,
                                          close_mark=close_mark, tokens=SNIPPET_TOKENS).items():
            snippets[(key, mid)] = text
    # no longer than a message the importers store (a longer one, written by hand or by another
    # program, is read as far as that: the excerpt and the threat scan's look beyond it need no more)
    contents = storage.message_contents((hit.message_id for hit in hits), head=MAX_CONTENT_CHARS)
    for hit in hits:
        content = contents.get(hit.message_id, "")
        snippet = snippets.get((id(hit.expression), hit.message_id)) if hit.expression is not None else None
        if not snippet or open_mark not in snippet:
            snippet = highlight_excerpt(content, plan, open_mark=open_mark, close_mark=close_mark) \
                if content else (snippet or "")
        if open_mark not in snippet:  # found by its tool calls: show the call
            calls = storage.message_calls(hit.message_id)
            excerpt = highlight_excerpt(calls, plan, open_mark=open_mark, close_mark=close_mark) if calls else ""
            if open_mark in excerpt:
                snippet = f"[tool call] {excerpt}" if not snippet else f"{snippet} [tool call] {excerpt}"
        # the one threat scan of recorded text: a flagged message (or title) reaches no model
        hit.snippet = guard_past(cap_marked(snippet, MAX_SNIPPET_CHARS, marks), f"session message #{hit.message_id}",
                                 also=content)
        if hit.title:
            hit.title = guard_past(cap_title(hit.title), f"title of session {hit.session_id}", also=hit.title)


# --------------------------------------------------------------------------- lineage


class Lineage:
    """Resolves sessions to their lineage root by walking ``parent_session_id`` (cached)."""

    def __init__(self, db: Database | SessionStorage) -> None:
        self.storage = _storage(db)
        self._parent: dict[str, str | None] = {}
        self._root: dict[str, str] = {}

    def parent(self, session_id: str) -> str | None:
        """The parent session id, or None."""
        if session_id not in self._parent:
            self._parent[session_id] = self.storage.parent_of(session_id)
        return self._parent[session_id]

    def prefetch(self, session_ids: Iterable[str]) -> None:
        """Read the parents of the sessions of ``session_ids`` not yet known in one go (so the
        :meth:`root` of many sessions costs one statement, not one each)."""
        wanted = [sid for sid in dict.fromkeys(session_ids) if sid not in self._parent]
        if wanted:
            found = self.storage.parents_of(wanted)
            self._parent.update({sid: found.get(sid) for sid in wanted})

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


def session_meta(db: Database | SessionStorage, session_id: str) -> dict[str, Any]:
    """A session's ``meta`` JSON as a dict ({} when absent or unreadable)."""
    return _storage(db).session_meta(session_id)
