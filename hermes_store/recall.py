"""One query over the three kinds of past: built-in memory, the fact store and past sessions.

``recall(query)`` asks every kind at once. Each kind ranks its own candidates
(FTS5 bm25 through the shared ``hermes_store.query`` rules); the lists are fused
by weighted reciprocal-rank fusion, where a fact's weight follows its trust
score and a session message's weight follows its age. Every item says why it
ranked where it did and carries its provenance. With ``budget_tokens`` the best
items are packed greedily into a prompt-ready block and the rest reported as
omitted. A kind that is absent (no files, no database yet) contributes nothing;
a kind that fails is reported in ``errors`` and never raises.
"""

from __future__ import annotations

import secrets
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timezone
from typing import Any

from hermes_store import timeutil
from hermes_store.builtin.provenance import Provenance
from hermes_store.builtin.render import estimate_tokens
from hermes_store.builtin.search import search_entries
from hermes_store.db import Database
from hermes_store.excerpts import HIGHLIGHT_MARKS
from hermes_store.facts.shown import guard_fact
from hermes_store.home import Home, described
from hermes_store.sessions.importers.base import MAX_LABEL_CHARS, cap_chars
from hermes_store.sessions.refs import message_ref
from hermes_store.sessions.shown import without_escapes
from hermes_store.threats import sanitize_entry
from hermes_store.tooling import (
    Tool,
    ToolArgumentError,
    ToolContext,
    function_schema,
    get_float,
    get_int,
    get_str,
    get_str_list,
    sanitize_context,
    shown,
)

RRF_K = 20  # reciprocal-rank-fusion constant: small lists, so a small k keeps ranks apart
DEFAULT_TRUST = 0.5
RECENCY_HALF_LIFE_DAYS = 180.0
MIN_TRIMMED_TOKENS = 24  # below this a trimmed item is not worth including


# The marks recall's own searches put around matched words: a private-use pair holding a token
# drawn per process, which no stored text holds. The budget block drops exactly them (a ``>>>``
# prompt or a ``<<<<<<<`` conflict line in a message stays as written), and the items' snippets
# get the caller's marks in their place.
_TOKEN = secrets.token_hex(6)
_OWN_MARKS: tuple[str, str] = (f"\ue000{_TOKEN}\ue001", f"\ue002{_TOKEN}\ue001")


def _with_marks(text: str | None, marks: tuple[str, str]) -> str | None:
    """``text`` with recall's own marks replaced by ``marks``."""
    if not text:
        return text
    return text.replace(_OWN_MARKS[0], marks[0]).replace(_OWN_MARKS[1], marks[1])


@dataclass
class RecallItem:
    """One recalled item of any kind."""

    kind: str
    id: Any
    text: str
    score: float = 0.0
    kind_rank: int = 0
    kind_score: float = 0.0
    why: str = ""
    snippet: str | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: kind, id, text/snippet, score, why, then provenance fields."""
        out: dict[str, Any] = {"kind": self.kind, "id": self.id, "score": round(self.score, 6)}
        kind = KIND_BY_NAME.get(self.kind)
        if kind is not None and kind.snippet_only:
            out["snippet"] = self.snippet if self.snippet is not None else self.text
        else:
            out["text"] = self.text
            if self.snippet is not None:
                out["snippet"] = self.snippet
        out["why"] = self.why
        out.update(self.provenance)
        return out


@dataclass
class RecallResult:
    """Fused results, what the budget left out, per-kind notes and errors, the rendered block."""

    query: str
    results: list[RecallItem]
    omitted: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    kinds_searched: list[str] = field(default_factory=list)
    rendered: str | None = None
    budget_tokens: int | None = None
    used_tokens: int | None = None

    @property
    def count(self) -> int:
        return len(self.results)

    def to_dict(self) -> dict[str, Any]:
        """``{"query", "count", "results", "omitted"?, ...}`` — the CLI/tool JSON."""
        out: dict[str, Any] = {
            "query": self.query,
            "count": self.count,
            "results": [item.to_dict() for item in self.results],
        }
        if self.omitted:
            out["omitted"] = self.omitted
        if self.notes:
            out["query_notes"] = self.notes
        if self.errors:
            out["errors"] = self.errors
        out["kinds_searched"] = self.kinds_searched
        if self.budget_tokens is not None:
            out["budget_tokens"] = self.budget_tokens
            out["used_tokens"] = self.used_tokens
            out["rendered"] = self.rendered
        return out


# --------------------------------------------------------------------------- time helpers


def _iso(value: Any) -> str | None:
    moment = timeutil.datetime_of(timeutil.to_epoch(value), timezone.utc)
    return None if moment is None else moment.isoformat(timespec="seconds")


def _in_window(stamp: float | None, since: float | None, until: float | None) -> bool:
    if since is None and until is None:
        return True
    if stamp is None:
        return False
    return (since is None or stamp >= since) and (until is None or stamp <= until)


# --------------------------------------------------------------------------- kinds


@dataclass
class RecallRequest:
    """What one ``recall`` call asks every kind (times already parsed to epoch seconds)."""

    home: Home
    db: Database | None
    text: str
    limit: int
    kinds: tuple[str, ...]
    since: float | None = None
    until: float | None = None
    min_trust: float | None = None
    exclude_session_id: str = ""
    after: int | None = None  # past sessions only: their start, inclusive (Hermes' after)
    before: int | None = None  # past sessions only: their start, exclusive (Hermes' before)
    marks: tuple[str, str] = HIGHLIGHT_MARKS  # around the matched words of a snippet
    notes: dict[str, str] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)  # work kinds share within one call


class Kind(ABC):
    """One kind of past that ``recall`` asks: how to find, weigh, label and explain its items.

    A new kind is one subclass added to :data:`RECALL_KINDS`.
    """

    name: str = ""
    title: str = ""           # heading in the CLI's grouped output
    weight: float = 1.0       # fusion weight of the whole kind
    snippet_only: bool = False  # JSON items carry ``snippet`` instead of ``text``

    def available(self, request: RecallRequest) -> bool:
        """False when there is nothing to search yet (no database, no table): skipped silently."""
        return True

    @abstractmethod
    def candidates(self, request: RecallRequest) -> list[RecallItem]:
        """This kind's ranked items for the request (at most ``request.limit``)."""

    def why(self, item: RecallItem) -> str:
        """Why ``item`` ranked where it did (after :func:`fuse` set its rank)."""
        return f"{self.name} rank {item.kind_rank} (relevance {item.kind_score:.3f})"

    @abstractmethod
    def label(self, item: RecallItem) -> str:
        """The bracketed label of the item's line in the rendered block."""

    @abstractmethod
    def describe(self, fields: dict[str, Any]) -> tuple[str, str]:
        """``(heading, body)`` of an item (its JSON fields) in the CLI's grouped output."""


class BuiltinKind(Kind):
    """MEMORY.md or USER.md entries (both files are searched in one pass per call)."""

    def __init__(self, name: str, file: str, title: str) -> None:
        self.name, self.file, self.title = name, file, title

    def candidates(self, request: RecallRequest) -> list[RecallItem]:
        found = request.shared.get("builtin")
        if found is None:
            targets = tuple(k.name for k in RECALL_KINDS
                            if isinstance(k, BuiltinKind) and k.name in request.kinds)
            found = request.shared["builtin"] = _builtin_candidates(request, targets)
        return found.get(self.name, [])

    def label(self, item: RecallItem) -> str:
        when = item.provenance.get("updated_at") or item.provenance.get("created_at")
        return f"[{item.kind} #{item.id}{', ' + when[:10] if when else ''}]"

    def describe(self, fields: dict[str, Any]) -> tuple[str, str]:
        when = fields.get("updated_at") or fields.get("created_at")
        shown = timeutil.shown_time(when) if when else "time unknown"
        return f"  #{fields['id']}  ({shown})", fields.get("snippet") or fields["text"]


def _builtin_candidates(request: RecallRequest, targets: tuple[str, ...]) -> dict[str, list[RecallItem]]:
    home, db, limit = request.home, request.db, request.limit
    found = search_entries(db, home.memories_dir, request.text, targets=targets, limit=limit * 3,
                           marks=request.marks)
    if found.note:
        for target in targets:
            request.notes[target] = found.note
    by_kind: dict[str, list[RecallItem]] = {t: [] for t in targets}
    info: dict[str, dict[str, dict[str, Any]]] = {}
    if db is not None and found.hits:
        provenance = Provenance(home)
        try:
            info = {t: provenance.entry_info(t) for t in targets}
        finally:
            provenance.close()
    for hit in found.hits:
        prov = info.get(hit.target, {}).get(hit.content) or {}
        created, updated = prov.get("created_at"), prov.get("updated_at")
        if not _in_window(updated or created, request.since, request.until):
            continue
        source = KIND_BY_NAME[hit.target].file  # type: ignore[attr-defined]
        text = sanitize_entry(hit.content, source)
        # a blocked entry's snippet is cut from the same poisoned text: the notice stands for both
        snippet = hit.snippet if text == sanitize_context(hit.content) else text
        item = RecallItem(
            kind=hit.target, id=hit.index, text=text, kind_score=hit.score, snippet=snippet,
            provenance={
                "file": str(home.memories_dir / source),
                "created_at": _iso(created), "updated_at": _iso(updated),
                "origin": prov.get("updated_origin") or prov.get("created_origin"),
                "session_id": prov.get("updated_session") or prov.get("created_session") or None,
            },
        )
        by_kind[hit.target].append(item)
    return {k: v[:limit] for k, v in by_kind.items()}


_FACT_STORES: weakref.WeakKeyDictionary[Database, Any] = weakref.WeakKeyDictionary()


def _fact_store(db: Database) -> Any:
    """One FactStore per open Database, so its vector cache serves repeated recalls."""
    store = _FACT_STORES.get(db)
    if store is None:
        from hermes_store.facts import FactStore

        store = _FACT_STORES[db] = FactStore(db)
    return store


class FactsKind(Kind):
    """Facts of the fact store, weighted by trust."""

    name = "facts"
    title = "Facts"
    # Facts weigh 0.6: measured on LoCoMo (scripts/eval_recall.py) it keeps the transcript evidence
    # in the top 10 (turn hit@10 0.557 at 1.0 -> 0.758 at 0.6) while facts still lift session hit@10.
    weight = 0.6

    def available(self, request: RecallRequest) -> bool:
        return _table_ready(request, "facts")

    def candidates(self, request: RecallRequest) -> list[RecallItem]:
        assert request.db is not None  # checked by available()
        rows = _fact_store(request.db).search(request.text, limit=request.limit * 2,
                                              min_trust=request.min_trust)
        items: list[RecallItem] = []
        for stored in rows:
            if not _in_window(timeutil.to_epoch(stored.get("created_at")), request.since, request.until):
                continue
            row = guard_fact(stored)  # the one scan of recorded past, whenever the fact was stored
            trust = float(row.get("trust_score", DEFAULT_TRUST))
            items.append(RecallItem(
                kind=self.name, id=row["fact_id"],
                text=row["content"],
                kind_score=float(row.get("score", 0.0)), weight=max(0.0, min(2.0, trust / DEFAULT_TRUST)),
                provenance={
                    "trust_score": trust, "helpful_count": row.get("helpful_count", 0),
                    "retrieval_count": row.get("retrieval_count", 0), "category": row.get("category"),
                    "tags": row.get("tags"), "entities": row.get("entities", []),
                    "created_at": _iso(row.get("created_at")), "updated_at": _iso(row.get("updated_at")),
                    **({"written_by": row["written_by"]} if row.get("written_by") else {}),
                    **({"flagged": row["flagged"]} if row.get("flagged") else {}),
                },
            ))
        return items[:request.limit]

    def why(self, item: RecallItem) -> str:
        return f"{super().why(item)} × trust {item.provenance.get('trust_score', DEFAULT_TRUST):.2f}"

    def label(self, item: RecallItem) -> str:
        return f"[fact #{item.id}, trust {item.provenance.get('trust_score', DEFAULT_TRUST):.2f}]"

    def describe(self, fields: dict[str, Any]) -> tuple[str, str]:
        by = f", by {fields['written_by']}" if fields.get("written_by") else ""
        return (f"  #{fields['id']}  trust {fields['trust_score']:.2f}, helpful {fields.get('helpful_count', 0)}{by}",
                fields["text"])


class SessionsKind(Kind):
    """Messages of past sessions, weighted by age; the caller's own session tree is left out."""

    name = "sessions"
    title = "Past sessions"
    snippet_only = True

    def available(self, request: RecallRequest) -> bool:
        return _table_ready(request, "messages")

    def candidates(self, request: RecallRequest) -> list[RecallItem]:
        from hermes_store.sessions.search import Lineage, search_messages
        from hermes_store.sessions.storage import open_session_storage

        db, limit = request.db, request.limit
        lineage = Lineage(db)
        own_root = lineage.root(request.exclude_session_id) if request.exclude_session_id else None
        # expand_context lets the neighbours of strong matches in: the best evidence recall (LoCoMo)
        found = search_messages(db, request.text, limit=limit * 2 if own_root else limit,
                                since=request.since, until=request.until, expand_context=True,
                                after=request.after, before=request.before, marks=request.marks)
        if found.note:
            request.notes[self.name] = found.note
        now = time.time()
        items: list[RecallItem] = []
        # on a shared store: which host/home wrote each session
        writers = open_session_storage(db).session_writers(sorted({r["session_id"] for r in found.results}))
        for row in found.results:
            if own_root is not None and lineage.root(row["session_id"]) == own_root:
                continue
            snippet = without_escapes(row.get("snippet") or "")  # recorded escapes reach no model
            if not snippet.strip():  # e.g. a tool-call-only assistant turn
                continue
            stamp = row.get("timestamp")
            age_days = max(0.0, (now - stamp) / 86400) if stamp else None
            recency = 1.0 if age_days is None else 0.85 + 0.3 * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
            items.append(RecallItem(
                kind=self.name, id=row["message_id"], text=snippet,
                snippet=snippet, kind_score=float(row.get("score") or 0.0), weight=recency,
                provenance={
                    "session_id": row["session_id"], "seq": row.get("seq"), "role": row.get("role"),
                    "timestamp": stamp, "time": _iso(stamp), "source": cap_chars(row.get("source"), MAX_LABEL_CHARS),
                    "title": without_escapes(row["title"]) if row.get("title") else row.get("title"), "link": f"@session:{row['session_id']}",
                    "ref": message_ref(row["session_id"], row["seq"]) if row.get("seq") is not None else None,
                    **({"written_by": writers[row["session_id"]]} if row["session_id"] in writers else {}),
                },
            ))
        return items[:limit]

    def why(self, item: RecallItem) -> str:
        base = super().why(item)
        return f"{base} × recency {item.weight:.2f}" if item.weight != 1.0 else base

    def label(self, item: RecallItem) -> str:
        when = item.provenance.get("time")
        name = item.provenance.get("ref") or f"{item.provenance.get('link')} #{item.id}"
        return f"[{name}{', ' + when[:10] if when else ''}, {item.provenance.get('role')}]"

    def describe(self, fields: dict[str, Any]) -> tuple[str, str]:
        name = fields.get("ref") or f"{fields['link']} #{fields['id']}"
        head = (f"  {name}  {timeutil.shown_time(fields.get('timestamp'))} {fields.get('role') or ''} "
                f"{fields.get('title') or ''}").rstrip()
        if fields.get("written_by"):
            head += f"  (by {fields['written_by']})"
        return head, fields.get("snippet") or ""


def _table_ready(request: RecallRequest, table: str) -> bool:
    """False without a database; a database missing ``table`` is broken, not empty (raises)."""
    if request.db is None:
        return False
    if not request.db.table_exists(table):
        raise LookupError(f"{getattr(request.db, 'path', 'the database')}: table {table} is missing "
                          "(run `hermes-store doctor --fix`)")
    return True


RECALL_KINDS: tuple[Kind, ...] = (
    BuiltinKind("memory", "MEMORY.md", "Memory (MEMORY.md)"),
    BuiltinKind("user", "USER.md", "User profile (USER.md)"),
    FactsKind(),
    SessionsKind(),
)
KIND_BY_NAME: dict[str, Kind] = {kind.name: kind for kind in RECALL_KINDS}
KINDS: tuple[str, ...] = tuple(KIND_BY_NAME)


def unknown_kinds_problem(kinds: Iterable[str]) -> str | None:
    """``"unknown kind …; choose from …"`` (``kinds`` for more than one) when ``kinds`` names a
    kind that does not exist."""
    bad = list(dict.fromkeys(k for k in kinds if k not in KIND_BY_NAME))
    if not bad:
        return None
    return f"unknown {'kind' if len(bad) == 1 else 'kinds'} {shown(', '.join(bad))}; choose from {', '.join(KINDS)}"


# --------------------------------------------------------------------------- fusion


def fuse(lists: dict[str, list[RecallItem]], limit: int) -> list[RecallItem]:
    """Weighted reciprocal-rank fusion of each kind's ranked list; fills score and why."""
    fused: list[RecallItem] = []
    for name, items in lists.items():
        kind = KIND_BY_NAME.get(name)
        for rank, item in enumerate(items, start=1):
            item.kind_rank = rank
            item.score = (kind.weight if kind else 1.0) * item.weight / (RRF_K + rank)
            item.why = kind.why(item) if kind else f"{name} rank {rank} (relevance {item.kind_score:.3f})"
            fused.append(item)
    fused.sort(key=lambda it: (-it.score, it.kind_rank, KINDS.index(it.kind) if it.kind in KINDS else 9))
    return fused[:limit]


# --------------------------------------------------------------------------- budget


def render_item(item: RecallItem, text: str | None = None, marks: tuple[str, str] = HIGHLIGHT_MARKS) -> str:
    """One line of the recall block for ``item`` (``text`` overrides its text, e.g. trimmed),
    without the ``marks`` its snippet was made with."""
    body = " ".join((text if text is not None else item.text).split())
    body = body.replace(marks[0], "").replace(marks[1], "")
    return sanitize_context(f"- {KIND_BY_NAME[item.kind].label(item)} {body}")


def _trim_to_tokens(text: str, tokens: int) -> str:
    """The longest word-boundary prefix of ``text`` (plus …) estimated at ≤ ``tokens``."""
    words = text.split()
    low, high = 0, len(words)
    while low < high:
        mid = (low + high + 1) // 2
        if estimate_tokens(" ".join(words[:mid]) + " …") <= tokens:
            low = mid
        else:
            high = mid - 1
    return " ".join(words[:low]) + " …" if low else ""


def pack(items: list[RecallItem], budget_tokens: int, query: str,
         marks: tuple[str, str] = HIGHLIGHT_MARKS) -> tuple[list[RecallItem], list[dict[str, Any]], str, int]:
    """Greedily pack the best items into a block of at most ``budget_tokens`` estimated tokens
    (``marks``: those of the items' snippets, left out of the block)."""
    header = f"Recalled for: {' '.join(query.split())[:200]}"
    used = estimate_tokens(header) + 1
    lines = [header]
    kept: list[RecallItem] = []
    omitted: list[dict[str, Any]] = []
    for item in items:
        line = render_item(item, marks=marks)
        cost = estimate_tokens(line) + 1
        if used + cost <= budget_tokens:
            lines.append(line)
            kept.append(item)
            used += cost
            continue
        room = budget_tokens - used - estimate_tokens(render_item(item, "", marks)) - 1
        trimmed = _trim_to_tokens(item.text, room) if room >= MIN_TRIMMED_TOKENS else ""
        if trimmed:
            line = render_item(item, trimmed, marks)
            lines.append(line)
            used += estimate_tokens(line) + 1
            item.provenance = {**item.provenance, "trimmed": True}
            kept.append(item)
        else:
            omitted.append({"kind": item.kind, "id": item.id, "score": round(item.score, 6),
                            "reason": "over budget", "tokens": cost})
    if not kept:
        lines.append("(nothing fits the budget)")
    return kept, omitted, "\n".join(lines), used


# --------------------------------------------------------------------------- recall


def _open_existing_db(home: Home) -> Database | None:
    """The home's store if it exists (a SQLite file is never created by a read; a configured
    server is opened, a failure to reach it raised for the caller to report)."""
    return home.open_existing_db()


def recall(query: str, *, kinds: Iterable[str] = KINDS, limit: int = 10, budget_tokens: int | None = None,
           since: Any = None, until: Any = None, min_trust: float | None = None,
           home: Home | str | None = None, db: Database | None = None,
           exclude_session_id: str = "", after: Any = None, before: Any = None,
           marks: tuple[str, str] = HIGHLIGHT_MARKS, store_error: BaseException | None = None) -> RecallResult:
    """Ask built-in memory, the fact store and past sessions at once and fuse the answers.

    ``kinds`` picks any of memory, user, facts, sessions. ``since``/``until``
    take epoch seconds, ISO dates or ages like ``30d``. ``min_trust`` overrides
    the fact store's threshold. ``after``/``before`` bound the start of past sessions as
    ``session_search`` does (:func:`hermes_store.timeutil.parse_bound`: inclusive/exclusive, a
    date-only ``before`` is midnight UTC). Never raises on query text; a failing kind is
    reported in ``errors``. ``marks`` (open, close) surround the matched words of memory and
    session snippets (:data:`~hermes_store.excerpts.HIGHLIGHT_MARKS` by default).
    ``store_error`` is the caller's failure to open the store (``db`` is then None and the store
    is not tried again): reported in ``errors`` as a failure to open it here would be.
    """
    home = home if isinstance(home, Home) else Home(home)
    kinds = list(kinds)
    problem = unknown_kinds_problem(kinds)
    if problem:
        raise ValueError(f"kinds: {problem}")
    limit = max(1, int(limit))
    since_ts = timeutil.parse_when(since, name="since")
    until_ts = timeutil.parse_when(until, name="until", end_of_day=True)
    after_ts, before_ts = timeutil.parse_bound(after), timeutil.parse_bound(before)
    result = RecallResult(query=str(query or ""), results=[])
    if home.root.exists() and not home.root.is_dir():
        result.errors["home"] = f"{home.root}: the Hermes home is not a directory"
        return result
    own_db = None
    if store_error is not None:
        result.errors["database"] = f"{type(store_error).__name__}: {store_error}"
    elif db is None:
        try:
            own_db = db = _open_existing_db(home)
        except Exception as exc:  # an unreadable DB must not hide the .md files
            result.errors["database"] = described(exc)
    try:
        request = RecallRequest(home=home, db=db, text=result.query, limit=limit,
                                kinds=tuple(k for k in KINDS if k in set(kinds)), since=since_ts,
                                until=until_ts, min_trust=min_trust,
                                exclude_session_id=exclude_session_id, notes=result.notes,
                                after=after_ts, before=before_ts, marks=_OWN_MARKS)
        lists: dict[str, list[RecallItem]] = {}
        for kind in RECALL_KINDS:
            if kind.name not in request.kinds:
                continue
            try:
                if not kind.available(request):
                    continue
                lists[kind.name] = kind.candidates(request)
                result.kinds_searched.append(kind.name)
            except Exception as exc:
                result.errors[kind.name] = described(exc)
        fused = fuse(lists, limit)
        if budget_tokens is not None:
            kept, omitted, rendered, used = pack(fused, int(budget_tokens), result.query, _OWN_MARKS)
            result.results, result.omitted, result.rendered = kept, omitted, rendered
            result.budget_tokens, result.used_tokens = int(budget_tokens), used
        else:
            result.results = fused
        for item in result.results:
            item.text = _with_marks(item.text, marks) or ""
            item.snippet = _with_marks(item.snippet, marks)
        return result
    finally:
        if own_db is not None:
            own_db.close()


# --------------------------------------------------------------------------- the tool


RECALL_SCHEMA = function_schema(
    "recall",
    "Search everything you remember at once: your built-in notes (MEMORY.md), the user profile "
    "(USER.md), stored facts (with trust scores) and past conversation transcripts. Use it before "
    "asking the user something they may have told you already, or when you need context from "
    "earlier work. Returns one ranked list; each item says its kind, where it came from and why "
    "it ranked. Give `budget_tokens` to get a compact block that fits that many tokens.",
    {
        "query": {"type": "string", "description": "What to look for: keywords or a natural question."},
        "kinds": {
            "type": "array", "items": {"type": "string", "enum": list(KINDS)},
            "description": "Which kinds of past to search (default: all).",
        },
        "limit": {"type": "integer", "description": "Maximum results (1-50, default 10).", "minimum": 1, "maximum": 50},
        "budget_tokens": {"type": "integer", "description": "Pack the best results into at most this many tokens."},
        "since": {"type": "string", "description": "Only items from this date on (ISO date or age like 30d)."},
        "until": {"type": "string", "description": "Only items up to this date (ISO date or age)."},
        "min_trust": {"type": "number", "description": "Hide facts below this trust (0-1)."},
        "after": {"type": "string", "description": "Past sessions started at or after this (ISO "
                  "date/datetime or 7d, 24h, 2w), as session_search's after."},
        "before": {"type": "string", "description": "Past sessions started before this (a date-only "
                   "value is midnight UTC), as session_search's before."},
    },
    ["query"],
)


def _recall_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    query = get_str(args, "query", required=True, max_chars=10_000)
    kinds = get_str_list(args, "kinds", default=list(KINDS)) or list(KINDS)
    problem = unknown_kinds_problem(kinds)
    if problem:
        raise ToolArgumentError(f"'kinds' has {problem}")
    limit = get_int(args, "limit", default=10, minimum=1, maximum=50, clamp=True)
    budget = get_int(args, "budget_tokens", default=None, minimum=1, maximum=1_000_000)
    min_trust = get_float(args, "min_trust", default=None)
    if min_trust is not None and not 0.0 <= min_trust <= 1.0:
        raise ToolArgumentError("'min_trust' must be between 0 and 1")
    for name in ("since", "until"):
        value = args.get(name)
        if value is not None and not isinstance(value, (str, int, float)):
            raise ToolArgumentError(f"'{name}' must be a date string or epoch seconds")
        if isinstance(value, str) and len(value) > 100:
            raise ToolArgumentError(f"'{name}' is too long ({len(value):,} chars) for a date or an age")
        try:
            timeutil.parse_when(value)  # the error is prefixed with the name below, once
        except ValueError as exc:
            raise ToolArgumentError(f"'{name}': {exc}") from exc
    for name in ("after", "before"):
        get_str(args, name, max_chars=100, exact=True)  # a wrong type or size names the argument
        try:
            timeutil.parse_bound(args.get(name))
        except ValueError as exc:
            raise ToolArgumentError(f"'{name}': {exc}") from exc
    store_error: Exception | None = None
    try:
        db = ctx.resource("recall_db", lambda: _open_existing_db(ctx.home))
    except Exception as exc:  # noqa: BLE001 - an unreachable store must not hide the .md files
        db, store_error = None, exc  # not cached: the next call tries the store again
    if db is None:  # not created yet: look again next call
        ctx.forget("recall_db")
    result = recall(query, kinds=kinds, limit=limit, budget_tokens=budget, since=args.get("since"),
                    until=args.get("until"), min_trust=min_trust, home=ctx.home, db=db,
                    exclude_session_id=ctx.session_id, after=args.get("after"), before=args.get("before"),
                    store_error=store_error)
    return {"success": True, **result.to_dict()}


RECALL_TOOL = Tool("recall", RECALL_SCHEMA, _recall_handler)
