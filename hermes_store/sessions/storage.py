"""The session store's storage interface: every read and write of the session index.

:class:`SessionStorage` is the one door between the ``sessions`` package and
its database. The live API (:mod:`~hermes_store.sessions.live`), the bulk
loader, search, maintenance and the ``session_search`` tool call only these
plain methods; the SQL lives in the implementations
(:mod:`~hermes_store.sessions.storage_sqlite` for APSW/FTS5 today).
:func:`open_session_storage` picks the implementation by ``db.engine`` from
:data:`STORAGE_ENGINES`, so a second engine is one more entry, not a caller edit.

Nothing engine-specific crosses this interface: rows are plain dicts and
tuples, filters are :class:`Filters`, and a full-text match is given as a
compiled :class:`hermes_store.query.Match` (the engine renders it in its own
syntax) -- never as SQL or FTS5 text. An engine that rejects a match raises
:class:`hermes_store.query.QueryRejected`.

Data the bulk loader hands over (see :class:`BulkWriter`):

* message rows: tuples in :data:`MESSAGE_ROW_FIELDS` order;
* :class:`SessionDelta`: per-session changes of one batch;
* sources: ``(handle, progress)`` pairs, where ``handle`` is any object with
  ``key`` (the file's resolved path), ``format`` and a writable ``source_id``
  (the writer fills it in), and ``progress`` a dict with ``size, mtime,
  content_hash, resume_at`` and ``meta`` (JSON text).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes_store.engines import DEFAULT_ENGINE, StoreDatabase, storage_registry
from hermes_store.query import Match
from hermes_store.sessions.calltext import derived
from hermes_store.storage_base import engine_class

# the order of the values in one message row handed to BulkWriter.write
MESSAGE_ROW_FIELDS = ("session_id", "seq", "role", "content", "tool_name", "tool_calls",
                      "tool_call_id", "timestamp", "cjk", "calls", "tools", "search_text",
                      "message_uid")
LEGACY_ROW_LENGTH = 9  # a row without the derived values (calls, tools, search_text)
NO_UID_ROW_LENGTH = 12  # a row without the source's message uid (SQLite 0012 / pg 0010)
# the values UPDATE sets for a message re-read under a stored uid, then (session_id, message_uid)
MESSAGE_UPDATE_FIELDS = ("content", "tool_calls", "cjk", "calls", "tools", "search_text")


def full_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Message rows in :data:`MESSAGE_ROW_FIELDS` order; rows given without the derived
    values (the first nine fields only) get them computed here, rows without a message uid
    (twelve fields) get None for it."""
    width = len(MESSAGE_ROW_FIELDS)
    if not rows or set(map(len, rows)) == {width}:
        return rows
    return [_full_row(row) for row in rows]


def _full_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    if len(row) == LEGACY_ROW_LENGTH:
        row = (*row, *derived(row[2], row[3], row[4], row[5]))
    return (*row, None) if len(row) == NO_UID_ROW_LENGTH else row


# session fields the bulk loader may set or update
SESSION_FIELDS = ("source", "title", "model", "workspace", "started_at", "ended_at",
                  "parent_session_id")
SORTS: tuple[str, ...] = ("relevance", "newest", "oldest")

# engine name (``Database.engine``) -> "module:Class" of its SessionStorage implementation
STORAGE_ENGINES: dict[str, str] = storage_registry("sessions")  # from the one engine registry


@dataclass
class Filters:
    """Row filters applied inside a search (``None``: no filter; an empty list matches nothing,
    except for ``exclude_sources``)."""

    roles: Sequence[str] | None = None
    exclude_roles: Sequence[str] | None = None
    sources: Sequence[str] | None = None
    exclude_sources: Sequence[str] | None = None
    since: float | None = None
    until: float | None = None
    session_ids: Sequence[str] | None = None
    tools: Sequence[str] | None = None  # messages calling (or answering for) one of these tools
    started_after: float | None = None  # the session's start: inclusive lower bound
    started_before: float | None = None  # the session's start: exclusive upper bound

    def value_filters(self) -> list[tuple[str, list[Any], bool]]:
        """``(field, values, negate)`` for every list filter that is set, ``field`` being
        ``"role"``, ``"source"`` or ``"session_id"``: the one list both engines render, so a
        filter added here reaches every engine."""
        return [(field, list(values), negate) for field, values, negate in (
            ("role", self.roles, False),
            ("role", self.exclude_roles, True),
            ("source", self.sources, False),
            ("source", self.exclude_sources, True),
            ("session_id", self.session_ids, False),
        ) if values is not None]


@dataclass(slots=True)
class Hit:
    """One matching message (without its snippet until the search attaches one).

    ``score`` is higher-better; ``expression`` is the :class:`~hermes_store.query.Match`
    that found it (None for a context neighbour found by position); ``own_score`` is the
    message's own score before context smoothing added its neighbours' (None when unsmoothed).
    """

    message_id: int
    session_id: str
    seq: int
    role: str
    timestamp: float | None
    source: str
    title: str | None
    score: float
    expression: Match | None
    snippet: str = ""
    own_score: float | None = None

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


class SourceHandle(Protocol):
    """What the bulk writer needs of an input file: its key, format and (writable) source id."""

    key: str
    format: str
    source_id: int | None
    default_source: str  # sessions.source for a new session whose importer gave none


@dataclass
class SessionDelta:
    """What one batch changes in one session.

    ``fields`` holds :data:`SESSION_FIELDS` values and optionally ``meta`` (a dict merged into
    the stored meta); ``added`` messages with timestamps ``min_ts..max_ts`` were appended;
    ``derive_end`` lets the newest message timestamp advance ``ended_at``; ``adopted``: the
    session, stored from another file, is continued by ``owner`` (which holds all it stored and
    goes on), so it is ``owner``'s from now on (``source_id``, ``origin_format``).
    """

    session_id: str
    fields: dict[str, Any]
    is_new: bool
    owner: SourceHandle
    added: int
    min_ts: float | None
    max_ts: float | None
    derive_end: bool
    adopted: bool = False


@dataclass
class Batch:
    """One bulk-loader transaction: message rows, session deltas and source progress.

    ``fts_mode`` is a hint for engines with a choice of how the full-text index follows
    (``"batch"``: index the batch in one pass; ``"trigger"``: row by row).
    """

    rows: list[tuple[Any, ...]]
    fts_mode: str = "batch"
    sessions: list[SessionDelta] = field(default_factory=list)
    sources: list[tuple[SourceHandle, dict[str, Any]]] = field(default_factory=list)
    # messages re-read under a stored uid with other content: MESSAGE_UPDATE_FIELDS values,
    # then session_id and message_uid
    updates: list[tuple[Any, ...]] = field(default_factory=list)


class IndexLockTimeout(TimeoutError):
    """Another indexing run held the store's indexing lock for longer than the wait allowed."""


def index_wait_note(holder: str, timeout: float) -> str:
    """What a run that finds the indexing lock taken says before it waits (both engines)."""
    return (f"{holder}: another `sessions index` run (or an agent's sync) is indexing this store; "
            f"waiting for it to finish (at most {timeout:g} s; Ctrl-C stops waiting)")


class BulkWriter(ABC):
    """Writes bulk-loader batches, each in one transaction, possibly pipelined.

    At most one batch is in flight; an error in it is re-raised on the next call.
    ``on_commit(messages_added, sessions_added)`` is called after each batch commits.
    ``cpu_seconds`` is the CPU time spent writing (for the benchmark).
    """

    cpu_seconds: float = 0.0

    @abstractmethod
    def write(self, batch: Batch, *, wait: bool) -> None:
        """Start ``batch`` after the previous one committed; optionally wait for it too."""

    @abstractmethod
    def forget_source(self, source_id: int) -> None:
        """Delete every session a source imported and reset its resume state (waits)."""

    @abstractmethod
    def wait(self) -> None:
        """Block until the batch in flight (if any) has committed; re-raise its error."""

    @abstractmethod
    def close(self) -> None:
        """Finish the batch in flight (even on error paths) and release the writer."""


class Hits(list):  # noqa: FURB189 - a list that also says whether it is partial
    """:meth:`SessionStorage.hits`' result: the hits, and ``note`` when the engine stopped
    early (e.g. at a time budget) so the list may miss older matches."""

    def __init__(self, hits: Iterable[Hit] = (), *, note: str | None = None) -> None:
        super().__init__(hits)
        self.note = note


class SessionStorage(ABC):
    """Every read and write of one session index (see the module docstring)."""

    engine: str = ""

    def __init__(self, db: StoreDatabase) -> None:
        self.db = db

    # -- state ----------------------------------------------------------------

    @abstractmethod
    def ready(self) -> bool:
        """True when the session index exists in this database."""

    @abstractmethod
    def location(self) -> str:
        """Where the data lives (a file path; ``":memory:"`` or ``""`` when private)."""

    def one_connection(self) -> AbstractContextManager[None]:
        """A block whose statements share one connection (a search: its many short reads);
        an engine that opens one connection anyway (SQLite) does nothing."""
        return nullcontext()

    @abstractmethod
    def index_run_lock(self, timeout: float,
                       on_wait: Callable[[str], None] | None = None) -> AbstractContextManager[None]:
        """Held for a whole ``sessions index`` run: one run per store at a time, across
        processes and hosts, so a second run finds the files the first one indexed instead of
        importing them again. When another run holds it, ``on_wait`` is called once with
        :func:`index_wait_note` before waiting; waits at most ``timeout`` seconds, then raises
        :class:`IndexLockTimeout` naming the store."""

    # -- live writes ------------------------------------------------------------

    @abstractmethod
    def add_session(self, session_id: str, *, origin_format: str, source: str, title: str | None,
                    model: str | None, workspace: str | None, started_at: float | None,
                    parent_session_id: str | None, meta: dict[str, Any]) -> bool:
        """Insert a session row; False (nothing written) when the id is taken."""

    @abstractmethod
    def append_message(self, session_id: str, *, role: str, content: str, tool_name: str | None,
                       tool_calls: str | None, tool_call_id: str | None, timestamp: float,
                       cjk: str | None, message_uid: str | None = None) -> int:
        """Append a message at the session's next ``seq``; returns its id. ``message_uid`` is
        the source's own id of the message (unique within the session when given).

        Raises :class:`~hermes_store.sessions.rows.SessionNotFound`.
        """

    @abstractmethod
    def end_session(self, session_id: str, ended_at: float, end_reason: str | None) -> None:
        """Set ``ended_at`` (and ``meta.end_reason`` when given). Raises SessionNotFound."""

    @abstractmethod
    def set_title(self, session_id: str, title: str | None) -> None:
        """Set or clear a title. Raises SessionNotFound."""

    # -- reading sessions ---------------------------------------------------------

    @abstractmethod
    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session (``SESSION_COLUMNS`` of :mod:`~hermes_store.sessions.rows`, ``meta``
        decoded), or None."""

    @abstractmethod
    def session_writers(self, session_ids: Sequence[str]) -> dict[str, str]:
        """``session id -> "host:home"`` of the home that wrote each session, for the ids whose
        writer the engine records (a shared server does; a SQLite file belongs to one home:
        ``{}``)."""

    @abstractmethod
    def has_session(self, session_id: str) -> bool:
        """True when the session exists."""

    @abstractmethod
    def session_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` session ids starting with ``prefix``."""

    @abstractmethod
    def list_sessions(self, *, source: str | None = None, exclude_sources: Sequence[str] = (),
                      limit: int | None = 20) -> list[dict[str, Any]]:
        """Sessions (as :meth:`get_session`), most recently active first (ended, else started)."""

    @abstractmethod
    def sessions_titled(self, title: str) -> list[dict[str, Any]]:
        """Sessions titled ``title`` (case-insensitive) or ``title #N``, newest start first."""

    @abstractmethod
    def parent_of(self, session_id: str) -> str | None:
        """The parent session id (None for a root or an unknown session)."""

    @abstractmethod
    def parents_of(self, session_ids: Iterable[str]) -> dict[str, str | None]:
        """The parent session id of each known session of ``session_ids``."""

    @abstractmethod
    def session_meta(self, session_id: str) -> dict[str, Any]:
        """The session's ``meta`` dict ({} when absent or unreadable)."""

    # -- reading messages -----------------------------------------------------------

    @abstractmethod
    def get_messages(self, session_id: str, *, roles: Sequence[str] | None = None,
                     before_seq: int | None = None, after_seq: int | None = None,
                     at_seq: int | None = None, newest_first: bool = False,
                     limit: int | None = None, offset: int = 0,
                     nonempty: bool = False, head: int | None = None) -> list[dict[str, Any]]:
        """The session's messages in ``seq`` order (reversed with ``newest_first``).

        Rows have ``MESSAGE_COLUMNS`` of :mod:`~hermes_store.sessions.rows` (``tool_calls``
        as JSON text). ``roles``, ``before_seq``/``after_seq`` (exclusive), ``at_seq`` and
        ``nonempty`` (content not empty) narrow the rows. ``head``: ``content`` and
        ``tool_calls`` are their first ``head`` characters, and ``content_chars`` /
        ``tool_calls_chars`` their whole lengths (a reader that shows a capped part never
        holds a huge recorded text whole).
        """

    @abstractmethod
    def count_messages(self, session_id: str, *, roles: Sequence[str] | None = None,
                       before_seq: int | None = None, after_seq: int | None = None) -> int:
        """How many of the session's messages pass the same narrowing as :meth:`get_messages`."""

    @abstractmethod
    def message_position(self, message_id: int) -> dict[str, Any] | None:
        """``{"id", "session_id", "seq"}`` of a message, or None."""

    @abstractmethod
    def message_content(self, message_id: int) -> str:
        """A message's content ("" when unknown)."""

    @abstractmethod
    def session_source_paths(self, session_ids: Sequence[str]) -> dict[str, str]:
        """The indexed file each of ``session_ids`` came from (sessions recorded live have none)."""

    @abstractmethod
    def source_rows(self) -> list[dict[str, Any]]:
        """Every indexed file: ``{"id", "path", "format"}``, by path."""

    @abstractmethod
    def message_calls(self, message_id: int) -> str:
        """The indexed text of a message's tool calls ("" when it has none)."""

    @abstractmethod
    def last_message_timestamp(self, session_id: str) -> float | None:
        """The timestamp of the session's last message (by ``seq``)."""

    # -- search ----------------------------------------------------------------------

    @abstractmethod
    def hits(self, match: Match, filters: Filters, *, sort: str, budget: int) -> list[Hit]:
        """Scored hits for ``match`` that pass ``filters``: the newest ``budget`` matching
        messages (the oldest for ``sort="oldest"``), in that walk order, each scored by
        relevance (higher is better). Raises :class:`~hermes_store.query.QueryRejected`
        when the engine refuses the expression. An engine that stops early returns
        :class:`Hits` with a ``note`` saying so (the search reports it as ``query_note``)."""

    @abstractmethod
    def hits_at(self, positions: Iterable[tuple[str, int]], filters: Filters) -> list[Hit]:
        """Hits (score 0, no expression) for the messages at ``(session_id, seq)`` positions
        that pass ``filters``."""

    @abstractmethod
    def snippet(self, match: Match, message_id: int, *, open_mark: str, close_mark: str,
                tokens: int) -> str | None:
        """The engine's highlighted excerpt of the message for ``match`` (about ``tokens``
        words, matches between the marks), or None when it cannot make one."""

    def snippets(self, match: Match, message_ids: Iterable[int], *, open_mark: str, close_mark: str,
                 tokens: int) -> dict[int, str | None]:
        """:meth:`snippet` of each of ``message_ids`` (an engine with a round trip per statement
        makes them all at once)."""
        return {int(mid): self.snippet(match, int(mid), open_mark=open_mark, close_mark=close_mark,
                                       tokens=tokens) for mid in message_ids}

    @abstractmethod
    def message_contents(self, message_ids: Iterable[int], head: int | None = None) -> dict[int, str]:
        """``{id: content}`` of those of ``message_ids`` that exist (``head``: the first ``head``
        characters of each, cut in the database)."""

    # -- bulk loading ------------------------------------------------------------------

    @abstractmethod
    def source_state(self, key: str) -> dict[str, Any] | None:
        """The stored resume state of one input file: ``id, path, format, size, mtime,
        content_hash, resume_at, meta`` (meta as JSON text), or None."""

    @abstractmethod
    def message_uids(self, session_id: str) -> dict[str, str]:
        """``{message_uid: content}`` of a session's messages stored with a source uid."""

    @abstractmethod
    def message_id_by_uid(self, session_id: str, message_uid: str) -> int | None:
        """The id of the session's message stored under ``message_uid``, or None."""

    @abstractmethod
    def session_cursor(self, session_id: str) -> tuple[int | None, int] | None:
        """``(source_id, next_seq)`` of a stored session, or None when it does not exist."""

    @abstractmethod
    def bulk_writer(self, *, pipeline: bool,
                    on_commit: Callable[[int, int], None]) -> BulkWriter:
        """A writer for bulk-loader batches (see :class:`BulkWriter`); ``pipeline`` lets it
        write on its own connection in the background."""

    # -- maintenance ------------------------------------------------------------------

    @abstractmethod
    def delete_session(self, session_id: str, *, reread_source: bool = True) -> int:
        """Delete a session and its messages, re-attaching its children to its parent;
        returns the messages removed. Raises SessionNotFound. ``reread_source``: the file it
        came from is read again by the next index run (``sessions delete``; a session forgotten
        for good keeps its file's state, and its tombstone keeps it out)."""

    @abstractmethod
    def drop_messages(self, session_id: str) -> int:
        """Delete every message of the session (its row, lineage and meta stay; its message
        count becomes 0) so its source can import them afresh; returns how many were removed."""

    @abstractmethod
    def delete_sessions(self, session_ids: Sequence[str]) -> None:
        """Delete these sessions and their messages (whole lineages: no re-attaching)."""

    @abstractmethod
    def lineage_rows(self) -> list[dict[str, Any]]:
        """Every session as ``{id, parent_session_id, origin_format, ended_at, started_at,
        last_message}`` (``last_message``: newest message timestamp, only when not ended)."""

    @abstractmethod
    def known_sources(self) -> list[str]:
        """The distinct ``source`` values of the stored sessions, sorted."""

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """``{"sessions": N, "messages": N}`` (cheap: no size or index scan)."""

    @abstractmethod
    def stats(self) -> dict[str, Any]:
        """``sessions, messages, per_source ({source: {sessions, messages}}), sources_indexed,
        db_bytes, index_bytes`` (None when the engine cannot tell)."""

    # -- health -----------------------------------------------------------------------

    @abstractmethod
    def integrity_problems(self) -> list[str]:
        """Problems the engine's own consistency check reports (empty when sound)."""

    @abstractmethod
    def text_indexes(self) -> list[str]:
        """Names of the full-text indexes in the database (every area's)."""

    @abstractmethod
    def check_text_index(self, name: str) -> str | None:
        """The problem with one full-text index, or None when it passes its check."""

    @abstractmethod
    def rebuild_text_index(self, name: str) -> None:
        """Rebuild one full-text index from its content."""

    @abstractmethod
    def rebuild_message_index(self) -> None:
        """Rebuild the full-text index over messages from the stored messages."""

    @abstractmethod
    def probe_search(self) -> str | None:
        """Search for a word of a stored message and check it is found and highlighted;
        the problem, or None when it works (or there is nothing to probe)."""

    @abstractmethod
    def probe_word(self, message_id: int, word: str) -> str | None:
        """None when searching for ``word`` finds message ``message_id`` with the word
        highlighted; else the problem, in words."""

    @abstractmethod
    def session_counts(self, source_ids: Sequence[int]) -> dict[int, int]:
        """How many sessions each of ``source_ids`` (``sources`` rows) owns."""

    @abstractmethod
    def backfill_projection(self, chunk: int) -> int:
        """Recompute stored projections when a migration asked for it (see
        :func:`hermes_store.sessions.maintenance.backfill_projection`); the number updated."""

    @abstractmethod
    def backfill_calls(self, chunk: int) -> int:
        """Compute the tool-call text, tool names and boilerplate-free text of messages stored
        before they existed, when a migration asked for it; the number updated."""


def storage_class(engine: str) -> type[SessionStorage]:
    """The :class:`SessionStorage` implementation registered for ``engine``."""
    return engine_class(STORAGE_ENGINES, engine, "session storage")


def open_session_storage(db: StoreDatabase) -> SessionStorage:
    """The session storage over ``db`` (a database object with an ``engine`` name)."""
    return storage_class(getattr(db, "engine", DEFAULT_ENGINE))(db)
