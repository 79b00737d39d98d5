"""The one place that opens SQLite.

Every in-process connection goes through :class:`Database` (APSW). It sets the
pragmas (WAL with a DELETE fallback, foreign keys, file mode 0600), applies the
versioned migrations from ``schema/*.sql`` tracked by ``PRAGMA user_version``,
and runs writes in ``BEGIN IMMEDIATE`` transactions with time-based busy
patience. Only PASSIVE checkpoints are ever requested.
"""

from __future__ import annotations

import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import apsw

from hermes_store.budget import PROGRESS_STEPS, past_deadline
from hermes_store.sqlite_guard import (  # noqa: F401  (foreign_objects, read_only_connection, wal_mode_header: db's API)
    close_unchanged,
    foreign_objects,
    foreign_triggers,
    on_read_only_filesystem,
    read_only_connection,
    stray_wal,
    wal_mode_header,
)

logger = logging.getLogger(__name__)

DB_FILENAME = "hermes_store.db"
DEFAULT_BUSY_PATIENCE = 30.0  # seconds a writer keeps trying before giving up
IN_CHUNK = 500  # values bound per ``IN (?, ...)`` list (SQLite's variable limit is far above)
_MIGRATION_NAME = re.compile(r"^(\d{4})_[A-Za-z0-9_]+\.sql$")


class DatabaseError(Exception):
    """A database problem explained for a person (path and cause)."""


class StoreUnavailable(DatabaseError):
    """The store cannot be reached now (a server that is down, restarting or too slow): the same
    work may succeed later, unlike a store that is damaged or misnamed."""


BUSY_PATIENCE_ENV = "HERMES_STORE_BUSY_TIMEOUT"


def default_busy_patience() -> float:
    """Seconds a writer waits for a busy database: ``$HERMES_STORE_BUSY_TIMEOUT`` or 30."""
    try:
        value = float(os.environ.get(BUSY_PATIENCE_ENV, "") or DEFAULT_BUSY_PATIENCE)
    except ValueError:
        return DEFAULT_BUSY_PATIENCE
    return value if value >= 0 else DEFAULT_BUSY_PATIENCE


def schema_dir() -> Path:
    """Return the directory holding the versioned ``NNNN_name.sql`` migrations.

    Installed wheels carry them as ``hermes_store/_schema``; a source checkout
    (editable install, tests) uses the top-level ``schema/`` folder.
    """
    packaged = Path(__file__).with_name("_schema")
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parent.parent / "schema"
    if source.is_dir():
        return source
    raise DatabaseError(f"schema directory not found (looked in {packaged} and {source})")


def migrations() -> list[tuple[int, Path]]:
    """Return ``(version, path)`` for every migration file, in version order."""
    found: list[tuple[int, Path]] = []
    for path in schema_dir().iterdir():
        match = _MIGRATION_NAME.match(path.name)
        if match:
            found.append((int(match.group(1)), path))
    found.sort()
    versions = [v for v, _ in found]
    if len(set(versions)) != len(versions):
        raise DatabaseError(f"duplicate migration numbers in {schema_dir()}")
    return found


def latest_schema_version() -> int:
    """The ``user_version`` a fully migrated database has."""
    found = migrations()
    return found[-1][0] if found else 0


def query_in_chunks(query: Callable[[str, Sequence[Any]], list[dict[str, Any]]], sql: str,
                    values: Iterable[Any], *, before: Sequence[Any] = (), after: Sequence[Any] = (),
                    chunk: int = IN_CHUNK) -> list[dict[str, Any]]:
    """Rows of ``query(sql, params)`` for any number of ``values``, one call per chunk of them.

    ``sql`` holds ``{marks}`` where the ``?, ?, ...`` list goes (``?`` placeholders only, every
    value bound); ``before`` and ``after`` are the bindings around it. Order across chunks
    follows ``values``; no values, no query.
    """
    items = list(values)
    rows: list[dict[str, Any]] = []
    for start in range(0, len(items), max(1, int(chunk))):
        part = items[start:start + max(1, int(chunk))]
        rows += query(sql.format(marks=",".join("?" * len(part))), (*before, *part, *after))
    return rows


def _create_private(path: Path) -> None:
    """Create ``path`` with mode 0600 if it does not exist yet (never widen an existing file).

    A symlink is followed (the rule of :mod:`hermes_store.fsutil`): a dangling link's
    target is created 0600 too.
    """
    from hermes_store.fsutil import resolve_for_write

    path = resolve_for_write(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)


class Database:
    """An APSW connection to one SQLite file, configured the project's way.

    ``readonly=True`` opens an existing file without writing anything to it
    (used for foreign databases such as a Hermes ``state.db``); no pragmas that
    write and no migrations are applied then. ``vfs`` names an SQLite VFS
    (default: ``$HERMES_STORE_SQLITE_VFS`` or SQLite's own); e.g.
    ``unix-dotfile`` for filesystems without working POSIX locks, where WAL is
    refused and the DELETE journal is used instead. ``":memory:"`` gives a
    private in-memory database with the full schema (used as a fallback
    index when the home's file cannot be written). ``traceless=True`` (with ``readonly``, for a
    read-only home: ``mcp --read-only``) also leaves nothing beside the file: a WAL-mode store
    with no ``-wal`` file (no writer has it open; everything is in the main file) is opened
    ``immutable=1``, since SQLite would otherwise create ``-wal`` and ``-shm`` files that a
    read-only connection cannot remove. ``bounded=False`` leaves out
    the progress handler that enforces search time budgets: for a connection
    that only writes (the bulk loader's writer thread), where the handler would
    make SQLite take the GIL every few thousand steps for nothing.
    """

    engine = "sqlite"  # each area's storage factory picks its implementation by this name

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        readonly: bool = False,
        migrate: bool = True,
        busy_patience: float | None = None,
        wal: bool = True,
        vfs: str | None = None,
        bounded: bool = True,
        traceless: bool = False,
    ) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.newer_schema: int | None = None  # the user_version when a newer hermes_store wrote the file
        self.wal_vanished = 0  # commits rescued after the -wal file was deleted under this connection
        self.busy_patience = float(busy_patience if busy_patience is not None else default_busy_patience())
        self._lock = threading.RLock()
        self._write_depth = 0
        self._guard_triggers = migrate and not readonly and str(path) != ":memory:"
        self._trigger_cookie: int | None = None  # PRAGMA schema_version when the triggers were last checked
        self.read_only_reason = ""
        vfs = vfs or os.environ.get("HERMES_STORE_SQLITE_VFS") or None
        if not readonly and str(path) != ":memory:" and self.path.exists() and on_read_only_filesystem(self.path):
            # a store on a read-only mount: read it (writes say why they cannot be), as a read-only home is
            self.readonly, readonly, self._guard_triggers = True, True, False
            self.read_only_reason = f"{self.path.parent} is on a read-only filesystem"
        if readonly:
            if not self.path.exists():
                raise DatabaseError(f"{self.path}: no such database file")
            try:
                self.conn = read_only_connection(self.path, vfs, traceless=traceless)
            except apsw.Error as exc:
                raise DatabaseError(f"{self.path}: cannot open read-only: {exc}") from exc
            self.conn.set_busy_timeout(int(self.busy_patience * 1000))
            self.conn.set_progress_handler(past_deadline, PROGRESS_STEPS)
            try:  # SQLite opens lazily: a WAL store on a full disk fails here (no room for its -shm)
                self.journal_mode = self.scalar("PRAGMA journal_mode")
            except (apsw.IOError, apsw.CantOpenError, apsw.FullError) as exc:
                self.conn.close()
                hint = _access_hint(self.path)  # the place, not the file, is at fault: not damage
                raise (StoreUnavailable if hint else DatabaseError)(
                    f"{self.path}: cannot open read-only: {exc}{hint}") from exc
            return
        in_memory = str(path) == ":memory:"
        if not in_memory:
            _create_private(self.path)
        try:
            self.conn = apsw.Connection(str(self.path), vfs=vfs)
        except apsw.Error as exc:
            raise DatabaseError(f"{self.path}: cannot open: {exc}") from exc
        self.conn.set_busy_timeout(int(self.busy_patience * 1000))
        if bounded:
            self.conn.set_progress_handler(past_deadline, PROGRESS_STEPS)
        try:
            if migrate and not in_memory:  # the store (other files, e.g. the vector file, have
                self._refuse_foreign()     # their own tables): before WAL would change the file
            self.journal_mode = self._set_journal_mode(wal and not in_memory)
            self.execute("PRAGMA foreign_keys=ON")
            self.execute("PRAGMA synchronous=NORMAL" if self.journal_mode == "wal" else "PRAGMA synchronous=FULL")
            if migrate:
                self.migrate()
        except apsw.NotADBError as exc:  # another kind of file named as the store (or its header gone)
            self.conn.close()
            raise DatabaseError(f"{self.path}: not a SQLite database, so not a store; nothing was changed "
                                "(name the store's own file, or run `hermes-store doctor`)") from exc
        except apsw.Error as exc:  # SQLite opens lazily: a read-only home fails only here
            self.conn.close()
            raise DatabaseError(f"{self.path}: cannot open for writing: {exc}{_access_hint(self.path)}") from exc

    # -- setup ---------------------------------------------------------------

    def _refuse_foreign(self) -> None:
        """Raise :class:`DatabaseError` when the file is another program's SQLite database (tables
        of its own and no hermes_store schema version): named as the store by mistake, it must
        not get our tables, a WAL journal or any other change."""
        names = self._retry_busy(lambda: foreign_objects(self.conn))
        if names:
            close_unchanged(self.conn)  # no checkpoint: a stray -wal must not be written into the file
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            stray = stray_wal(self.path, 0)
            if stray:
                raise DatabaseError(f"{self.path}: {stray}; nothing was changed")
            raise DatabaseError(f"{self.path}: not a hermes_store database (it holds {shown} and no hermes_store "
                                "schema); nothing was changed: name a new file or an existing store")

    def _set_journal_mode(self, wal: bool) -> str:
        """Ask for WAL; fall back to DELETE when the filesystem refuses it."""
        if wal:
            try:
                mode = self._retry_busy(lambda: self.scalar("PRAGMA journal_mode=WAL"))
                if str(mode).lower() == "wal":
                    return "wal"
            except apsw.Error:
                pass
        mode = self._retry_busy(lambda: self.scalar("PRAGMA journal_mode=DELETE"))
        return str(mode).lower()

    def migrate(self) -> int:
        """Apply every migration newer than ``PRAGMA user_version``; return the final version."""
        current = self.user_version
        latest = latest_schema_version()
        if current > latest:  # written by a newer hermes_store: read it, never write it
            self.newer_schema = current
            logger.warning("%s: schema version %d is newer than this hermes_store (%d); reading only",
                           self.path, current, latest)
            return current
        pending = [(v, p) for v, p in migrations() if v > current]
        if not pending:
            return current
        with self.write():
            current = self.user_version  # another process may have migrated meanwhile
            for version, path in pending:
                if version <= current:
                    continue
                try:
                    self.conn.execute(path.read_text(encoding="utf-8"))
                except apsw.Error as exc:
                    raise DatabaseError(f"{path.name}: migration failed: {exc}") from exc
                self.conn.execute(f"PRAGMA user_version={int(version)}")
                current = version
        return current

    @property
    def user_version(self) -> int:
        """The schema version recorded in the file header."""
        return int(self.scalar("PRAGMA user_version") or 0)

    # -- queries ---------------------------------------------------------------

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Run one statement (or several without bindings) to its end; return how many rows it
        inserted, updated or deleted (0 for any other statement; a script: its last change),
        as :meth:`hermes_store.pgdb.PgDatabase.execute` does. Rows to read: :meth:`query`,
        or :meth:`iter_rows` to stream them."""
        before = self.conn.total_changes()

        def run() -> None:
            for _ in self.conn.execute(sql, params):  # to the end: RETURNING rows and all
                pass

        if ";" in sql.strip().rstrip(";"):  # a script: never re-run its first statements
            run()
        else:
            _retry_schema(run)
        # changes() keeps the last INSERT/UPDATE/DELETE's count through other statements, and
        # total_changes() also moves when FTS5 flushes its pending rows (before DDL, at COMMIT):
        # the count is this statement's only when it is one of those and rows were written
        if self.conn.total_changes() == before or not _changes_rows(sql):
            return 0
        return int(self.conn.changes())

    def iter_rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> apsw.Cursor:
        """The rows of ``sql`` as tuples, streamed from an open cursor (SQLite only: for the
        table-agnostic readers that walk a whole table)."""
        return _retry_schema(lambda: self.conn.execute(sql, params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any] | dict[str, Any]]) -> None:
        """Run ``sql`` once per row of bindings."""
        for _ in self.conn.executemany(sql, rows):
            pass

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        """Return all rows of ``sql`` as dicts keyed by column name."""
        def run() -> list[dict[str, Any]]:
            cursor = self.conn.execute(sql, params)
            names = _column_names(cursor)
            if names is None:
                return []
            return [dict(zip(names, row, strict=True)) for row in cursor]

        return _retry_schema(run)

    def query_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> dict[str, Any] | None:
        """Return the first row of ``sql`` as a dict, or None."""
        def run() -> dict[str, Any] | None:
            cursor = self.conn.execute(sql, params)
            names = _column_names(cursor)
            row = None if names is None else cursor.fetchone()
            if row is None:
                return None
            return dict(zip(names, row, strict=True))

        return _retry_schema(run)

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Return the first column of the first row, or None."""
        row = _retry_schema(lambda: self.conn.execute(sql, params).fetchone())
        return None if row is None else row[0]

    @property
    def portable(self) -> Database:
        """This database behind the engine-neutral calls (``?`` placeholders, ``query_in``);
        :attr:`hermes_store.pgdb.PgDatabase.portable` offers the same on PostgreSQL."""
        return self

    def query_in(self, sql: str, values: Iterable[Any], *, before: Sequence[Any] = (),
                 after: Sequence[Any] = (), chunk: int = IN_CHUNK) -> list[dict[str, Any]]:
        """Rows of ``sql`` for any number of ``values``, run once per chunk of them.

        ``sql`` holds ``{marks}`` where the ``?, ?, ...`` list goes; ``before`` and
        ``after`` are the bindings around it. Order across chunks follows ``values``.
        """
        return query_in_chunks(self.query, sql, values, before=before, after=after, chunk=chunk)

    def table_exists(self, name: str) -> bool:
        """True when a table, virtual table or view called ``name`` exists."""
        return self.scalar(
            "SELECT 1 FROM sqlite_schema WHERE name=? AND type IN ('table','view')", (name,)
        ) is not None

    def table_names(self) -> frozenset[str]:
        """Names of every table, virtual table and view."""
        rows = self.query("SELECT name FROM sqlite_schema WHERE type IN ('table','view')")
        return frozenset(str(row["name"]) for row in rows)

    # -- writes ----------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction committed on success, rolled back on error.

        Waiting for other writers is bounded by time (``busy_patience``), not by
        a number of attempts. Nested use on the same connection joins the outer
        transaction.
        """
        if self.readonly:
            raise DatabaseError(f"{self.path}: opened read-only"
                                + (f" ({self.read_only_reason})" if self.read_only_reason else ""))
        if self.newer_schema:
            raise DatabaseError(f"{self.path}: schema version {self.newer_schema} is newer than this hermes_store "
                                f"({latest_schema_version()}); refusing to write (upgrade hermes_store)")
        with self._lock:
            if self._write_depth:
                self._write_depth += 1
                try:
                    yield self.conn
                finally:
                    self._write_depth -= 1
                return
            self._retry_busy(lambda: self.conn.execute("BEGIN IMMEDIATE"))
            self._write_depth = 1
            try:
                self._refuse_foreign_triggers()
                yield self.conn
            except BaseException as exc:
                self._write_depth = 0
                if not self.conn.get_autocommit():
                    self.conn.execute("ROLLBACK")
                self._explain_write_failure(exc)
                raise
            self._write_depth = 0
            try:
                self._retry_busy(lambda: self.conn.execute("COMMIT"))
            except BaseException as exc:
                if not self.conn.get_autocommit():
                    self.conn.execute("ROLLBACK")
                self._explain_write_failure(exc)
                raise
            self._guard_wal()

    def _refuse_foreign_triggers(self) -> None:
        """Refuse a write (in its transaction, before anything is written) while the store holds
        triggers the migrations do not create: every write would fire them (see
        :mod:`hermes_store.sqlite_guard`). Checked again whenever the schema changed."""
        if not self._guard_triggers:
            return
        cookie = int(self.conn.execute("PRAGMA schema_version").fetchone()[0])
        if cookie == self._trigger_cookie:
            return
        version = self.user_version
        foreign = foreign_triggers(self.conn, [p.read_text(encoding="utf-8") for n, p in migrations() if n <= version])
        if foreign:
            raise DatabaseError(f"{self.path}: refusing to write: " + "; ".join(
                f"trigger {name} is not part of the hermes_store schema" for name in foreign[:5])
                + " (every write would run it); nothing was changed: `hermes-store doctor --fix` drops it")
        self._trigger_cookie = cookie

    def _guard_wal(self) -> None:
        """After a commit: if the ``-wal`` file vanished under this open connection (deleted
        by hand or a cleaner), copy the commit into the database file now.

        The connection still writes to the deleted WAL's inode, which no new connection can
        see and which is lost when the last old connection goes; a FULL checkpoint moves the
        committed pages into the main file, so the write is not lost. Counted in
        ``wal_vanished`` and logged.
        """
        if self.journal_mode != "wal" or self.path == Path(":memory:"):
            return
        if os.path.exists(f"{os.path.realpath(self.path)}-wal"):
            return
        self.wal_vanished += 1
        try:
            self._retry_busy(lambda: self.conn.execute("PRAGMA wal_checkpoint(FULL)").fetchall())
            logger.warning("%s-wal vanished under an open connection; the commit was checkpointed into %s",
                           self.path, self.path)
        except Exception as exc:
            raise DatabaseError(f"{self.path}-wal was deleted while the database was open and the commit could "
                                f"not be copied into {self.path}: {exc}; run `hermes-store doctor`") from exc

    def _explain_write_failure(self, exc: BaseException) -> None:
        """Turn a full disk / I/O failure of a rolled-back write into an error naming the file."""
        if isinstance(exc, (apsw.FullError, apsw.IOError, apsw.ReadOnlyError)):
            raise DatabaseError(
                f"{self.path}: write failed and was rolled back: {exc}{_access_hint(self.path)}"
            ) from exc

    def _retry_busy(self, action: Any) -> Any:
        """Call ``action`` until it stops raising BusyError or patience runs out."""
        deadline = time.monotonic() + self.busy_patience
        delay = 0.005
        while True:
            try:
                return action()
            except apsw.BusyError as exc:
                if time.monotonic() >= deadline:
                    raise DatabaseError(
                        f"{self.path}: database stayed busy for {self.busy_patience:g}s: {exc}"
                        f" (another process kept its write lock; ${BUSY_PATIENCE_ENV} sets the wait)"
                    ) from exc
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.25)

    @contextmanager
    def lock_patience(self, seconds: float) -> Iterator[None]:
        """Within: a write waits at most ``seconds`` (never longer than :attr:`busy_patience`)
        for another connection's lock, then fails with :class:`DatabaseError`.

        For bookkeeping a read does on the side: SQLite's own busy handler is bounded too,
        since the connection's busy timeout (set when it opened) is what a write waits on."""
        with self._lock:
            saved = self.busy_patience
            self.busy_patience = min(saved, max(0.0, float(seconds)))
            self.conn.set_busy_timeout(int(self.busy_patience * 1000))
            try:
                yield
            finally:
                self.busy_patience = saved
                self.conn.set_busy_timeout(int(saved * 1000))

    def checkpoint(self) -> None:
        """Request a PASSIVE WAL checkpoint (never blocks readers or writers)."""
        if self.journal_mode == "wal" and not self.readonly:
            try:
                self.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
            except apsw.BusyError:
                pass  # another connection is checkpointing now; PASSIVE is best effort anyway
            except (apsw.FullError, apsw.IOError) as exc:  # committed data stays safe in the WAL
                logger.warning("%s: checkpoint postponed: %s", self.path, exc)

    def size_bytes(self) -> int:
        """Bytes on disk of the database file plus its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += os.path.getsize(str(self.path) + suffix)
            except OSError:
                pass
        return total

    def interrupt(self) -> None:
        """Stop the statements running on this connection now (they raise apsw.InterruptError,
        which a search reports as partial results); a no-op when none is running. For a front
        end cancelling a search nobody waits for any more (``hermes-store tui``)."""
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.interrupt()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()
            self.conn = None  # type: ignore[assignment]

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_LEADING_VERB = re.compile(r"\s*(?:(?:--[^\n]*(?:\n|$)|/\*.*?\*/)\s*)*(\w+)", re.S)
_CHANGING_VERBS = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE"})
_CHANGING_WORD = re.compile(r"\b(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.I)


@lru_cache(maxsize=1024)
def _changes_rows(sql: str) -> bool:
    """True when ``sql`` is an INSERT, UPDATE, DELETE or REPLACE (a ``WITH`` one included)."""
    found = _LEADING_VERB.match(sql)
    verb = found.group(1).upper() if found else ""
    if verb == "WITH":
        return _CHANGING_WORD.search(sql, found.end()) is not None
    return verb in _CHANGING_VERBS


def _retry_schema(action: Any, patience: float = 5.0) -> Any:
    """Call ``action`` again (for up to ``patience`` seconds) when SQLite reports a schema
    change mid-prepare.

    A concurrent writer's DDL (the bulk loader swaps the FTS trigger inside its
    transaction) can make an FTS5 table's constructor fail with SQLITE_SCHEMA
    while another connection prepares a statement; nothing has run yet, so
    trying again is safe.
    """
    deadline = time.monotonic() + patience
    delay = 0.001
    while True:
        try:
            return action()
        except apsw.SchemaChangeError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.05)


def _column_names(cursor: apsw.Cursor) -> list[str] | None:
    """Column names of an executing cursor, or None when it produced no rows."""
    try:
        return [d[0] for d in cursor.get_description()]
    except apsw.ExecutionCompleteError:
        return None


def _access_hint(path: Path) -> str:
    """A note naming the likely cause (read-only file/directory, no space left), else ``""``."""
    for item in (path, path.parent):
        if item.exists() and not os.access(item, os.W_OK):
            return f" ({item} is read-only for this process)"
    try:
        info = os.statvfs(path.parent)
    except (OSError, AttributeError):
        return ""
    if info.f_bavail * info.f_frsize < 1 << 20:
        return f" (no space left on the device holding {path.parent})"
    return ""


def sqlite_url_path(url: str, base: str | os.PathLike[str] | None = None) -> Path | None:
    """The file named by a SQLite URL, else None (``None`` for any other scheme).

    As in SQLAlchemy: ``sqlite:///rel/file.db`` is relative to ``base`` (default: the working
    directory) and ``sqlite:////abs/file.db`` absolute; unlike SQLAlchemy, ``sqlite:///~/f.db``
    is in the user's home, as ``--home ~/x`` is. A directory or unknown ``~user`` raises.
    """
    if not url or url.partition(":")[0].strip().lower() != "sqlite":
        return None
    rest = url[len("sqlite://"):] if url.lower().startswith("sqlite://") else ""
    if not rest.startswith("/") or rest.strip("/") == "":  # sqlite:x.db, sqlite://x.db, sqlite:///
        raise DatabaseError(f"{url}: expected sqlite:///path/to/file.db (three slashes, then the path: "
                            "sqlite:///rel.db, sqlite:////abs/file.db)")
    named = os.path.expanduser(rest[1:])
    if named.startswith("~"):  # os.path.expanduser left it: no such user (or no home)
        raise DatabaseError(f"{url}: {named.split('/')[0]!r} names no home here (a folder so named: sqlite:///./{named})")
    path = Path(base or "", named).absolute()  # an absolute ``named`` (``~`` too) drops ``base``
    if path.is_dir():  # opened, it fails obscurely; `doctor --fix` would "salvage" it by renaming it
        raise DatabaseError(f"{path}: a directory, not a store file (name a file in it, "
                            f"e.g. sqlite:///{path / DB_FILENAME})")
    return path


def open_home_store(home: Any, url: str | None, **kwargs: Any) -> Database:
    """The SQLite engine's opener (:attr:`hermes_store.engines.Engine.opener`): ``home``'s
    store file (its own ``hermes_store.db`` or the file ``url`` names), created unless
    read-only (in the directory :meth:`~hermes_store.home.Home.prepare_store_directory` makes
    ready: a mistyped folder in a URL is refused); a read-only home (``mcp --read-only``) never
    writes, and no read-only open leaves a file beside the store (``traceless``)."""
    path = home.sqlite_path
    if home.read_only:
        kwargs = {**kwargs, "readonly": True}
        kwargs.pop("migrate", None)
    if kwargs.get("readonly"):
        kwargs["traceless"] = True
    else:
        home.prepare_store_directory()
    return Database(path, **kwargs)
