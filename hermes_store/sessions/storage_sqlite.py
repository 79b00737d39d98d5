"""The session store on SQLite (APSW) with FTS5: every SQL statement of the sessions package.

Tables (see ``schema/``): ``sessions``, ``messages``, ``sources`` (per-file
resume state), the external-content FTS5 index ``messages_fts(search_content, cjk)``
over ``messages`` (``search_content`` is a generated column: tool output capped at 8 KiB), fed by triggers, and ``fts_deferred``
(a row there makes the insert trigger stand aside for one transaction).

The bulk loader's speed path lives here (:class:`SqliteBulkWriter`): batches
go in as multi-row INSERTs of :data:`ROWS_PER_INSERT` rows, in ``fts_mode=
"batch"`` the new rows are indexed with one ``INSERT ... SELECT`` per batch,
and with ``pipeline`` the writes run on a second connection in a background
thread (SQLite works without the GIL) while the next batch is parsed.
Ranking uses ``hs_bm25`` (:mod:`hermes_store.sessions.rank`), bounded to the
newest ``budget`` filtered matches.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain
from pathlib import Path
from typing import Any

import apsw
from filelock import FileLock, Timeout

from hermes_store.db import Database
from hermes_store.query import AllOf, Match, QueryRejected, Term, Without, is_query_error, to_fts5
from hermes_store.sessions.calltext import derived
from hermes_store.sessions.rank import ensure_rank_function, ensure_text_phrases_function
from hermes_store.sessions.rows import (
    SESSION_COLUMNS,
    SessionNotFound,
    session_row,
)
from hermes_store.sessions.storage import (
    MESSAGE_ROW_FIELDS,
    MESSAGE_UPDATE_FIELDS,
    SESSION_FIELDS,
    Batch,
    BulkWriter,
    Filters,
    Hit,
    IndexLockTimeout,
    SessionDelta,
    SourceHandle,
    full_rows,
    index_wait_note,
)
from hermes_store.sessions.storage_sql import FilterDialect, SqlSessionStorage, filter_clauses
from hermes_store.tokens import message_projection

COLUMN_WEIGHTS: tuple[float, float, float] = (1.0, 1.0, 1.0)  # messages_fts(search_content, cjk, calls)
CACHE_KIB = 65_536  # page cache of the bulk-writing connection
ROWS_PER_INSERT = 200  # 13 columns x 200 rows = 2600 bound values per statement
_FTS5 = re.compile(r"\busing\s+fts5\b", re.I)
_SESSION_SELECT = f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions"

PROJECTION_BACKFILL_KEY = "sessions_projection_backfill"  # set by migration 0007


@functools.lru_cache(maxsize=8)
def _multi_insert(count: int) -> str:
    """An INSERT of ``count`` message rows in one statement."""
    return (f"INSERT OR IGNORE INTO messages({', '.join(MESSAGE_ROW_FIELDS)}) VALUES "
            + ",".join([f"({','.join('?' * len(MESSAGE_ROW_FIELDS))})"] * count))


_UPDATE_BY_UID = (f"UPDATE messages SET {', '.join(f'{n} = ?' for n in MESSAGE_UPDATE_FIELDS)}"
                  " WHERE session_id = ? AND message_uid = ?")


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def _in_values(column: str, values: Sequence[Any], negate: bool) -> tuple[str, list[Any]]:
    return f"{column} {'NOT IN' if negate else 'IN'} ({_marks(values)})", list(values)


_DIALECT = FilterDialect(param="?", never="0", in_values=_in_values, no_limit=-1)


def filter_sql(filters: Filters) -> tuple[str, list[Any]]:
    """``AND ...`` clauses over ``m`` (messages) and ``s`` (sessions), and their parameters."""
    return filter_clauses(filters, _DIALECT)



class SqliteSessionStorage(SqlSessionStorage):
    """:class:`SessionStorage` over one APSW :class:`~hermes_store.db.Database`."""

    engine = "sqlite"
    dialect = _DIALECT

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.db: Database = db

    # -- state ----------------------------------------------------------------

    def ready(self) -> bool:
        """True when ``messages_fts`` and ``sessions`` exist."""
        return self.db.table_exists("messages_fts") and self.db.table_exists("sessions")

    def location(self) -> str:
        """The database file path (``":memory:"`` for a private one)."""
        return str(self.db.path)

    @contextlib.contextmanager
    def index_run_lock(self, timeout: float, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """The lock file ``<db>.index.lock`` beside the database (none for a private one)."""
        location = self.location()
        if location in (":memory:", ""):
            yield
            return
        lock_path = Path(location + ".index.lock")
        if lock_path.is_symlink():  # older filelock versions follow it (and truncate the target)
            raise OSError(f"refusing to use lock file {lock_path}: it is a symlink")
        lock = FileLock(str(lock_path), timeout=timeout, mode=0o600)
        try:
            try:
                lock.acquire(timeout=0)
            except Timeout:  # another run holds it: say so, then wait
                if on_wait is not None:
                    on_wait(index_wait_note(str(lock_path), timeout))
                lock.acquire()
        except Timeout as exc:
            raise IndexLockTimeout(
                f"{lock_path}: another `sessions index` run has held the indexing lock for "
                f"{timeout:g} s; try again when it finishes") from exc
        try:
            yield
        finally:
            lock.release()

    # -- live writes ------------------------------------------------------------

    def add_session(self, session_id: str, *, origin_format: str, source: str, title: str | None,
                    model: str | None, workspace: str | None, started_at: float | None,
                    parent_session_id: str | None, meta: dict[str, Any]) -> bool:
        """Insert a session row; False when the id is taken."""
        with self.db.write():
            if self.db.scalar("SELECT 1 FROM sessions WHERE id=?", (session_id,)):
                return False
            self.db.execute(
                "INSERT INTO sessions(id, origin_format, source, title, model, workspace, started_at,"
                " parent_session_id, meta) VALUES (?,?,?,?,?,?,?,?,?)",
                (session_id, origin_format, source, title, model, workspace, started_at,
                 parent_session_id, json.dumps(meta, ensure_ascii=False)),
            )
        return True

    def append_message(self, session_id: str, *, role: str, content: str, tool_name: str | None,
                       tool_calls: str | None, tool_call_id: str | None, timestamp: float,
                       cjk: str | None, message_uid: str | None = None) -> int:
        """Append at the next ``seq`` in one transaction (the FTS triggers follow)."""
        with self.db.write():
            if not self.db.scalar("SELECT 1 FROM sessions WHERE id=?", (session_id,)):
                raise SessionNotFound(session_id)
            seq = self.db.scalar(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE session_id=?", (session_id,))
            self.db.execute(
                "INSERT INTO messages(session_id, seq, role, content, tool_name, tool_calls,"
                " tool_call_id, timestamp, cjk, calls, tools, search_text, message_uid)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (session_id, seq, role, content, tool_name, tool_calls, tool_call_id, timestamp, cjk,
                 *derived(role, content, tool_name, tool_calls), message_uid),
            )
            message_id = self.db.conn.last_insert_rowid()
            self.db.execute(
                "UPDATE sessions SET message_count = message_count + 1,"
                " started_at = COALESCE(started_at, ?) WHERE id=?", (timestamp, session_id))
        return int(message_id)

    def end_session(self, session_id: str, ended_at: float, end_reason: str | None) -> None:
        """Set ``ended_at`` and ``meta.end_reason``."""
        with self.db.write():
            row = self.db.query_one("SELECT meta FROM sessions WHERE id=?", (session_id,))
            if row is None:
                raise SessionNotFound(session_id)
            meta = json.loads(row["meta"] or "{}")
            if end_reason:
                meta["end_reason"] = end_reason
            self.db.execute("UPDATE sessions SET ended_at=?, meta=? WHERE id=?",
                            (ended_at, json.dumps(meta, ensure_ascii=False), session_id))

    def set_title(self, session_id: str, title: str | None) -> None:
        """Set or clear a title."""
        with self.db.write():
            if self.db.execute("UPDATE sessions SET title=? WHERE id=?", (title, session_id)) == 0:
                raise SessionNotFound(session_id)

    # -- reading sessions ---------------------------------------------------------

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row with ``meta`` decoded, or None."""
        return session_row(self.db.query_one(f"{_SESSION_SELECT} WHERE id=?", (session_id,)))

    def session_writers(self, session_ids: Sequence[str]) -> dict[str, str]:
        return {}  # one home's file: the writer is not recorded per row

    def has_session(self, session_id: str) -> bool:
        """True when the session exists."""
        return self.db.scalar("SELECT 1 FROM sessions WHERE id = ?", (session_id,)) is not None

    def session_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` ids starting with ``prefix`` (compared exactly, no LIKE wildcards)."""
        return [r["id"] for r in self.db.query(
            "SELECT id FROM sessions WHERE substr(id, 1, ?) = ? LIMIT ?",
            (len(prefix), prefix, int(limit)))]

    def list_sessions(self, *, source: str | None = None, exclude_sources: Sequence[str] = (),
                      limit: int | None = 20) -> list[dict[str, Any]]:
        """Most recently active first (``ended_at``, else ``started_at``; then id)."""
        where, params = "WHERE 1", []
        if source:
            where += " AND source=?"
            params.append(source)
        if exclude_sources:
            where += f" AND source NOT IN ({_marks(exclude_sources)})"
            params.extend(exclude_sources)
        params.append(-1 if limit is None else int(limit))
        rows = self.db.query(
            f"{_SESSION_SELECT} {where} ORDER BY COALESCE(ended_at, started_at, 0) DESC, id LIMIT ?",
            params)
        return [session_row(row) for row in rows]  # type: ignore[misc]

    # -- reading messages -----------------------------------------------------------

    # -- search ----------------------------------------------------------------------

    def hits(self, match: Match, filters: Filters, *, sort: str, budget: int) -> list[Hit]:
        """The newest (oldest) ``budget`` filtered matches, scored by ``hs_bm25``.

        FTS5 consumes the rowid ORDER BY, so the scan stops after ``budget``
        filtered matches and the rank function runs only for those rows.
        """
        where, params = filter_sql(filters)
        weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
        direction = "ASC" if sort == "oldest" else "DESC"
        sql = (
            "SELECT m.id, m.session_id, m.seq, m.role, m.timestamp, COALESCE(s.source, ''), s.title, "
            f"{ensure_rank_function(self.db)}(messages_fts, {weights}) "
            "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
            "LEFT JOIN sessions s ON s.id = m.session_id "
            f"WHERE messages_fts MATCH ?{where} "
            f"ORDER BY messages_fts.rowid {direction} LIMIT ?"
        )
        try:
            rows = self.db.iter_rows(sql, (to_fts5(match), *params, int(budget))).fetchall()
        except apsw.SQLError as exc:
            if is_query_error(exc):
                raise QueryRejected(str(exc)) from exc
            raise
        return [Hit(int(r[0]), r[1], int(r[2]), r[3], r[4], r[5], r[6], -float(r[7]), match)
                for r in rows]

    def hits_at(self, positions: Iterable[tuple[str, int]], filters: Filters) -> list[Hit]:
        """Score-0 hits for the ``(session_id, seq)`` positions that pass ``filters``."""
        wanted = sorted(set(positions))
        if not wanted:
            return []
        where, params = filter_sql(filters)
        rows = self.db.iter_rows(  # one statement: each position a lookup in UNIQUE (session_id, seq)
            "SELECT m.id, m.session_id, m.seq, m.role, m.timestamp, COALESCE(s.source, ''), s.title"
            " FROM json_each(?) p CROSS JOIN messages m"
            " ON m.session_id = p.value ->> 0 AND m.seq = p.value ->> 1"
            f" LEFT JOIN sessions s ON s.id = m.session_id WHERE 1{where} ORDER BY m.session_id, m.seq",
            (json.dumps([[sid, int(seq)] for sid, seq in wanted]), *params)).fetchall()
        return [Hit(int(r[0]), r[1], int(r[2]), r[3], r[4], r[5], r[6], 0.0, None) for r in rows]

    def snippet(self, match: Match, message_id: int, *, open_mark: str, close_mark: str,
                tokens: int) -> str | None:
        """FTS5's ``snippet()`` of the content column, else of the tool calls when only they
        match (marked ``[tool call]``); None when it fails."""
        try:
            row = self.db.iter_rows(
                "SELECT snippet(messages_fts, 0, ?, ?, '...', ?),"
                " snippet(messages_fts, 2, ?, ?, '...', ?),"
                f" {ensure_text_phrases_function(self.db)}(messages_fts) FROM messages_fts "
                "WHERE messages_fts MATCH ? AND rowid = ?",
                (open_mark, close_mark, tokens, open_mark, close_mark, tokens, to_fts5(match),
                 message_id),
            ).fetchone()
        except Exception:  # noqa: BLE001 - a snippet must never break a search
            return None
        if row is None:
            return None
        text, calls, in_text = row
        if calls and open_mark in calls:
            flags = str(in_text or "")
            own = (_holds(match, iter(flags)) if len(flags) == len(match.terms())
                   else self._text_matches(match, message_id))
            if not own:
                return f"[tool call] {calls}"
        return text


    def _text_matches(self, match: Match, message_id: int) -> bool:
        """True when the message's own text (not its tool calls) matches ``match``."""
        try:
            return self.db.scalar(
                "SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? AND rowid = ?",
                ("{search_content cjk} : (" + to_fts5(match) + ")", message_id)) is not None
        except Exception:  # noqa: BLE001 - a snippet must never break a search
            return True

    # -- bulk loading ------------------------------------------------------------------

    def source_state(self, key: str) -> dict[str, Any] | None:
        """The ``sources`` row of one input file."""
        return self.db.query_one(
            "SELECT id, path, format, size, mtime, content_hash, resume_at, meta FROM sources"
            " WHERE path=?", (key,))

    def session_cursor(self, session_id: str) -> tuple[int | None, int] | None:
        """``(source_id, next_seq)`` or None."""
        row = self.db.query_one(
            "SELECT source_id, (SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE session_id=?)"
            " AS next_seq FROM sessions WHERE id=?", (session_id, session_id))
        if row is None:
            return None
        return row["source_id"], int(row["next_seq"])

    def bulk_writer(self, *, pipeline: bool,
                    on_commit: Callable[[int, int], None]) -> SqliteBulkWriter:
        """A :class:`SqliteBulkWriter` (own connection and thread when ``pipeline``)."""
        return SqliteBulkWriter(self.db, pipeline=pipeline, on_commit=on_commit)

    # -- maintenance ------------------------------------------------------------------

    def delete_session(self, session_id: str, *, reread_source: bool = True) -> int:
        """Ordinary DELETEs, so the triggers keep ``messages_fts`` consistent."""
        with self.db.write():
            row = self.db.query_one("SELECT parent_session_id FROM sessions WHERE id=?", (session_id,))
            if row is None:
                raise SessionNotFound(session_id)
            removed = int(self.db.scalar("SELECT COUNT(*) FROM messages WHERE session_id=?",
                                         (session_id,)))
            # the file it came from is read again by the next index run (delete, then index
            # the same unchanged file, imports it again); its other sessions are kept as they are
            if reread_source:
                self.db.execute("UPDATE sources SET size=-1, mtime=-1, resume_at=NULL, content_hash=NULL,"
                                " meta='{}' WHERE id=(SELECT source_id FROM sessions WHERE id=?)",
                                (session_id,))
            self.db.execute("DELETE FROM messages WHERE session_id=?", (session_id,))
            self.db.execute("UPDATE sessions SET parent_session_id=? WHERE parent_session_id=?",
                            (row["parent_session_id"], session_id))
            self.db.execute("DELETE FROM sessions WHERE id=?", (session_id,))
        return removed

    def lineage_rows(self) -> list[dict[str, Any]]:
        """Every session with what prune needs to date it."""
        return self.db.query(
            "SELECT s.id, s.parent_session_id, s.origin_format, s.ended_at, s.started_at,"
            " CASE WHEN s.ended_at IS NULL THEN (SELECT MAX(m.timestamp) FROM messages m"
            "   WHERE m.session_id = s.id) END AS last_message FROM sessions s")

    def stats(self) -> dict[str, Any]:
        """Counts, per-source counts, file size and FTS shadow-table size (``dbstat``)."""
        db = self.db
        per_source: dict[str, dict[str, int]] = {}
        for row in db.query("SELECT source, COUNT(*) AS sessions, COALESCE(SUM(message_count), 0)"
                            " AS messages FROM sessions GROUP BY source ORDER BY source"):
            per_source[row["source"]] = {"sessions": int(row["sessions"]),
                                         "messages": int(row["messages"])}
        try:
            index_bytes = int(db.scalar(
                "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name LIKE 'messages_fts%'") or 0)
        except Exception:  # dbstat missing from this SQLite build
            index_bytes = None
        return {
            "sessions": int(db.scalar("SELECT COUNT(*) FROM sessions")),
            "messages": int(db.scalar("SELECT COUNT(*) FROM messages")),
            "per_source": per_source,
            "sources_indexed": int(db.scalar("SELECT COUNT(*) FROM sources")),
            "db_bytes": db.size_bytes(),
            "index_bytes": index_bytes,
        }

    # -- health -----------------------------------------------------------------------

    def integrity_problems(self) -> list[str]:
        """``PRAGMA integrity_check`` problems."""
        rows = [str(r[0]) for r in self.db.iter_rows("PRAGMA integrity_check")]
        return [] if rows == ["ok"] else rows

    def text_indexes(self) -> list[str]:
        """Every FTS5 table in the database."""
        rows = self.db.query(
            "SELECT name, sql FROM sqlite_schema WHERE type='table' AND sql IS NOT NULL")
        return [row["name"] for row in rows if _FTS5.search(row["sql"] or "")]

    def check_text_index(self, name: str) -> str | None:
        """FTS5's ``integrity-check`` against the content table: None when it passes, else what
        it found. The check is a write statement, so it waits for another writer as every write
        does (bounded; :class:`~hermes_store.db.DatabaseError` when the store stays busy): a
        lock held elsewhere is not the index's problem, and ``doctor --fix`` rebuilds for a
        problem."""
        with self.db.write():
            try:
                self.db.execute(f'INSERT INTO "{_ident(name)}"("{_ident(name)}", rank)'
                                " VALUES ('integrity-check', 1)")
            except apsw.BusyError:
                raise
            except apsw.Error as exc:
                return str(exc)
        return None

    def rebuild_text_index(self, name: str) -> None:
        """FTS5's ``rebuild`` from the content table."""
        with self.db.write():
            self.db.execute(f'INSERT INTO "{_ident(name)}"("{_ident(name)}") VALUES (\'rebuild\')')

    def session_counts(self, source_ids: Sequence[int]) -> dict[int, int]:
        """Sessions per source row, for ``sessions sources``."""
        counts: dict[int, int] = {}
        ids = [int(i) for i in source_ids]
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            marks = ",".join("?" * len(part))
            for row in self.db.query(f"SELECT source_id, COUNT(*) AS n FROM sessions WHERE source_id IN ({marks})"
                                     " GROUP BY source_id", part):
                counts[int(row["source_id"])] = int(row["n"])
        return counts

    def backfill_projection(self, chunk: int) -> int:
        """After migration 0007 (emoji joined the ``cjk`` projection): recompute the projection
        of every message with non-ASCII text, chunk by chunk, then drop the marker."""
        if not self.db.table_exists("messages") or self.db.scalar(
                "SELECT value FROM store_meta WHERE key = ?", (PROJECTION_BACKFILL_KEY,)) is None:
            return 0
        updated = 0
        last_id = 0
        while True:
            rows = self.db.query(
                "SELECT id, role, content, cjk FROM messages WHERE id > ?"
                " AND length(CAST(content AS BLOB)) <> length(content) ORDER BY id LIMIT ?",
                (last_id, chunk))
            if not rows:
                break
            last_id = int(rows[-1]["id"])
            changes = [(new, row["id"]) for row in rows
                       if (new := message_projection(str(row["role"]), str(row["content"]))) != row["cjk"]]
            if changes:
                with self.db.write():
                    self.db.executemany("UPDATE messages SET cjk = ? WHERE id = ?", changes)
                updated += len(changes)
        with self.db.write():
            self.db.execute("DELETE FROM store_meta WHERE key = ?", (PROJECTION_BACKFILL_KEY,))
        return updated

    def write_many(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for every row of parameters in one write transaction."""
        with self.db.write():
            self.db.executemany(statement, rows)

    def rebuild_message_index(self) -> None:
        """Rebuild ``messages_fts``."""
        self.rebuild_text_index("messages_fts")

    def probe_word(self, message_id: int, word: str) -> str | None:
        """MATCH + snippet for ``word`` on that message."""
        term = '"' + word.replace('"', '""') + '"'
        try:
            hits = self.db.query(
                "SELECT rowid, snippet(messages_fts, 0, '[', ']', '...', 8) AS snip FROM messages_fts"
                " WHERE messages_fts MATCH ? AND rowid = ?", (f"search_content:{term}", message_id))
        except Exception as exc:
            return f"MATCH failed: {exc}"
        if not hits or "[" not in (hits[0]["snip"] or ""):
            return f"message {message_id} is not found by searching for {word!r}"
        return None


def _ident(name: str) -> str:
    """A table name for a double-quoted identifier (embedded quotes doubled)."""
    return name.replace('"', '""')


_INSERT_SESSION = ("INSERT INTO sessions(id, origin_format, source, title, model, workspace, started_at,"
                   " ended_at, parent_session_id, source_id, meta) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
_COUNT_SESSION = ("UPDATE sessions SET message_count = message_count + :added,"
                  " started_at = CASE WHEN :min_ts IS NOT NULL"
                  "   AND (started_at IS NULL OR :min_ts < started_at)"
                  "   THEN :min_ts ELSE started_at END,"
                  " ended_at = CASE WHEN :derive AND :max_ts IS NOT NULL"
                  "   THEN max(COALESCE(ended_at, :max_ts), :max_ts) ELSE ended_at END"
                  " WHERE id = :id")
_UPDATE_SOURCE = ("UPDATE sources SET size=?, mtime=?, content_hash=?, resume_at=?, imported_at=?,"
                  " meta=? WHERE id=?")


def _new_session(delta: SessionDelta) -> tuple[Any, ...]:
    """The ``_INSERT_SESSION`` values of a session the batch creates."""
    fields, owner = delta.fields, delta.owner
    return (delta.session_id, owner.format, fields.get("source") or owner.default_source, fields.get("title"),
            fields.get("model"), fields.get("workspace"), fields.get("started_at"), fields.get("ended_at"),
            fields.get("parent_session_id"), owner.source_id, json.dumps(fields.get("meta") or {}, ensure_ascii=False))


class SqliteBulkWriter(BulkWriter):
    """Executes bulk batches on its own connection, in a background thread when pipelined.

    Parsing the next batch (Python, holding the GIL) overlaps with SQLite
    writing the previous one (APSW releases the GIL while SQLite works). At most
    one batch is in flight; an error in it is re-raised on the next call.
    """

    def __init__(self, db: Database, *, pipeline: bool, on_commit: Callable[[int, int], None]) -> None:
        if str(db.path) in (":memory:", ""):
            pipeline = False  # a second connection would open a different database
        self._own = pipeline
        self._caller = db
        # its own connection runs no search: no time-budget handler stopping SQLite for the GIL
        self.db = Database(db.path, bounded=False) if pipeline else db
        self._restore_cache = None if pipeline else self.db.scalar("PRAGMA cache_size")
        self.db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")  # FTS segment merges like a warm cache
        if pipeline:
            # Copying committed batches from the WAL into the database file (and its fsyncs) is
            # done on the caller's thread and connection while the next batch is written: it
            # would otherwise hold up the writer, the busiest thread, after every commit.
            self.db.execute("PRAGMA wal_autocheckpoint=0")
        self.on_commit = on_commit
        self.cpu_seconds = 0.0
        self._pool = ThreadPoolExecutor(max_workers=1) if pipeline else None
        self._future: Future[None] | None = None

    def write(self, batch: Batch, *, wait: bool) -> None:
        """Start ``batch`` after the previous one has committed; optionally wait for it too."""
        self._submit(functools.partial(self._write_batch, batch), wait=wait)

    def forget_source(self, source_id: int) -> None:
        """Drop everything a source imported (FTS follows via triggers); waits."""
        self._submit(functools.partial(self._forget, source_id), wait=True)

    def wait(self) -> None:
        """Block until the batch in flight (if any) has committed; re-raise its error."""
        future, self._future = self._future, None
        if future is not None:
            future.result()

    def close(self) -> None:
        """Finish the batch in flight (even on error paths) and close the connection."""
        try:
            if self._future is not None:
                try:
                    self._future.result()
                except BaseException:  # the caller already propagates the first error
                    pass
                self._future = None
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            if self._own:
                self.db.close()
                self._caller.checkpoint()  # the last batch
            else:
                self.db.execute(f"PRAGMA cache_size={int(self._restore_cache)}")

    def _submit(self, job: Callable[[], None], *, wait: bool) -> None:
        self.wait()
        if self._pool is None:
            self._timed(job)
            return
        self._future = self._pool.submit(self._timed, job)
        self._caller.checkpoint()  # the batches committed so far, while this one is written
        if wait:
            self.wait()

    def _timed(self, job: Callable[[], None]) -> None:
        started = time.thread_time()
        try:
            job()
        finally:
            self.cpu_seconds += time.thread_time() - started

    def _forget(self, source_id: int) -> None:
        with self.db.write():
            self.db.execute("DELETE FROM sessions WHERE source_id=?", (source_id,))
            self.db.execute(
                "UPDATE sources SET resume_at=NULL, content_hash=NULL, meta='{}' WHERE id=?",
                (source_id,))

    def _write_batch(self, batch: Batch) -> None:
        db = self.db
        with db.write():
            for handle, _ in batch.sources:
                handle.source_id = self._source_id(handle)
            # one statement per kind of change, each run over the whole batch (few GIL hand-offs)
            db.executemany(_INSERT_SESSION, [_new_session(delta) for delta in batch.sessions if delta.is_new])
            for delta in batch.sessions:
                if not delta.is_new:
                    self._write_session(delta)
            first_id = int(db.scalar("SELECT COALESCE(MAX(id), 0) FROM messages"))
            if batch.rows:
                self._write_messages(batch, first_id)
            if batch.updates:  # edited in place under the same uid (the FTS update trigger follows)
                db.executemany(_UPDATE_BY_UID, batch.updates)
            inserted = int(db.scalar("SELECT COUNT(*) FROM messages WHERE id > ?", (first_id,)))
            db.executemany(_COUNT_SESSION, [
                {"added": delta.added, "min_ts": delta.min_ts, "derive": int(delta.derive_end),
                 "max_ts": delta.max_ts, "id": delta.session_id} for delta in batch.sessions if delta.added])
            now = time.time()
            db.executemany(_UPDATE_SOURCE, [
                (progress["size"], progress["mtime"], progress["content_hash"], progress["resume_at"], now,
                 progress["meta"], handle.source_id) for handle, progress in batch.sources])
        self.on_commit(inserted, sum(1 for delta in batch.sessions if delta.is_new))
        if not self._own:
            db.checkpoint()

    def _source_id(self, handle: SourceHandle) -> int:
        rows = self.db.query(
            "INSERT INTO sources(path, format, imported_at) VALUES (?,?,?)"
            " ON CONFLICT(path) DO UPDATE SET format=excluded.format RETURNING id",
            (handle.key, handle.format, time.time()))
        return int(rows[0]["id"])

    def _write_session(self, delta: SessionDelta) -> None:
        """The fields and meta a batch changes in a session stored before (new ones: _new_session)."""
        if delta.adopted:
            self.db.execute("UPDATE sessions SET source_id=?, origin_format=? WHERE id=?",
                            (delta.owner.source_id, delta.owner.format, delta.session_id))
        fields = dict(delta.fields)
        meta = fields.pop("meta", None)
        names = sorted(name for name in fields if name in SESSION_FIELDS)
        if names:
            self.db.execute(
                f"UPDATE sessions SET {', '.join(f'{n}=?' for n in names)} WHERE id=?",
                [fields[n] for n in names] + [delta.session_id])
        if meta:
            stored = json.loads(
                self.db.scalar("SELECT meta FROM sessions WHERE id=?", (delta.session_id,)) or "{}")
            stored.update(meta)
            self.db.execute("UPDATE sessions SET meta=? WHERE id=?",
                            (json.dumps(stored, ensure_ascii=False), delta.session_id))

    def _write_messages(self, batch: Batch, first_id: int) -> None:
        batch_fts = batch.fts_mode == "batch"
        if batch_fts:  # the insert trigger stands aside until this transaction indexes the batch
            self.db.execute("INSERT OR IGNORE INTO fts_deferred(name) VALUES ('messages_fts')")
        # Many rows per statement: each step call releases the GIL once for ROWS_PER_INSERT rows,
        # instead of once per row (per-row hand-offs stall this thread behind the parser).
        rows = full_rows(batch.rows)
        full = len(rows) - len(rows) % ROWS_PER_INSERT
        if full:
            self.db.executemany(_multi_insert(ROWS_PER_INSERT), _chunks(rows, full))
        if full < len(rows):
            tail = rows[full:]
            self.db.execute(_multi_insert(len(tail)), list(chain.from_iterable(tail)))
        if batch_fts:
            self.db.execute(
                "INSERT INTO messages_fts(rowid, search_content, cjk, calls)"
                " SELECT id, search_content, cjk, calls FROM messages WHERE id > ?", (first_id,))
            self.db.execute("DELETE FROM fts_deferred WHERE name = 'messages_fts'")


def _chunks(rows: list[tuple[Any, ...]], full: int) -> Iterator[list[Any]]:
    """The first ``full`` rows as flat parameter lists of :data:`ROWS_PER_INSERT` rows each."""
    for start in range(0, full, ROWS_PER_INSERT):
        yield list(chain.from_iterable(rows[start:start + ROWS_PER_INSERT]))


def _holds(match: Match, in_text: Iterator[str]) -> bool:
    """Whether ``match`` holds on a row's own text, given for each of its phrases in order (FTS5
    numbers a query's phrases as they appear) whether that text holds it (``hs_text_phrases``):
    what ``{search_content cjk} : (match)`` would answer for the row (one flag per term)."""
    if isinstance(match, Term):
        return next(in_text) == "1"
    if isinstance(match, Without):
        keep = _holds(match.keep, in_text)
        drop = _holds(match.drop, in_text)
        return keep and not drop
    parts = [_holds(part, in_text) for part in match.parts]  # type: ignore[attr-defined]
    return all(parts) if isinstance(match, AllOf) else any(parts)
