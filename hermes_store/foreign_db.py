"""The one reader of other programs' SQLite databases (Hermes ``state.db``, Crush, OpenCode,
Cursor, Goose, holographic ``memory_store.db``).

A foreign database is hostile input. :class:`ForeignDB` opens it read-only and leaves no
trace beside it: a WAL-mode file whose ``-wal``/``-shm`` are not there is opened
``immutable=1`` (nothing to read beyond the main file, and SQLite would otherwise create
both files in the other program's folder); a ``-wal`` holding commits with no ``-shm`` (a
copy of a stopped program's folder) is read from a private copy of the pair, removed on
close; a file with a live WAL, or a rollback-journal
file, is opened ``mode=ro`` so the writer's locks are honoured. Only real tables are read:
views and virtual tables are invisible to :meth:`ForeignDB.table_names` and a statement
naming one is refused. Every statement runs under a deadline (a progress handler), every
value is capped (``max_value_bytes``: longer text is cut and reported), every input is capped
(``max_input_bytes`` read in all). Text is fetched as bytes and decoded here, so one row of
invalid UTF-8 becomes a reported problem (table and row) while the rest is read. Every
SQLite error becomes a :class:`ForeignDBError` naming the file, never an error of our store;
a database locked by its writer is retried, then reported as ``locked``.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from hermes_store.sqlite_guard import uri_path, wal_mode_header

DEFAULT_STATEMENT_SECONDS = float(os.environ.get("HERMES_STORE_FOREIGN_STATEMENT_SECONDS", "") or 60.0)
DEFAULT_BUSY_SECONDS = 2.0
DEFAULT_MAX_VALUE_BYTES = 8 * 1024 * 1024  # one message, title or JSON blob
DEFAULT_MAX_INPUT_BYTES = 4 * 1024 * 1024 * 1024  # everything read from one file
MAX_SCHEMA_OBJECTS = 10_000
PROGRESS_STEPS = 1000
LOCK_RETRIES = 3
MAX_PROBLEMS = 200
_NAMED = re.compile(r"\b(?:FROM|JOIN)\s+[\"`\[]?([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
_SAFE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class ForeignDBError(ValueError):
    """A foreign database cannot be read (or not further); ``kind`` is ``locked``,
    ``unreadable``, ``timeout``, ``too big``, ``not a table`` or ``sqlite``."""

    def __init__(self, path: Path, kind: str, detail: str) -> None:
        super().__init__(f"{path}: {kind}: {detail}")
        self.path = path
        self.kind = kind


def quote_identifier(name: str) -> str:
    """``name`` as a quoted SQL identifier (a foreign column name is never raw SQL)."""
    return '"' + str(name).replace('"', '""') + '"'


def _has_frames(path: Path) -> bool:
    """True when ``<path>-wal`` exists and holds more than its 32-byte header (commits to read)."""
    try:
        return os.stat(f"{path}-wal").st_size > 32
    except OSError:
        return False


class ForeignDB:
    """A bounded, read-only, trace-free connection to another program's SQLite file."""

    def __init__(self, path: str | os.PathLike[str], *, busy_seconds: float = DEFAULT_BUSY_SECONDS,
                 statement_seconds: float = DEFAULT_STATEMENT_SECONDS,
                 max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
                 max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> None:
        self.path = Path(path)
        self.statement_seconds = float(statement_seconds)
        self.max_value_bytes = int(max_value_bytes)
        self.max_input_bytes = int(max_input_bytes)
        self.bytes_read = 0
        self.problems: list[tuple[int | None, str]] = []  # (row, message): drained by the importer
        self._deadline: float | None = None
        try:
            info = os.stat(self.path)
        except OSError as exc:
            raise ForeignDBError(self.path, "unreadable", exc.strerror or str(exc)) from exc
        if not stat.S_ISREG(info.st_mode):
            raise ForeignDBError(self.path, "unreadable", "not a regular file")
        sidecars = all(os.path.exists(f"{self.path}{s}") for s in ("-wal", "-shm"))
        query = "mode=ro&immutable=1" if wal_mode_header(self.path) and not sidecars else "mode=ro"
        self.immutable = "immutable" in query
        self._copy_dir: str | None = None
        opened = self.path
        if self.immutable and _has_frames(self.path):
            # a -wal holding commits but no -shm (a copy of a stopped program's folder): immutable
            # would skip those commits and plain read-only would create the -shm beside the file, so
            # the pair is read from a private copy
            opened = self._private_copy(info.st_size)
            query = "mode=ro"
        uri = f"file:{uri_path(opened)}?{query}"
        try:
            self.conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        except apsw.Error as exc:
            self._remove_copy()
            raise ForeignDBError(self.path, "unreadable", str(exc)) from exc
        self.conn.set_busy_timeout(int(busy_seconds * 1000))
        self.conn.set_progress_handler(self._past_deadline, PROGRESS_STEPS)
        try:
            rows = self._schema()
        except ForeignDBError:
            self.close()
            raise
        self._tables: set[str] = set()
        self._refused: set[str] = set()
        self._sort_schema(rows)

    def _schema(self) -> list[tuple[Any, ...]]:
        return self._run("SELECT type, name, sql FROM sqlite_master WHERE type IN ('table','view') "
                         f"LIMIT {MAX_SCHEMA_OBJECTS}", (), decode=False)

    def _sort_schema(self, rows: list[tuple[Any, ...]]) -> None:
        """Real tables into ``_tables``; views, virtual tables and their shadow tables refused."""
        for kind, name, sql in rows:
            name = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
            sql_text = sql.decode("utf-8", "replace") if isinstance(sql, bytes) else str(sql or "")
            if kind == "table" and not sql_text.lstrip().upper().startswith("CREATE VIRTUAL"):
                self._tables.add(name)
            else:
                self._refused.add(name)
        # shadow tables of a virtual table are real tables but belong to it: refuse them too
        for name in list(self._tables):
            if any(name.startswith(v + "_") for v in self._refused):
                self._tables.discard(name)
                self._refused.add(name)

    # -- bounds --------------------------------------------------------------

    def _past_deadline(self) -> bool:
        return self._deadline is not None and time.monotonic() > self._deadline

    def _run(self, sql: str, params: Sequence[Any], *, decode: bool = True) -> list[tuple[Any, ...]]:
        for attempt in range(LOCK_RETRIES):
            self._deadline = time.monotonic() + self.statement_seconds
            try:
                return list(self.conn.execute(sql, params))
            except apsw.BusyError as exc:
                if attempt + 1 == LOCK_RETRIES:
                    raise ForeignDBError(self.path, "locked",
                                         f"database is locked by another program ({exc})") from exc
                time.sleep(0.1 * (attempt + 1))
            except apsw.InterruptError as exc:
                raise ForeignDBError(self.path, "timeout",
                                     f"a read took over {self.statement_seconds:g} s; the rest is not read") from exc
            except apsw.Error as exc:
                raise ForeignDBError(self.path, "sqlite", str(exc)) from exc
            finally:
                self._deadline = None
        raise ForeignDBError(self.path, "locked", "database is locked by another program")

    def _check_names(self, sql: str) -> None:
        for name in _NAMED.findall(sql):
            if name in self._refused or (name not in self._tables and name.lower() not in
                                         {"sqlite_master", "sqlite_schema", "pragma_table_info"}):
                raise ForeignDBError(self.path, "not a table",
                                     f"{name!r} is a view, a virtual table or missing; only real tables are read")

    # -- reads ---------------------------------------------------------------

    def table_names(self) -> frozenset[str]:
        """Names of the real tables (views and virtual tables left out)."""
        return frozenset(self._tables)

    def table_exists(self, name: str) -> bool:
        """True when ``name`` is a real table (a view or virtual table of that name: False)."""
        return name in self._tables

    def columns(self, table: str) -> list[str]:
        """Column names of the real table ``table`` (empty when it is not one)."""
        if table not in self._tables:
            return []
        rows = self._run(f"PRAGMA table_info({quote_identifier(table)})", (), decode=False)
        return [r[1].decode("utf-8", "replace") if isinstance(r[1], bytes) else str(r[1]) for r in rows]

    def query(self, sql: str, params: Sequence[Any] = (), *, table: str | None = None,
              key: str | None = None) -> list[dict[str, Any]]:
        """Rows of ``sql`` (a SELECT over real tables) as dicts, values capped and text decoded.

        Text is fetched as bytes (``CAST AS BLOB``) and decoded here: invalid UTF-8 is replaced
        and reported in :attr:`problems` with ``table`` and the row's ``key`` column.
        """
        self._check_names(sql)
        names = self._names(sql, params)
        if not names:
            return []
        cap = self.max_value_bytes
        parts = []
        for i, _name in enumerate(names):
            col = f"c{i}"
            parts.append(f"typeof({col}), CASE WHEN typeof({col}) IN ('text','blob') "
                         f"THEN substr(CAST({col} AS BLOB), 1, {cap}) ELSE {col} END, "
                         f"CASE WHEN typeof({col}) IN ('text','blob') THEN length(CAST({col} AS BLOB)) END")
        inner = ", ".join(f"c{i}" for i in range(len(names)))
        wrapped = f"WITH q({inner}) AS ({sql}) SELECT {', '.join(parts)} FROM q"
        out: list[dict[str, Any]] = []
        where = table or "query"
        for raw in self._run(wrapped, params):
            row: dict[str, Any] = {}
            notes: list[str] = []
            for i, name in enumerate(names):
                kind, value, size = raw[3 * i], raw[3 * i + 1], raw[3 * i + 2]
                if size is not None:
                    self.bytes_read += int(size)
                    if size > cap:
                        notes.append(f"column {name} cut from {size} to {cap} bytes")
                if kind == "text" and isinstance(value, bytes):
                    try:
                        value = value.decode("utf-8")
                    except UnicodeDecodeError as exc:
                        if size is not None and size > cap and exc.start >= len(value) - 4:
                            value = value[:exc.start].decode("utf-8")  # a character cut by the cap
                        else:
                            value = value.decode("utf-8", "replace")
                            notes.append(f"column {name}: invalid UTF-8 at byte {exc.start} (replaced)")
                row[name] = value
            if notes:
                ident = row.get(key) if key else None
                self._note(ident if isinstance(ident, int) else None,
                           f"{where} row {ident if ident is not None else len(out) + 1}: " + "; ".join(notes))
            if self.bytes_read > self.max_input_bytes:
                raise ForeignDBError(self.path, "too big",
                                     f"over {self.max_input_bytes} bytes read; the rest is not read")
            out.append(row)
        return out

    def _names(self, sql: str, params: Sequence[Any]) -> list[str]:
        """Column names of ``sql``, read from the prepared statement without running it."""
        found: list[str] = []

        def trace(cursor: apsw.Cursor, _sql: str, _bindings: Any) -> bool:
            found.extend(str(d[0]) for d in cursor.getdescription())
            return False

        cursor = self.conn.cursor()
        cursor.exec_trace = trace
        try:
            cursor.execute(sql, params)
        except apsw.ExecTraceAbort:
            pass
        except apsw.Error as exc:
            raise ForeignDBError(self.path, "sqlite", str(exc)) from exc
        return found

    def _note(self, row: int | None, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append((row, message))

    def has_rows(self, table: str) -> bool:
        """True when the real table ``table`` holds at least one row."""
        if table not in self._tables:
            return False
        return bool(self._run(f"SELECT 1 FROM {quote_identifier(table)} LIMIT 1", (), decode=False))

    def query_one(self, sql: str, params: Sequence[Any] = (), **kw: Any) -> dict[str, Any] | None:
        """The first row of :meth:`query`, or None."""
        rows = self.query(sql, params, **kw)
        return rows[0] if rows else None

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row of :meth:`query`, or None."""
        row = self.query_one(sql, params)
        return None if row is None else next(iter(row.values()))

    def drain_problems(self) -> list[tuple[int | None, str]]:
        """The problems noted since the last call (and forget them)."""
        found, self.problems = self.problems, []
        return found

    def _private_copy(self, size: int) -> Path:
        """The file and its ``-wal`` copied to a private folder (removed by :meth:`close`)."""
        wal = Path(f"{self.path}-wal")
        total = size + wal.stat().st_size
        if total > self.max_input_bytes:
            raise ForeignDBError(self.path, "too big", f"{total} bytes with its -wal, over {self.max_input_bytes}")
        self._copy_dir = tempfile.mkdtemp(prefix="hermes-foreign-")
        target = Path(self._copy_dir) / "copy.db"
        try:
            shutil.copyfile(self.path, target)
            shutil.copyfile(wal, f"{target}-wal")
        except OSError as exc:
            self._remove_copy()
            raise ForeignDBError(self.path, "unreadable", f"cannot copy it with its -wal: {exc}") from exc
        return target

    def _remove_copy(self) -> None:
        if self._copy_dir is not None:
            shutil.rmtree(self._copy_dir, ignore_errors=True)
            self._copy_dir = None

    def close(self) -> None:
        """Close the connection (and remove a private copy)."""
        try:
            self.conn.close()
        finally:
            self._remove_copy()

    def __enter__(self) -> ForeignDB:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def foreign_tables(path: str | os.PathLike[str]) -> frozenset[str]:
    """Real table names of a foreign SQLite file; empty when unreadable, raises
    :class:`ForeignDBError` of kind ``locked`` when its writer holds it locked."""
    try:
        with ForeignDB(path, busy_seconds=0.2) as db:
            return db.table_names()
    except ForeignDBError as exc:
        if exc.kind == "locked":
            raise
        return frozenset()


def is_safe_name(name: str) -> bool:
    """True for a plain identifier (letters, digits, underscore)."""
    return bool(_SAFE_NAME.match(name))
