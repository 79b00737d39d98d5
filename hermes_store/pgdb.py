"""The one place that opens PostgreSQL (psycopg 3 with its connection pool).

:class:`PgDatabase` is the PostgreSQL counterpart of :class:`hermes_store.db.Database`:
``engine == "postgresql"``, versioned migrations from ``schema/pg/NNNN_name.sql`` tracked in
the table ``hermes_store_migrations`` (applied under an advisory lock, so several hosts
starting at once migrate exactly once), transactions that nested use joins, and every wait
bounded: connecting (``connect_timeout``), waiting for a pooled connection (``pool_timeout``)
and each statement (``statement_timeout``, enforced by the server).

A server that is down, unreachable or too slow surfaces as :class:`PgUnavailable` (a
:class:`~hermes_store.db.DatabaseError`) whose message names the URL with its password
masked; passwords are never printed or logged (:func:`mask_url`).
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from hermes_store import pgreach
from hermes_store.db import IN_CHUNK, DatabaseError, StoreUnavailable, query_in_chunks, schema_dir
from hermes_store.engines import ENGINES
from hermes_store.pg_guard import foreign_triggers, missing_schema
from hermes_store.pgplaceholders import qmark_to_pyformat

logger = logging.getLogger(__name__)
# the pool's own retry warnings would print past the caller's error (Python's last-resort
# handler); they reach the application's handlers as usual
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())

T = TypeVar("T")

ENGINE = "postgresql"
URL_SCHEMES = ENGINES[ENGINE].url_schemes
MIGRATIONS_TABLE = "hermes_store_migrations"
DEFAULT_CONNECT_TIMEOUT = 5.0  # seconds to establish one connection
DEFAULT_STATEMENT_TIMEOUT = 30.0  # seconds the server lets one statement run
DEFAULT_POOL_SIZE = 4
_MIGRATION_LOCK = 0x48534D47  # advisory lock key ("HSMG") held while migrating
_MIGRATION_NAME = re.compile(r"^(\d{4})_[A-Za-z0-9_]+\.sql$")
_SECRET_KEYS = ("password", "passfile", "sslpassword")
#: libpq's words for a URL value it refuses before trying any server (``port=abc``,
#: ``sslmode=bogus``, three ports for two hosts): a bad URL, not a server that cannot be reached
_URL_PROBLEM_PREFIX = re.compile(r"^connection is bad: ")
_URL_PROBLEM = re.compile(r"^(?:connection is bad: )?(?:invalid |could not match \d+ )")
_KV_SECRET = re.compile(r"(\b(?:password|passfile|sslpassword)\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.I)


class PgUnavailable(StoreUnavailable):
    """The PostgreSQL server cannot be reached or did not answer in time."""


# --------------------------------------------------------------------------- URLs


def is_postgres_url(url: str | None) -> bool:
    """True when ``url`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    if not url:
        return False
    scheme = str(url).split(":", 1)[0].lower()
    return scheme in URL_SCHEMES and "://" in str(url)


def mask_url(url: str | None) -> str:
    """``url`` with any password replaced by ``***`` (URL user-info, query or key=value form)."""
    if not url:
        return ""
    text = str(url)
    if "://" not in text:  # libpq key=value connection string
        return _KV_SECRET.sub(lambda m: m.group(1) + "***", text)
    try:
        parts = urlsplit(text)
    except ValueError:
        return re.sub(r"//[^@/]*@", "//***@", text)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hostinfo = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{hostinfo}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in _SECRET_KEYS for k, _ in pairs):
            query = urlencode([(k, "***" if k.lower() in _SECRET_KEYS else v) for k, v in pairs],
                              safe="/:*")
    text = f"{parts.scheme}://{netloc}{parts.path}"
    return text + (f"?{query}" if query else "") + (f"#{parts.fragment}" if parts.fragment else "")


def check_url(url: str) -> None:
    """``ValueError`` when ``url`` is not a connection string libpq can parse (the engine's
    :attr:`~hermes_store.engines.Engine.url_check`; nothing is checked without psycopg, whose
    absence the opener reports)."""
    try:
        from psycopg import Error
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        return
    try:
        conninfo_to_dict(url)
    except Error as exc:
        raise ValueError(f"invalid database URL: {one_line(scrub(str(exc), url))}") from None


def pinned_url(url: str) -> str:
    """``url`` with what libpq would take from this environment (``PGHOST``, ``PGDATABASE``,
    ``PGOPTIONS``' search_path ...: each set variable whose keyword the URL leaves out) written
    into it, for a process started with another environment (a hook, a service) to open the same
    database (the engine's :attr:`~hermes_store.engines.Engine.url_to_pass`). Secrets
    (``PGPASSWORD``) are never written: such a process reads ``~/.pgpass``."""
    try:
        from psycopg import pq
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        return url
    given = conninfo_to_dict(url)
    pinned = [(o.keyword.decode(), o.val.decode()) for o in pq.Conninfo.get_defaults()
              if o.envvar and os.environ.get(o.envvar.decode()) and o.val is not None and not o.dispchar
              and o.keyword.decode() not in given and o.keyword.decode() not in _SECRET_KEYS]
    if not pinned:
        return url
    return url + ("&" if "?" in url else "?") + urlencode(pinned, quote_via=quote, safe="/")


_STORES_SEEN: set[str] = set()  # URLs whose database held a store in this process (it stays one)
#: Whether the connection's current schema holds any relation: none is what an absent file is on
#: SQLite (a schema of another application's tables is there: its opening is refused, by name)
SCHEMA_HOLDS_ANYTHING = "SELECT EXISTS (SELECT 1 FROM pg_class WHERE relnamespace = current_schema()::regnamespace)"


def store_present(url: str) -> bool:
    """Whether the database ``url`` names holds a store, or anything else, in the schema the
    URL's ``search_path`` chooses (:data:`SCHEMA_HOLDS_ANYTHING`): the engine's
    :attr:`~hermes_store.engines.Engine.store_check`, so a command that only reads creates
    nothing in an empty database, and another application's schema is still refused by the
    opener. One short connection the first time a URL is asked in a process (a store found is
    remembered); True when the driver is missing or the server cannot be asked (one that did
    not answer is not asked again for a while: :mod:`hermes_store.pgreach`), so the opener
    reports that in its own words."""
    if url in _STORES_SEEN or pgreach.recent_silence(url) is not None:
        return True
    try:
        import psycopg
    except ImportError:
        return True
    started = time.monotonic()
    try:
        with psycopg.connect(url, connect_timeout=max(2, int(round(DEFAULT_CONNECT_TIMEOUT))),
                             autocommit=True) as conn:
            present = bool(conn.execute(SCHEMA_HOLDS_ANYTHING).fetchone()[0])
    except psycopg.Error as exc:  # unreachable, refused, not a URL: the opener says so in its own words
        if "FATAL:" not in str(exc) and time.monotonic() - started >= pgreach.SILENT_AFTER:
            pgreach.remember_silent(url, scrub(one_line(str(exc)), url))
        return True
    if present:
        _STORES_SEEN.add(url)
    return present


def _secrets_of(url: str) -> list[str]:
    """The literal secret values held by ``url`` (to scrub them from error messages)."""
    found: list[str] = []
    try:
        from psycopg.conninfo import conninfo_to_dict

        params = conninfo_to_dict(url)
        found = [str(params[k]) for k in _SECRET_KEYS if params.get(k)]
    except Exception:  # an unparsable URL holds nothing we can name
        pass
    try:  # a password holding an unencoded '@': libpq ends it at the first '@' and reads the rest
        password = urlsplit(url).password  # as the host (quoted in its errors); mask_url, at the last
    except ValueError:
        password = None
    if password:
        found += [password, *password.split("@")]
    return [s for s in found if len(s) >= 1]


def one_line(text: str) -> str:
    """libpq's message on one line: its lines joined with ``; `` (its hint starts a line of its
    own: "... failed: Connection refused" / "Is the server running ...", run together as one
    sentence before), the spaces in each collapsed."""
    return "; ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def scrub(text: str, url: str) -> str:
    """``text`` with every secret of ``url`` replaced by ``***`` (for messages from the driver;
    one quoting the whole URL, as libpq's parse errors do, gets it masked even when unparsable)."""
    text = text.replace(url, mask_url(url))
    for secret in _secrets_of(url):
        for form in {secret, quote(secret, safe="")}:
            # as a whole token only: a short password ("p") replaced inside every word made the
            # message unreadable ("Servname not su***orted") without hiding anything more
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])", "***", text)
    return text


def writer_label(home_root: str | os.PathLike[str] | None = None) -> str:
    """``host:home`` identifying the writer of shared rows (host name and home directory)."""
    host = socket.gethostname() or "unknown-host"
    return f"{host}:{home_root}" if home_root else host


_CHANGING_COMMANDS = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})


def changed_rows(status: str | None, rowcount: int) -> int:
    """The rows a statement inserted, updated or deleted, from its command tag (``UPDATE 3``)
    and the cursor's row count; 0 for any other command (a SELECT's rows are not changes)."""
    command = (status or "").split(" ", 1)[0].upper()
    return max(int(rowcount), 0) if command in _CHANGING_COMMANDS else 0


class PortableSql:
    """The calls of :class:`hermes_store.db.Database` that storage code shares across engines,
    over a :class:`PgDatabase`: SQL written with ``?`` placeholders and ``IN ({marks})`` lists
    (translated by :func:`qmark_to_pyformat`; values always bound, never pasted)."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; return how many rows it inserted, updated or deleted."""
        return self.db.execute(qmark_to_pyformat(sql), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run ``sql`` once per row of bindings."""
        self.db.executemany(qmark_to_pyformat(sql), [tuple(r) for r in rows])

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """All rows of ``sql`` as dicts keyed by column name."""
        return self.db.query(qmark_to_pyformat(sql), tuple(params))

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        """The first row of ``sql`` as a dict, or None."""
        return self.db.query_one(qmark_to_pyformat(sql), tuple(params))

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row, or None."""
        return self.db.scalar(qmark_to_pyformat(sql), tuple(params))

    def query_in(self, sql: str, values: Iterable[Any], *, before: Sequence[Any] = (),
                 after: Sequence[Any] = (), chunk: int = IN_CHUNK) -> list[dict[str, Any]]:
        """Rows of ``sql`` for any number of ``values`` (``{marks}`` where the ``?, ?, ...``
        list goes, ``before``/``after`` the bindings around it), one statement per chunk,
        exactly as :meth:`hermes_store.db.Database.query_in`."""
        return query_in_chunks(self.query, sql, values, before=before, after=after, chunk=chunk)


# --------------------------------------------------------------------------- migrations


def pg_schema_dir() -> Path:
    """The directory of the PostgreSQL migrations (``schema/pg``)."""
    return schema_dir() / ENGINES[ENGINE].schema_folder


def pg_migrations() -> list[tuple[int, Path]]:
    """``(version, path)`` for every PostgreSQL migration, in version order."""
    directory = pg_schema_dir()
    found = sorted(
        (int(m.group(1)), path)
        for path in (directory.iterdir() if directory.is_dir() else [])
        if (m := _MIGRATION_NAME.match(path.name))
    )
    versions = [v for v, _ in found]
    if len(set(versions)) != len(versions):
        raise DatabaseError(f"duplicate migration numbers in {directory}")
    return found


# --------------------------------------------------------------------------- the database


class PgDatabase:
    """A pooled PostgreSQL database configured the project's way.

    ``url`` is a libpq URL (``postgresql://user:pass@host:5432/db?sslmode=...``). Opening
    checks that the server answers within ``connect_timeout`` seconds and applies pending
    migrations (``migrate=True``); both failures raise :class:`PgUnavailable` /
    :class:`DatabaseError` naming the masked URL. ``writer`` labels rows this process
    writes to shared tables (see :func:`writer_label`).
    """

    engine = ENGINE

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT,
        pool_size: int = DEFAULT_POOL_SIZE,
        writer: str | None = None,
    ) -> None:
        if not is_postgres_url(url):
            raise DatabaseError(f"{mask_url(url)}: not a postgresql:// URL")
        try:
            import psycopg
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise DatabaseError(
                f"PostgreSQL support needs psycopg 3: pip install 'hermes_store[postgresql]' ({exc})"
            ) from exc
        self._psycopg = psycopg
        self._url = str(url)
        self.display_url = mask_url(url)
        self.connect_timeout = max(1.0, float(connect_timeout))
        self.statement_timeout = max(0.1, float(statement_timeout))
        self.writer = writer or writer_label()
        self._local = threading.local()
        self.readonly = False
        self._foreign_triggers: list[str] = []  # pg_guard's findings at open (see _refuse_foreign_write)
        options = (
            f"-c statement_timeout={int(self.statement_timeout * 1000)} "
            f"-c lock_timeout={int(self.statement_timeout * 1000)} "
            f"-c idle_in_transaction_session_timeout={int(max(60.0, self.statement_timeout * 2) * 1000)} "
            # every statement of the store is index-driven and bounded: a parallel plan only adds
            # worker start-up (3-10 ms measured on search statements of a few ms) on cores the
            # hosts' agents share
            "-c max_parallel_workers_per_gather=0"
        )
        try:
            given = psycopg.conninfo.conninfo_to_dict(self._url)
            if given.get("options"):  # the URL's own options (e.g. -csearch_path=...) come first
                options = f"{given['options']} {options}"
            conninfo = psycopg.conninfo.make_conninfo(
                self._url,
                connect_timeout=max(2, int(round(self.connect_timeout))),
                application_name=given.get("application_name") or "hermes_store",
                options=options,
            )
        except psycopg.Error as exc:
            raise DatabaseError(f"{self.display_url}: invalid database URL: {scrub(str(exc), url)}") from exc
        writer_value = self.writer

        def configure(conn: Any) -> None:
            conn.execute("SELECT set_config('hermes_store.writer', %s, false)", (writer_value,))

        self.pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=max(1, int(pool_size)),
            kwargs={"autocommit": True, "row_factory": dict_row},
            configure=configure,
            check=ConnectionPool.check_connection,
            open=False,
            timeout=self.connect_timeout,
            reconnect_timeout=max(30.0, self.connect_timeout * 4),
            name="hermes_store",
        )
        silent = pgreach.recent_silence(self._url)
        if silent is not None:  # it did not answer a moment ago: fail now, not after another wait
            raise PgUnavailable(f"{self.display_url}: PostgreSQL server not reachable within "
                                f"{self.connect_timeout:.0f}s: {silent}")
        started = time.monotonic()
        try:
            # one direct connection first: a refused or unknown server is named in the driver's
            # own words (the pool only says it did not fill in time)
            psycopg.connect(conninfo, autocommit=True).close()
            self.pool.open(wait=True, timeout=self.connect_timeout)
        except psycopg.Error as exc:
            self._close_pool()
            reason = self._reason(exc)
            if _URL_PROBLEM.match(reason):  # libpq refused a value of the URL before trying any server
                raise DatabaseError(f"{self.display_url}: invalid database URL: "
                                    f"{_URL_PROBLEM_PREFIX.sub('', reason)}") from exc
            # the server answered and said no (no such database, role or password): not a timeout
            answered = "FATAL:" in reason
            waited = time.monotonic() - started >= pgreach.SILENT_AFTER  # else failed at once (no socket)
            if not answered and waited:
                pgreach.remember_silent(self._url, reason)
            raise PgUnavailable(
                f"{self.display_url}: PostgreSQL server refused the connection: {reason}" if answered else
                f"{self.display_url}: PostgreSQL server not reachable"
                f"{f' within {self.connect_timeout:.0f}s' if waited else ''}: {reason}") from exc
        pgreach.forget(self._url)
        if migrate:
            try:
                self.migrate()
            except BaseException:
                self.close()
                raise

    # -- errors ----------------------------------------------------------------

    def _reason(self, exc: BaseException) -> str:
        """The driver's words for ``exc``, secrets removed, one line."""
        return scrub(one_line(str(exc)) or type(exc).__name__, self._url)

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn connection trouble and server time-outs into :class:`PgUnavailable`."""
        errors = self._psycopg.errors
        try:
            yield
        except errors.QueryCanceled as exc:
            raise PgUnavailable(
                f"{self.display_url}: statement cancelled after {self.statement_timeout:g}s "
                f"(server too slow or a lock held too long): {self._reason(exc)}"
            ) from exc
        except errors.LockNotAvailable as exc:
            raise PgUnavailable(f"{self.display_url}: lock wait timed out: {self._reason(exc)}") from exc
        except (self._psycopg.OperationalError, self._psycopg.InterfaceError) as exc:
            raise PgUnavailable(f"{self.display_url}: PostgreSQL unavailable: {self._reason(exc)}") from exc

    # -- connections and transactions -----------------------------------------

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """The connection of the current transaction or :meth:`held_connection` block, or a
        pooled one (autocommit) for the block."""
        current = getattr(self._local, "conn", None) or getattr(self._local, "held", None)
        if current is not None:
            yield current
            return
        with self._guard(), self.pool.connection(timeout=self.connect_timeout) as conn:
            yield conn

    @contextmanager
    def held_connection(self) -> Iterator[None]:
        """Run every statement of the block on this thread over one pooled connection
        (autocommit; :meth:`transaction` inside it is a transaction on that connection).

        A search runs some forty short statements; taken one by one from the pool, each paid
        the pool's liveness check (a round trip) and its bookkeeping. Nested use joins the
        outer block; inside a transaction the block changes nothing."""
        if getattr(self._local, "conn", None) is not None or getattr(self._local, "held", None) is not None:
            yield
            return
        with self._guard(), self.pool.connection(timeout=self.connect_timeout) as conn:
            self._local.held = conn
            try:
                yield
            finally:
                self._local.held = None

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A transaction committed on success, rolled back on error; nested use joins the outer."""
        current = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        held = getattr(self._local, "held", None)
        if held is not None:
            self._local.conn = held
            try:
                with self._guard(), held.transaction():
                    self._limit_lock_wait(held)
                    yield held
                    self._refuse_foreign_write(held)
            finally:
                self._local.conn = None
            return
        with self._guard(), self.pool.connection(timeout=self.connect_timeout) as conn:
            self._local.conn = conn
            try:
                with conn.transaction():
                    self._limit_lock_wait(conn)
                    yield conn
                    self._refuse_foreign_write(conn)
            finally:
                self._local.conn = None

    @contextmanager
    def lock_patience(self, seconds: float) -> Iterator[None]:
        """Within: a transaction begun on this thread waits at most ``seconds`` for a lock
        another session holds (``lock_timeout``, never longer than the statement timeout),
        then fails with :class:`PgUnavailable`. For bookkeeping a read does on the side."""
        previous = getattr(self._local, "lock_wait", None)
        wait = min(self.statement_timeout, max(0.001, float(seconds)))
        self._local.lock_wait = wait if previous is None else min(previous, wait)
        try:
            yield
        finally:
            self._local.lock_wait = previous

    def _limit_lock_wait(self, conn: Any) -> None:
        wait = getattr(self._local, "lock_wait", None)
        if wait is not None:  # transaction-local: the pooled connection keeps its own setting
            conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{max(1, int(wait * 1000))}ms",))

    write = transaction  # the name the SQLite Database uses for the same thing

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        """A read-only REPEATABLE READ transaction: every statement of the block on this thread
        sees the one snapshot taken at its first statement (a consistent copy while writers run;
        writers are never blocked). Nested inside a transaction it joins that transaction."""
        if self.in_transaction:
            with self.transaction() as conn:
                yield conn
            return
        with self.transaction() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    @property
    def portable(self) -> PortableSql:
        """This database behind the engine-neutral calls (``?`` placeholders, ``query_in``)."""
        return PortableSql(self)

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction` on this thread."""
        return getattr(self._local, "conn", None) is not None

    def run_transaction(self, work: Callable[[Any], T], *, attempts: int = 5) -> T:
        """Run ``work(conn)`` in a transaction, re-running it on serialization failure/deadlock."""
        errors = self._psycopg.errors
        for attempt in range(1, attempts + 1):
            try:
                with self.transaction() as conn:
                    return work(conn)
            except (errors.SerializationFailure, errors.DeadlockDetected):
                if attempt == attempts or self.in_transaction:
                    raise
        raise AssertionError("unreachable")

    # -- queries ---------------------------------------------------------------

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> int:
        """Run one statement (``%s`` placeholders, bound by the server); return how many rows
        it inserted, updated or deleted (0 for any other statement), as
        :meth:`hermes_store.db.Database.execute` does."""
        with self.connection() as conn, self._guard():
            cursor = conn.execute(sql, params)
            return changed_rows(cursor.statusmessage, cursor.rowcount)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any] | dict[str, Any]]) -> None:
        """Run ``sql`` once per row of bindings (pipelined by psycopg)."""
        with self.connection() as conn, self._guard(), conn.cursor() as cursor:
            cursor.executemany(sql, list(rows))

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """All rows of ``sql`` as dicts keyed by column name."""
        with self.connection() as conn, self._guard():
            cursor = conn.execute(sql, params)
            return list(cursor.fetchall()) if cursor.description else []

    def query_one(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The first row of ``sql`` as a dict, or None."""
        with self.connection() as conn, self._guard():
            cursor = conn.execute(sql, params)
            return cursor.fetchone() if cursor.description else None

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> Any:
        """The first column of the first row, or None."""
        row = self.query_one(sql, params)
        return None if row is None else next(iter(row.values()))

    def copy_rows(self, statement: str, rows: Iterable[Sequence[Any]]) -> int:
        """Stream ``rows`` through ``COPY ... FROM STDIN`` (``statement``); return the count."""
        count = 0
        with self.connection() as conn, self._guard(), conn.cursor() as cursor:
            with cursor.copy(statement) as copy:
                for row in rows:
                    copy.write_row(row)
                    count += 1
        return count

    def table_exists(self, name: str) -> bool:
        """True when a table or view called ``name`` exists in the current schema search path."""
        return self.scalar("SELECT to_regclass(%s) IS NOT NULL", (name,)) is True

    def size_bytes(self) -> int:
        """Bytes the store uses on the server: every table (with its indexes and TOAST), view and
        sequence of the connection's current schema, where the store lives. Not the whole
        database (``pg_database_size``: its system catalogs, about 7 MB of an empty one, and any
        other schema's tables, another store's included)."""
        return int(self.scalar(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'm', 'S')") or 0)

    def server_version(self) -> str:
        """The server's version string (e.g. ``15.18``)."""
        return str(self.scalar("SHOW server_version"))

    # -- migrations ------------------------------------------------------------

    @property
    def schema_version(self) -> int:
        """The highest migration applied (0 for an empty database)."""
        if not self.table_exists(MIGRATIONS_TABLE):
            return 0
        return int(self.scalar(f"SELECT coalesce(max(version), 0) FROM {MIGRATIONS_TABLE}") or 0)

    user_version = schema_version

    def migrate(self, *, guard: bool = True) -> int:
        """Apply every migration newer than the recorded version; return the final version.
        ``guard=False`` (``doctor --fix``, which restores what the guard would refuse) leaves
        this connection's writes unguarded by :mod:`hermes_store.pg_guard`."""
        found = pg_migrations()
        foreign: list[str] = []
        with self.transaction() as conn, self._guard():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            self._refuse_foreign(conn)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} ("
                " version integer PRIMARY KEY, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            row = conn.execute(f"SELECT coalesce(max(version), 0) AS v FROM {MIGRATIONS_TABLE}").fetchone()
            current = int(row["v"])
            for version, path in found:
                if version <= current:
                    continue
                try:
                    with conn.transaction():  # a savepoint: the failing file is named
                        conn.execute(path.read_text(encoding="utf-8"))
                except self._psycopg.errors.QueryCanceled:
                    raise
                except self._psycopg.DatabaseError as exc:
                    raise DatabaseError(f"{path.name}: migration failed: {self._reason(exc)}") from exc
                conn.execute(f"INSERT INTO {MIGRATIONS_TABLE}(version, name) VALUES (%s, %s)",
                             (version, path.name))
                current = version
            if current <= max((v for v, _ in found), default=0):  # a newer store's are not judged
                foreign = foreign_triggers(conn, [p.read_text(encoding="utf-8") for v, p in found if v <= current])
        self._foreign_triggers = foreign if guard else []  # every write would run them: refused
        return current

    def _refuse_foreign_write(self, conn: Any) -> None:
        """Before a transaction commits: when the store holds triggers or rules its migrations do
        not create (:mod:`hermes_store.pg_guard`, read at open) and the transaction wrote (it has
        a transaction id), refuse it; raised inside the transaction, it is rolled back with
        whatever those triggers did. Reads go on; ``doctor --fix`` drops them."""
        if self._foreign_triggers and conn.execute("SELECT txid_current_if_assigned() IS NOT NULL AS w").fetchone()["w"]:
            raise DatabaseError(f"{self.display_url}: refusing to write: " + "; ".join(self._foreign_triggers[:5])
                                + " (every write would run it); nothing was changed: `hermes-store doctor --fix` drops it")

    def _refuse_foreign(self, conn: Any) -> None:
        """Raise :class:`DatabaseError` when the store's schema holds another application's
        tables and no hermes_store migrations: named as the store by mistake, it gets nothing
        of ours (the transaction is rolled back)."""
        if conn.execute("SELECT to_regclass(%s) IS NOT NULL AS ours", (MIGRATIONS_TABLE,)).fetchone()["ours"]:
            return
        if (nowhere := missing_schema(conn)) is not None:
            raise DatabaseError(f"{self.display_url}: {nowhere}; nothing was created")
        names = [row["table_name"] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
            " ORDER BY table_name LIMIT 4").fetchall()]
        if names:
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            raise DatabaseError(f"{self.display_url}: not a hermes_store database (its schema holds {shown} and no "
                                "hermes_store migrations); nothing was changed: name an empty database or an "
                                "existing store")

    # -- life cycle ------------------------------------------------------------

    def _close_pool(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            try:
                pool.close(timeout=self.connect_timeout)
            except Exception as exc:  # closing must never raise past the caller
                logger.debug("closing the PostgreSQL pool: %s", self._reason(exc))
            self.pool = None  # type: ignore[assignment]

    def close(self) -> None:
        """Close every pooled connection (idempotent)."""
        self._close_pool()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return getattr(self, "pool", None) is None

    def __enter__(self) -> PgDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PgDatabase({self.display_url!r})"


def open_home_store(home: Any, url: str | None, **kwargs: Any) -> PgDatabase:
    """The PostgreSQL engine's opener (:attr:`hermes_store.engines.Engine.opener`): the
    database at ``url``, migrated unless ``migrate=False`` or the home is read-only, written as
    ``home``'s writer label; SQLite-only options (``readonly``, ``wal`` ...) are ignored."""
    db = PgDatabase(url or "", migrate=kwargs.get("migrate", True) and not home.read_only,
                    writer=writer_label(home.root))
    db.readonly = db.readonly or home.read_only
    return db
