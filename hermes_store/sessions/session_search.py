"""The ``session_search`` tool: the four Hermes calling shapes, no LLM calls.

* **discover** (``query``): title match first, then message hits grouped by
  lineage root, each hydrated with an anchored window and bookends
  (``detail='adaptive'`` hydrates only the first result fully);
* **scroll** (``session_id`` + ``around_message_id``): a window of
  ``±window`` messages around a message;
* **read** (``session_id`` alone): a whole session, or its first 20 and last
  10 messages when it is large;
* **browse** (no query): the most recently active sessions.

The calling session's lineage (``ctx.session_id``, Hermes' ``current_session_id``)
is never returned as search evidence, since it is already in context.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_store import timeutil
from hermes_store.db import Database
from hermes_store.home import Home
from hermes_store.query import clean_query_text, compile_query
from hermes_store.sessions.calltext import strip_boilerplate
from hermes_store.sessions.dated import dated_first, named_window, split_dated
from hermes_store.sessions.evidence import (
    EXTRA_ANCHORS,
    evidence_order,
    further_anchors,
    nearest_by_meaning,
    with_nearest,
)
from hermes_store.sessions.fusion import fuse_parts, session_ranking
from hermes_store.sessions.importers.base import MAX_LABEL_CHARS, MAX_SNIPPET_CHARS, cap_chars
from hermes_store.sessions.importers.hermes_db import COMPACTED_META_KEY
from hermes_store.sessions.refs import named_id, parse_ref
from hermes_store.sessions.search import (
    HIDDEN_ROLES,
    Hit,
    Lineage,
    SearchError,
    attach_snippets,
    find_hits,
    hits_at_positions,
    index_ready,
)
from hermes_store.sessions.session_search_bounds import BOUND_MAX_CHARS, Bounds, read_roles
from hermes_store.sessions.session_search_schema import (
    BROWSE_MESSAGE,
    LINK_HINT,
    NO_MATCH_MESSAGE,
    SCROLL_HINT,
    SESSION_SEARCH_SCHEMA,
    folded_choice,
    lenient_int,
)
from hermes_store.sessions.shown import SHOWN_HEAD_CHARS, without_escapes
from hermes_store.sessions.shown import shown_message as _message
from hermes_store.sessions.shown import shown_title as _title
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import SemanticIndex, SemanticSlot
from hermes_store.threats import guard_past
from hermes_store.tooling import (
    Tool,
    ToolArgumentError,
    ToolContext,
    get_int,
    get_str,
    tool_error,
)

DEFAULT_ROLES = ("user", "assistant")
HIDDEN_SOURCES = ("kanban", "subagent", "tool")  # Hermes: integrations, delegate runs, kanban workers
DISCOVER_SCAN_LIMIT = 300
SEMANTIC_SCAN_LIMIT = 300  # nearest messages the semantic half ranks sessions by
DEFAULT_LIMIT, MAX_LIMIT = 3, 10
DEFAULT_WINDOW, MAX_WINDOW = 5, 20
HYDRATE_WINDOW = 5
BOOKEND_COUNT = 3
WINDOW_CHARS = 4000
BOOKEND_CHARS = 1200
READ_HEAD, READ_TAIL = 20, 10
READ_CHARS = 2000  # Hermes caps each message of a READ at 2,000 characters (#114344)
PREVIEW_CHARS = 60
PREVIEW_SCAN = 5  # user turns looked at for a preview that is not agent boilerplate
LEFT_CONTEXT_REASONS = frozenset({"compression", "session_reset", "session_switch", "idle", "daily", "suspended",
                                  "resume_pending_expired", "new_session"})
_COMPACTION_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")

# --------------------------------------------------------------------------- helpers


def _when(ts: float | None) -> str:
    """Hermes' ``_format_timestamp``: "unknown" for no time, the raw value when it cannot be read."""
    if ts is None:
        return "unknown"
    try:
        return datetime.fromtimestamp(float(ts)).strftime("%B %d, %Y at %I:%M %p")
    except (OverflowError, OSError, ValueError):
        return str(ts)


def _label(value: Any) -> Any:
    """A session's model or source as shown (cut: a value stored before the cap, or by hand)."""
    return cap_chars(value, MAX_LABEL_CHARS)


def _link(session_id: str, profile: str | None) -> str:
    return f"@session:{profile}/{session_id}" if profile else f"@session:{session_id}"


def _end_reason(row: dict[str, Any] | None) -> str | None:
    meta = (row or {}).get("meta")
    return meta.get("end_reason") if isinstance(meta, dict) else None


class _Store:
    """The session storage a call works on, plus the calling session's lineage."""

    def __init__(self, db: Database, profile: str | None, current_session_id: str,
                 hidden: tuple[str, ...] = HIDDEN_ROLES, semantic: SemanticIndex | None = None,
                 semantic_off: str | None = None) -> None:
        self.storage = open_session_storage(db)
        self.semantic = semantic  # None: lexical only (no model configured, or no vectors)
        self.semantic_off = semantic_off  # why not, when semantic.model asked for it
        self.hidden = hidden  # roles left out unless role_filter names them (reasoning)
        self.profile = profile
        self.lineage = Lineage(self.storage)
        self.current = current_session_id or ""
        self.current_root = self.lineage.root(self.current) if self.current else None
        self._writers: dict[str, str] = {}  # session id -> its writer ('' on a one-home store)

    def session(self, session_id: str) -> dict[str, Any] | None:
        return self.storage.get_session(session_id)

    def session_meta(self, row: dict[str, Any]) -> dict[str, Any]:
        return {"when": _when(row.get("started_at")), "source": _label(row.get("source")),
                "model": _label(row.get("model")), "title": _title(row) or None}  # Hermes: None when untitled

    def with_writer(self, fields: dict[str, Any], session_id: str) -> dict[str, Any]:
        """``fields`` plus ``written_by`` (``host:home``) when the session comes from a store
        shared by several homes (a PostgreSQL store); a SQLite file is one home's: no field."""
        if session_id not in self._writers:
            self._writers.update({session_id: ""} | self.storage.session_writers([session_id]))
        if self._writers[session_id]:
            fields["written_by"] = self._writers[session_id]
        return fields

    def in_live_context(self, session_id: str, seq: int | None = None) -> bool:
        """True when ``session_id`` belongs to the caller's lineage and has not left its context;
        its message at ``seq`` never has when in-place compaction archived it (Hermes'
        ``_is_compacted_message``: the importer's ``compacted_messages``, the leading ones)."""
        if not self.current or (session_id != self.current and self.lineage.root(session_id) != self.current_root):
            return False
        meta = self.storage.session_meta(session_id)
        if seq is not None and seq < int(meta.get(COMPACTED_META_KEY) or 0):
            return False
        return session_id == self.current or meta.get("end_reason") not in LEFT_CONTEXT_REASONS

    def messages(self, session_id: str, roles: tuple[str, ...] | None, **narrow: Any) -> list[dict[str, Any]]:
        """The session's messages (see :meth:`SessionStorage.get_messages` for ``narrow``);
        with no role list, the hidden roles (reasoning) are left out."""
        # capped shown messages: their first SHOWN_HEAD_CHARS only, never a huge recorded text whole
        rows = self.storage.get_messages(session_id, roles=roles, head=SHOWN_HEAD_CHARS, **narrow)
        if roles is None and self.hidden:
            rows = [r for r in rows if r["role"] not in self.hidden]
        return [{**r, "session_id": session_id} for r in rows]  # each shown message gets its ref

    def count(self, session_id: str, roles: tuple[str, ...] | None = None, **narrow: Any) -> int:
        """How many of the session's messages pass the narrowing (hidden roles not counted)."""
        total = self.storage.count_messages(session_id, roles=roles, **narrow)
        if roles is None and self.hidden:
            total -= self.storage.count_messages(session_id, roles=self.hidden, **narrow)
        return total

    def window(self, session_id: str, anchor_seq: int, size: int, keep: tuple[str, ...] | None,
               cap: int, *, anchor_only: bool = False) -> tuple[list[dict[str, Any]], int, int, int, int]:
        """Hermes' ``get_messages_around`` (+ the role filter of ``get_anchored_view``).

        The slice is ``±size`` messages of every role around the anchor; ``keep`` (when given)
        then hides other roles except the anchor. Returns the shown messages, how many slice
        messages precede/follow the anchor (``messages_before``/``messages_after``: fewer than
        ``size`` means the session starts/ends there) and the first/last seq of the slice.
        ``anchor_only`` (a compact result) shows the anchor alone, the counts unchanged (the
        other slice messages are not prepared, so not threat-scanned, for nothing).
        """
        anchor = self.messages(session_id, None, at_seq=anchor_seq)
        before = self.messages(session_id, None, before_seq=anchor_seq, newest_first=True,
                               limit=size)[::-1]
        after = self.messages(session_id, None, after_seq=anchor_seq, limit=size) if size else []
        rows = before + anchor + after
        shown = [r for r in rows if r["seq"] == anchor_seq
                 or (not anchor_only and (keep is None or r["role"] in keep))]
        out = [_message(r, cap, anchor=r["seq"] == anchor_seq) for r in shown]
        first = rows[0]["seq"] if rows else anchor_seq
        last = rows[-1]["seq"] if rows else anchor_seq
        return out, len(before), len(after), first, last

    def bookends(self, session_id: str, first_seq: int, last_seq: int) -> tuple[list[dict], list[dict]]:
        """First/last ``BOOKEND_COUNT`` user/assistant messages strictly outside the window."""
        def keep(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [r for r in rows if (r["content"] or "").strip()
                    and not (r["content"] or "").lstrip().startswith(_COMPACTION_PREFIXES)]

        start: list[dict[str, Any]] = []
        end: list[dict[str, Any]] = []
        if first_seq > 0:
            start = keep(self.messages(session_id, DEFAULT_ROLES, before_seq=first_seq,
                                       limit=BOOKEND_COUNT * 4))[:BOOKEND_COUNT]
        tail = keep(self.messages(session_id, DEFAULT_ROLES, after_seq=last_seq, newest_first=True,
                                  limit=BOOKEND_COUNT * 4))[:BOOKEND_COUNT]
        end = tail[::-1]
        return ([_message(r, BOOKEND_CHARS) for r in start], [_message(r, BOOKEND_CHARS) for r in end])


# --------------------------------------------------------------------------- shapes


def _hydrate(store: _Store, session: dict[str, Any], anchor_id: int, anchor_seq: int, *,
             full: bool, roles: tuple[str, ...], more: tuple[int, ...] = (),
             further: int = EXTRA_ANCHORS) -> dict[str, Any]:
    """The messages a result shows: ``±HYDRATE_WINDOW`` around the anchor with bookends
    (``full``), or the anchor alone (compact); either way up to ``further`` (three, more with
    the semantic extra's ``anchors``) of the session's other best-matching messages (``more``:
    their seqs, best first) that the slice lacks are added, marked ``anchor``
    (:func:`.evidence.further_anchors`)."""
    sid = session["id"]
    messages, before, after, lo, hi = store.window(sid, anchor_seq, HYDRATE_WINDOW, DEFAULT_ROLES,
                                                   WINDOW_CHARS, anchor_only=not full)
    if full:
        bookend_start, bookend_end = store.bookends(sid, lo, hi)
    else:  # compact: only the anchor; the counts still describe the ±5 slice
        bookend_start, bookend_end = [], []
    shown = {m["id"] for m in messages}
    extra = [_message(row, WINDOW_CHARS, anchor=True)
             for seq in further_anchors(more, (lo, hi) if full else None, further)
             for row in store.messages(sid, None, at_seq=seq) if row["id"] not in shown]
    if extra:
        messages = sorted(messages + extra, key=lambda m: m["id"])
    return {
        "bookend_start": bookend_start,
        "messages": messages,
        "bookend_end": bookend_end,
        "messages_before": before,
        "messages_after": after,
        "detail": "full" if full else "compact",
    }


def _result_entry(store: _Store, session: dict[str, Any], matched_role: str, match_id: int,
                  match_seq: int, snippet: str, *, full: bool, roles: tuple[str, ...],
                  more: tuple[int, ...] = (), further: int = EXTRA_ANCHORS) -> dict[str, Any]:
    root_id = store.lineage.root(session["id"])
    root = session if root_id == session["id"] else (store.session(root_id) or {})
    entry: dict[str, Any] = {  # Hermes describes a hit by its lineage root's row
        "session_id": session["id"],
        "when": _when(root.get("started_at") or session.get("started_at")),
        "source": _label(root.get("source") or session.get("source") or "unknown"),
        "model": _label(root.get("model") or session.get("model") or "unknown"),
        "title": _title(root) or None,
        "matched_role": matched_role,
        "match_message_id": match_id,
        "snippet": guard_past(cap_chars(without_escapes(snippet), MAX_SNIPPET_CHARS), f"session message #{match_id}",
                              also=snippet),
    }
    entry.update(_hydrate(store, session, match_id, match_seq, full=full, roles=roles, more=more,
                          further=further))
    if root_id != session["id"]:  # Hermes' _discovery_entry sets it, then the link follows
        entry["parent_session_id"] = root_id
    entry["link"] = _link(session["id"], store.profile)
    return store.with_writer(entry, session["id"])


def _title_match(store: _Store, query: str, bounds: Bounds) -> dict[str, Any] | None:
    """The newest session whose title is the query (or ``query #N``), if eligible."""
    title = query.strip().strip("\"'`").strip()
    if not title or "\x00" in title:  # stored titles never hold NUL (and PostgreSQL refuses it)
        return None
    for row in store.storage.sessions_titled(title):
        if row.get("source") in HIDDEN_SOURCES or store.in_live_context(row["id"]):
            continue
        root_id = store.lineage.root(row["id"])
        if {row["id"], root_id} & bounds.excluded:
            return None
        root = row if root_id == row["id"] else (store.session(root_id) or row)
        if not bounds.started_ok(root.get("started_at")):
            return None  # Hermes re-checks the window on the lineage root's start
        return row
    return None


def _sessions_of(store: _Store, hits: list[Hit], seen_roots: set[str]) -> list[tuple[str, list[Hit]]]:
    """The hits grouped by lineage root, in the order of each group's best hit, each group's
    hits best first (sessions in the live context and roots in ``seen_roots`` left out).

    A session keeps the rank of its best message: weighting in its further matches
    (``scripts/eval_longmemeval.py``, decays 0.5/0.25 and 1/1/1) lowered hit@5 and all@5.
    """
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        if store.in_live_context(hit.session_id, hit.seq):
            continue
        root = store.lineage.root(hit.session_id)
        if root not in seen_roots:
            groups.setdefault(root, []).append(hit)
    return list(groups.items())


def _fused(store: _Store, query: str, groups: list[tuple[str, list[Hit]]], roles: tuple[str, ...],
           bounds: Bounds, seen_roots: set[str], window: tuple[float, float] | None
           ) -> tuple[list[tuple[str, list[Hit]]], list[tuple[str, list[Hit]]]]:
    """The lexical groups fused with the semantic ranking (:mod:`.fusion`), those of the date ``window``
    and the others each on their own, and the sessions only the semantic half found (with their
    nearest messages), nearest first: the places the lexical sessions leave empty are theirs."""
    semantic = store.semantic
    assert semantic is not None
    nearest = semantic.nearest(query, SEMANTIC_SCAN_LIMIT)
    hits = hits_at_positions(store.storage, [(sid, seq, score) for _mid, sid, seq, score in nearest],
                             roles=list(roles), exclude_sources=list(HIDDEN_SOURCES),
                             after=bounds.after, before=bounds.before)
    store.lineage.prefetch(h.session_id for h in hits)
    kept = [h for h in hits if h.session_id not in bounds.excluded
            and store.lineage.root(h.session_id) not in bounds.excluded]
    extra = dict(_sessions_of(store, kept, seen_roots))
    found = {**extra, **dict(groups)}  # a session's lexical hits where it has any
    parts = [[(root, hits[0].score) for root, hits in part] for part in split_dated(groups, window, lambda g: g[1])]
    order = fuse_parts(parts, session_ranking([(0, root, 0, hits[0].score) for root, hits in extra.items()]),
                       semantic.fusion, lambda roots: semantic.rerank_scores(
                           query, {root: found[root][0].session_id for root in roots}, store.storage.message_contents))
    ranked = [(root, found[root]) for root in order]
    placed = set(order)
    return ranked, [(root, hits) for root, hits in extra.items() if root not in placed]


def discover(store: _Store, query: str, *, limit: int, sort: str | None, detail: str,
             roles: tuple[str, ...], bounds: Bounds | None = None) -> dict[str, Any]:
    """DISCOVER: title match, then message hits grouped by lineage root (hits from sessions
    started outside ``bounds``' window, or in an excluded lineage, left out)."""
    bounds = bounds or Bounds()
    results: list[dict[str, Any]] = []
    seen_roots: set[str] = set()

    def full_for(index: int) -> bool:
        return detail == "full" or index == 0

    title_row = _title_match(store, query, bounds)
    if title_row is not None:
        first = store.messages(title_row["id"], None, limit=1)
        if first:
            seen_roots.add(store.lineage.root(title_row["id"]))
            results.append(_result_entry(
                store, title_row, "session_title", first[0]["id"], first[0]["seq"],
                f"Session title matched: {_title(title_row)}", full=full_for(0), roles=roles))
    plan = compile_query(query)
    try:
        hits, note, _mode = find_hits(store.storage, plan, limit=DISCOVER_SCAN_LIMIT, roles=list(roles),
                                      exclude_sources=list(HIDDEN_SOURCES), sort=sort or "relevance",
                                      after=bounds.after, before=bounds.before)
    except SearchError as exc:
        raise ToolArgumentError(str(exc)) from exc
    store.lineage.prefetch(h.session_id for h in hits)
    kept = [h for h in hits if h.session_id not in bounds.excluded
            and store.lineage.root(h.session_id) not in bounds.excluded]  # exclude_session_ids
    groups = _sessions_of(store, kept, seen_roots)
    if (sort or "relevance") == "relevance":  # the semantic half, then a date the query names
        window = named_window(query)
        fused, spare = (groups, []) if store.semantic is None else \
            _fused(store, query, groups, roles, bounds, seen_roots, window)
        groups = dated_first(fused, window, lambda group: group[1])
        groups += spare[:max(0, limit - len(results) - len(groups))]  # never before a lexical one
    chosen = groups[:max(0, limit - len(results))]
    if (sort or "relevance") == "relevance":  # a time sort keeps each session's newest/oldest match first
        anchors = store.semantic.fusion.anchors if store.semantic is not None else 0
        ordered = [(root, evidence_order(group, query)) for root, group in chosen]
        nearest = nearest_by_meaning(store.semantic, store.storage, query, [g[0] for _r, g in ordered], anchors,
                                     roles=roles, exclude_sources=HIDDEN_SOURCES)
        chosen = [(root, *with_nearest(group, nearest.get(group[0].session_id, ()), anchors))
                  for root, group in ordered]
    else:
        chosen = [(root, group, 0) for root, group in chosen]
    seen_roots.update(root for root, _ in groups)
    attach_snippets(store.storage, [group[0] for _, group, _added in chosen], plan)
    for _root, group, added in chosen:
        hit = group[0]
        session = store.session(hit.session_id) or {"id": hit.session_id, "source": hit.source,
                                                    "title": hit.title}
        more = tuple(h.seq for h in group[1:] if h.session_id == hit.session_id)
        results.append(_result_entry(store, session, hit.role, hit.message_id, hit.seq, hit.snippet,
                                     full=full_for(len(results)), roles=roles, more=more,
                                     further=EXTRA_ANCHORS + added))
    payload: dict[str, Any] = {
        "success": True,
        "mode": "discover",
        "query": query,
        "detail": detail,
        "results": results,
        "count": len(results),
        "sessions_searched": len(seen_roots),
        "link_hint": LINK_HINT,
    }
    if note:
        payload["query_note"] = note
    note = store.semantic.note() if store.semantic is not None else None  # the half failed
    if note or store.semantic_off:  # or was asked for in config.yaml but is not there
        payload["semantic_note"] = note or store.semantic_off
    if not hits and not chosen and title_row is None:  # Hermes' no-match reply: no sessions_searched/link_hint
        del payload["sessions_searched"], payload["link_hint"]
        payload["message"] = NO_MATCH_MESSAGE
    return payload


def scroll(store: _Store, session_id: str, around: int, window: int) -> dict[str, Any]:
    """SCROLL: ``±window`` messages of every role around message ``around`` (Hermes' order of
    checks: current-lineage guard, session, window, then a same-lineage rebind)."""
    anchor = store.storage.message_position(around)
    owner = anchor["session_id"] if anchor is not None else None
    if store.in_live_context(owner or session_id, anchor["seq"] if anchor is not None else None):
        return tool_error("scroll rejected: anchor lives in the current session lineage (already in your "
                          "active context)", success=False)
    session = store.session(session_id)
    if session is None:
        return tool_error(f"session_id not found: {session_id}", success=False)
    warning = None
    if owner is not None and owner != session_id \
            and store.lineage.root(owner) == store.lineage.root(session_id):
        warning = f"around_message_id {around} lives in {owner} (child of {session_id}); rebound transparently"
        session_id, session = owner, store.session(owner) or session
    if anchor is None or owner != session_id:
        return tool_error(f"around_message_id {around} not in session_id {session_id}", success=False)
    messages, before, after, _lo, _hi = store.window(session_id, anchor["seq"], window, None, WINDOW_CHARS)
    payload: dict[str, Any] = {
        "success": True,
        "mode": "scroll",
        "session_id": session_id,
        "around_message_id": around,
        "session_meta": store.session_meta(session),
        "window": window,
        "messages": messages,
        "messages_before": before,
        "messages_after": after,
        "hint": SCROLL_HINT,
    }
    if warning:
        payload["warning"] = warning
    return store.with_writer(payload, session_id)  # beside session_meta, which keeps Hermes' keys


def read(store: _Store, session_id: str) -> dict[str, Any]:
    """READ: a whole session (every role), or its first 20 and last 10 messages when larger."""
    session = store.session(session_id)
    if session is None:
        return tool_error(f"session_id not found: {session_id}", success=False)
    total = store.count(session_id)
    payload: dict[str, Any] = {
        "success": True,
        "mode": "read",
        "session_id": session_id,
        "link": _link(session_id, store.profile),
        "session_meta": store.session_meta(session),
        "message_count": total,
        "truncated": total > READ_HEAD + READ_TAIL,
    }
    if payload["truncated"]:
        head = store.messages(session_id, None, limit=READ_HEAD)
        tail = store.messages(session_id, None, newest_first=True, limit=READ_TAIL)[::-1]
        payload["messages"] = [_message(r, READ_CHARS) for r in head + tail]
        payload["message"] = (f"Session has {total} messages; showing first {READ_HEAD} + last {READ_TAIL}. "
                              "Pass around_message_id (any id above) to scroll the middle.")
    else:
        payload["messages"] = [_message(r, READ_CHARS) for r in store.messages(session_id, None)]
    return store.with_writer(payload, session_id)  # beside session_meta, which keeps Hermes' keys


_SANE_EPOCH = (946684800.0, 4102444800.0)  # 2000-01-01 .. 2100-01-01
_BRANCH_KEYS = ("_branched_from", "_reset_from", "branched_from", "reset_from")
MAX_CHAIN = 100


class _Chains:
    """Compression chains: a session that ended with ``compression`` continues in the child
    started after it ended (Hermes' ``get_compression_tip``)."""

    def __init__(self, store: _Store) -> None:
        self.store = store
        self._children: dict[str, list[dict[str, Any]]] | None = None

    def children(self, session_id: str) -> list[dict[str, Any]]:
        if self._children is None:
            self._children = {}
            for row in self.store.storage.lineage_rows():
                if row.get("parent_session_id"):
                    self._children.setdefault(row["parent_session_id"], []).append(row)
        return self._children.get(session_id, [])

    @staticmethod
    def continues(parent: dict[str, Any] | None, child: dict[str, Any]) -> bool:
        if parent is None or _end_reason(parent) != "compression":
            return False
        ended, started = parent.get("ended_at"), child.get("started_at")
        return ended is None or started is None or started >= ended

    def root(self, row: dict[str, Any]) -> dict[str, Any]:
        """The first session of the compression chain ``row`` is in."""
        for _ in range(MAX_CHAIN):
            parent_id = row.get("parent_session_id")
            parent = self.store.session(parent_id) if parent_id else None
            if not self.continues(parent, row):
                break
            row = parent  # type: ignore[assignment]
        return row

    def tip(self, row: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The newest continuation of ``row`` and every session of the chain."""
        chain = [row]
        for _ in range(MAX_CHAIN):
            if _end_reason(row) != "compression":
                break
            nexts = [c for c in self.children(row["id"]) if self.continues(row, c)]
            if not nexts:
                break
            newest = max(nexts, key=lambda c: (c.get("started_at") or 0, c["id"]))
            row = self.store.session(newest["id"]) or newest
            chain.append(row)
        return row, chain


def _last_active(store: _Store, row: dict[str, Any]) -> float | None:
    """Hermes' ``last_active``: the newest message's timestamp, else the start (never ``ended_at``)."""
    last = store.storage.last_message_timestamp(row["id"])
    stamps = [t for t in (last, row.get("started_at"))
              if isinstance(t, (int, float)) and _SANE_EPOCH[0] <= t <= _SANE_EPOCH[1]]
    return stamps[0] if stamps else None


def browse(store: _Store, limit: int) -> dict[str, Any]:
    """BROWSE: the most recently active conversations. A compressed lineage is one entry, shown
    as its newest continuation (its id, title, model, counts and activity; the root's start)."""
    rows = store.storage.list_sessions(exclude_sources=HIDDEN_SOURCES, limit=(limit + 15) * 4)
    chains = _Chains(store)
    current_root = chains.root(store.session(store.current) or {"id": store.current}) if store.current else None
    seen: set[str] = set()
    candidates = []
    for row in rows:
        root = chains.root(row)
        if root["id"] in seen:
            continue
        if root["id"] == row["id"] and row.get("parent_session_id") \
                and store.session(row["parent_session_id"]) is not None:
            meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
            if not any(meta.get(k) for k in _BRANCH_KEYS):
                continue  # delegation and other children are not conversations of their own
        seen.add(root["id"])
        tip, chain = chains.tip(root)
        if tip["id"] == store.current or (current_root is not None and root["id"] == current_root["id"]
                                         and tip["id"] != root["id"]):
            continue
        actives = [t for t in (_last_active(store, r) for r in chain) if t is not None]
        candidates.append((max(actives) if actives else None, root, tip))
    candidates.sort(key=lambda item: item[0] or 0.0, reverse=True)
    results = []
    for _activity, root, tip in candidates[:limit]:
        first_user = ""
        for row in store.messages(tip["id"], ("user",), nonempty=True, limit=PREVIEW_SCAN):
            text = row["content"] or ""
            first_user = strip_boilerplate(text) if "<" in text else None
            first_user = text if first_user is None else first_user
            if first_user.strip():
                break  # the first user turn that is the user's words, not an agent's wrapper
        first_user = " ".join(without_escapes(first_user).split())
        preview = first_user[:PREVIEW_CHARS] + ("..." if len(first_user) > PREVIEW_CHARS else "")
        results.append(store.with_writer({
            "session_id": tip["id"],
            "link": _link(tip["id"], store.profile),
            "title": _title(tip) or None,
            "source": _label(tip.get("source") or root.get("source")),
            "started_at": root.get("started_at"),
            "last_active": _last_active(store, tip),  # the tip's own; the lineage's orders the list
            "message_count": tip.get("message_count") or store.count(tip["id"]),
            "preview": guard_past(preview, f"first message of session {tip['id']}"),
        }, tip["id"]))
    return {
        "success": True,
        "mode": "browse",
        "results": results,
        "count": len(results),
        "message": BROWSE_MESSAGE.format(n=len(results)),
    }


# --------------------------------------------------------------------------- handler


def _empty(mode: str, query: str | None, detail: str) -> dict[str, Any]:
    """The answer for a home whose session store does not exist yet."""
    if mode == "browse":
        return {"success": True, "mode": "browse", "results": [], "count": 0,
                "message": BROWSE_MESSAGE.format(n=0)}
    return {"success": True, "mode": "discover", "query": query, "detail": detail, "results": [],
            "count": 0, "message": NO_MATCH_MESSAGE}


def _open(ctx: ToolContext, profile: str | None) -> tuple[Database | None, str | None]:
    """The database to search (None when it does not exist yet) and the profile name for links."""
    if profile:
        home = ctx.home
        base = home.root.parent.parent if home.profile else home.root
        canon = profile.strip().lower()
        if canon == "default":  # Hermes: the alias "default" (any case) is the root home
            target = Home(base)
        else:
            try:
                target = Home(base, profile)
            except Exception as exc:  # noqa: BLE001 - reported to the agent as an argument error
                raise ToolArgumentError(f"'profile': {exc}") from exc
            if not Path(target.root).is_dir():  # Hermes' wording for a profile that does not exist
                raise ToolArgumentError(f"profile '{profile}': profile '{canon}' does not exist")
        if Path(target.root).resolve() == Path(ctx.home.root).resolve():
            return _open(ctx, None)[0], profile  # this home itself, on whichever engine it uses
        if not target.store_exists():
            raise ToolArgumentError(f"'profile': no session store for profile {profile!r}")
        return ctx.resource(f"session_search.db.{profile}", lambda: target.open_db(readonly=True)), profile
    if not ctx.home.store_exists():
        return None, ctx.home.profile
    return ctx.resource("session_search.db", ctx.home.open_db), ctx.home.profile


def _not_in_profile(session_id: str) -> dict[str, Any]:
    """Hermes' READ miss: profiles are isolated, so a bare id is never looked up in another
    profile's store (#106761); the reply says how to name the profile."""
    return tool_error(f"session_id not found in this profile: {session_id}. If it belongs to another "
                      "profile, pass profile=<name> (or the @session:<profile>/<id> link).", success=False)


def handle_session_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Dispatch one ``session_search`` call to scroll, read, browse or discover."""
    query = get_str(args, "query", max_chars=10_000)
    session_id = get_str(args, "session_id")
    profile = get_str(args, "profile")
    try:
        around = get_int(args, "around_message_id")
    except ToolArgumentError:
        if session_id is not None and session_id.strip():
            return tool_error("scroll requires integer around_message_id", success=False)
        raise
    window = lenient_int(args, "window", DEFAULT_WINDOW, MAX_WINDOW)
    limit = lenient_int(args, "limit", DEFAULT_LIMIT, MAX_LIMIT)
    sort = folded_choice(args, "sort", ("newest", "oldest", "relevance"), None)
    detail = folded_choice(args, "detail", ("adaptive", "full"), "adaptive")
    roles = read_roles(args, DEFAULT_ROLES)
    if session_id is not None:
        session_id = clean_query_text(session_id).strip()  # controls (NUL) read as on every engine
        if "/" in session_id and not profile:
            profile, session_id = session_id.split("/", 1)
        if not session_id:
            raise ToolArgumentError("'session_id' must not be empty")
    db, link_profile = _open(ctx, profile)
    current = "" if profile else (ctx.session_id or "")
    mode = ("scroll" if session_id and around is not None else "read" if session_id
            else "discover" if query and query.strip() else "browse")
    if mode == "discover":  # a wrong type or size names the argument; a bad text gets Hermes' error
        bound_args = {k: get_str(args, k, max_chars=BOUND_MAX_CHARS, exact=True) for k in ("after", "before")}
        bound_args["exclude_session_ids"] = args.get("exclude_session_ids")
        try:  # reported even when there is nothing to search yet
            Bounds.read(None, bound_args)
        except timeutil.TimeParseError as exc:
            return tool_error(str(exc), success=False)
    if db is None or not index_ready(db):
        if mode == "read" and not profile:
            return _not_in_profile(session_id)
        if mode in ("scroll", "read"):
            return tool_error(f"session_id not found: {session_id}", success=False)
        return _empty(mode, query, detail)
    hidden = tuple(r for r in HIDDEN_ROLES if r not in roles)
    semantic, semantic_off = (None, None) if profile else ctx.resource(
        "session_search.semantic", lambda: SemanticSlot(ctx.home)).get()
    store = _Store(db, link_profile, current, hidden, semantic, semantic_off)
    if mode == "read" and "#" in session_id and store.session(named_id(session_id)) is None:
        # a ref SESSION_ID#N (or old @session:ID #K), not a session's own id: scroll there
        ref, mode = parse_ref(session_id), "scroll"
        at = store.messages(ref.session_id, None, at_seq=ref.seq) if ref.seq is not None else [{"id": -1}]
        around, session_id = (ref.message_id or (at[0]["id"] if at else -1)), ref.session_id
    if mode == "scroll":
        return scroll(store, session_id, around, window)
    if mode == "read":
        found = read(store, session_id)
        return found if found["success"] or profile else _not_in_profile(session_id)
    if mode == "browse":
        return browse(store, limit)
    try:
        bounds = Bounds.read(store.lineage, bound_args)
    except timeutil.TimeParseError as exc:
        return tool_error(str(exc), success=False)
    return discover(store, query.strip(), limit=limit, sort=sort, detail=detail, roles=roles,
                    bounds=bounds)


SESSION_SEARCH_TOOL = Tool("session_search", SESSION_SEARCH_SCHEMA, handle_session_search)
