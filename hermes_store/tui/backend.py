"""What the TUI asks of the store: one object, no widgets (so tests and the benchmark call it too).

:class:`StoreView` gets its store from :class:`~hermes_store.home.Home` and never creates
one: until ``home.store_exists()`` it answers "no store". Searches go through
:func:`hermes_store.sessions.search.search_messages` (the query language of
``hermes-store sessions search``); facts and MEMORY/USER entries through
:func:`hermes_store.recall.recall`. Every search runs under a time budget
(:data:`SEARCH_BUDGET` seconds) so a pathological query cannot freeze a worker.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_store.budget import query_budget
from hermes_store.home import Home
from hermes_store.query import compile_query
from hermes_store.recall import RecallResult, recall
from hermes_store.sessions import open_session_storage
from hermes_store.sessions.search import SearchError, search_messages

ROLES: tuple[str, ...] = ("user", "assistant", "system", "tool", "reasoning")
RESULT_LIMIT = 30
SEARCH_BUDGET = 5.0  # seconds one TUI search may run (the statement is interrupted after)
CONTEXT_RADIUS = 3  # messages shown before and after the hit in the preview
SESSION_PAGE = 300  # messages the session screen shows at once
RECALL_KINDS: tuple[str, ...] = ("memory", "user", "facts")
# The marks the TUI's searches put around matched words (rendered as the hit style): private-use
# characters and a token drawn per process, which no stored text holds (``>>>`` marks what a model
# reads, and is also a Python prompt in a transcript).
_TOKEN = secrets.token_hex(6)
SNIPPET_MARKS: tuple[str, str] = (f"\ue000{_TOKEN}\ue001", f"\ue002{_TOKEN}\ue001")


def message_reference(session_id: str, seq: int) -> str:
    """The printed reference of a message: the form ``hermes-store sessions search`` prints."""
    return f"{session_id}#{seq}"


@dataclass(frozen=True)
class SearchRequest:
    """One search as the TUI makes it: the query text and the filter bar's values."""

    query: str
    sources: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    limit: int = RESULT_LIMIT

    def filter_summary(self) -> str:
        """The active filters in one line ("" when none)."""
        parts = []
        if self.sources:
            parts.append("source=" + ",".join(self.sources))
        if self.roles:
            parts.append("role=" + ",".join(self.roles))
        if self.since:
            parts.append(f"since={self.since}")
        if self.until:
            parts.append(f"until={self.until}")
        return " ".join(parts)


@dataclass
class SearchOutcome:
    """What a search gave: rows (``sessions search --json`` result dicts), or why there are none.

    ``state`` is ``ok``, ``blank`` (nothing typed), ``no-store`` (no store file),
    ``empty-store`` (a store without sessions), ``invalid`` (bad query or filter:
    ``problem`` says what) or ``failed`` (the store could not be read: ``problem`` says why). ``note`` is the search layer's remark (syntax read
    literally, relaxed to some words, partial results).
    """

    request: SearchRequest
    state: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None
    problem: str | None = None
    elapsed: float = 0.0


def check_roles(roles: Sequence[str]) -> str | None:
    """A message naming the unknown roles and the valid ones, or None."""
    unknown = [r for r in roles if r not in ROLES]
    if unknown:
        return f"unknown role {', '.join(unknown)}; valid roles: {', '.join(ROLES)}"
    return None


class StoreView:
    """The store as the TUI sees it: read-only use, opened on first need, closed with :meth:`close`.

    Safe to call from worker threads (one lock around opening; the database
    serialises its own statements).
    """

    def __init__(self, home: Home) -> None:
        self.home = home
        self._db: Any = None
        self._lock = threading.Lock()
        self._has_sessions: bool | None = None
        self._searching = threading.Condition()
        self._running = 0  # searches in flight (at most one: they run one after another)

    # -- the store ---------------------------------------------------------------------

    def exists(self) -> bool:
        """True when there is a store to read (never creates one)."""
        return self._db is not None or self.home.store_exists()

    def where(self) -> str:
        """The store's location for messages (path or server URL without secrets)."""
        return self.home.store_location()

    def db(self) -> Any:
        """The open store, or None when none exists (opened once, through ``Home``)."""
        with self._lock:
            if self._db is None and self.home.store_exists():
                self._db = self.home.open_db()
            return self._db

    def has_sessions(self) -> bool:
        """True when the store holds at least one session (asked again until it does)."""
        if not self._has_sessions:
            db = self.db()
            if db is None:
                return False
            storage = open_session_storage(db)
            self._has_sessions = bool(storage.ready() and storage.list_sessions(limit=1))
        return self._has_sessions

    def close(self) -> None:
        """Close the store if it was opened."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- searching ---------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchOutcome:
        """Run ``request`` as ``sessions search`` would, with the TUI's time budget.

        Searches run one at a time: this waits (up to the budget) for the one in flight,
        which :meth:`cancel` stops early, so a cancel never reaches this search.
        """
        began = time.perf_counter()
        with self._searching:
            self._searching.wait_for(lambda: self._running == 0, timeout=SEARCH_BUDGET)
            self._running += 1
        try:
            outcome = self._search(request)
        finally:
            with self._searching:
                self._running -= 1
                self._searching.notify_all()
        outcome.elapsed = time.perf_counter() - began
        return outcome

    def cancel(self) -> None:
        """Stop the search in flight (its statement is interrupted; its results are partial
        and the caller drops them). Only SQLite stores can be interrupted; on a server the
        stale search runs to its end (or its time budget) and its answer is dropped."""
        with self._searching:
            if self._running == 0 or self._db is None:
                return
            interrupt = getattr(self._db, "interrupt", None)
            if interrupt is not None:
                interrupt()

    def _search(self, request: SearchRequest) -> SearchOutcome:
        if not request.query.strip():
            return SearchOutcome(request, "blank")
        if not self.exists():
            return SearchOutcome(request, "no-store")
        if not self.has_sessions():
            return SearchOutcome(request, "empty-store")
        problem = check_roles(request.roles)
        if problem:
            return SearchOutcome(request, "invalid", problem=problem)
        plan = compile_query(request.query)
        if plan.strict_match is None and plan.literal_match is None:
            return SearchOutcome(request, "invalid", problem="the query has no searchable words")
        try:
            with query_budget(SEARCH_BUDGET):
                result = search_messages(
                    self.db(), plan, limit=request.limit, roles=list(request.roles) or None,
                    sources=list(request.sources) or None, since=request.since or None,
                    until=request.until or None, marks=SNIPPET_MARKS)
        except SearchError as exc:
            return SearchOutcome(request, "invalid", problem=str(exc))
        # only syntax that could not be parsed is a problem; a question read as prose, a short
        # prefix searched as a word or a cut query is a note (as the CLI says it)
        syntax = bool(plan.note) and str(plan.note).startswith("query syntax not understood")
        return SearchOutcome(request, "invalid" if syntax else "ok", result.results, note=result.note,
                             problem=f"query not understood as written: {plan.note}" if syntax else None)

    # -- reading -----------------------------------------------------------------------

    def context(self, session_id: str, seq: int, radius: int = CONTEXT_RADIUS) -> list[dict[str, Any]]:
        """The messages from ``seq - radius`` to ``seq + radius`` of a session."""
        db = self.db()
        if db is None:
            return []
        storage = open_session_storage(db)
        return storage.get_messages(session_id, after_seq=seq - radius - 1, before_seq=seq + radius + 1)

    def session(self, session_id: str) -> dict[str, Any] | None:
        """The session's row (id, source, origin_format, title, times, message_count...)."""
        db = self.db()
        return None if db is None else open_session_storage(db).get_session(session_id)

    def session_page(self, session_id: str, start: int, size: int = SESSION_PAGE) -> list[dict[str, Any]]:
        """Up to ``size`` messages of a session from position ``start`` on."""
        db = self.db()
        if db is None:
            return []
        return open_session_storage(db).get_messages(session_id, after_seq=start - 1, limit=size)

    def sources(self) -> list[str]:
        """The sources (agents/platforms) the store holds sessions of."""
        db = self.db()
        if db is None:
            return []
        storage = open_session_storage(db)
        return sorted(storage.stats()["per_source"]) if storage.ready() else []

    def memory_and_facts(self, query: str, limit: int = 30) -> RecallResult:
        """Facts and MEMORY.md/USER.md entries matching ``query`` (through the recall layer)."""
        return recall(query, kinds=RECALL_KINDS, limit=limit, home=self.home, marks=SNIPPET_MARKS)
