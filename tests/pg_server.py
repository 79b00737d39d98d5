"""A throw-away PostgreSQL server for the tests (Debian's binaries, Unix socket only).

``pg_server`` (session scope, one per xdist worker) runs ``initdb`` in a private temporary
directory and starts ``postgres`` listening only on a Unix socket in that directory
(``listen_addresses=''``); it is stopped and its directory removed at the end. As root the
server runs as the ``postgres`` system user (PostgreSQL refuses to run as root).

``pg_url`` (function scope) creates a fresh database on that server and yields its URL; the
database is dropped afterwards.

``pg_store_url`` (function scope, what the ``engine`` fixture uses) yields the URL of a
migrated, empty store database: one per worker, migrated once and emptied (``DELETE``)
after each test instead of being re-created (creating and migrating a database costs about a
second a test on a loaded machine). A test that changed the schema, or left a lock that keeps
the tables from being emptied, gets its database dropped; the next test starts a fresh one.

Where the binaries, a non-root user or psycopg are missing, every test that asks for these
fixtures is skipped with a reason starting ``POSTGRESQL TESTS SKIPPED``, and
:func:`pytest_terminal_summary` prints one loud line counting them, so a run without
PostgreSQL never looks like a run that tested it.
"""

from __future__ import annotations

import itertools
import os
import pwd
import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

SKIP_PREFIX = "POSTGRESQL TESTS SKIPPED"
_counter = itertools.count(1)


def find_bindir() -> Path | None:
    """The directory holding ``initdb`` and ``postgres`` (PATH first, then Debian's layout)."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("postgres"):
        return Path(initdb).resolve().parent
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True,
                            key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0):
        if (candidate / "initdb").exists() and (candidate / "postgres").exists():
            return candidate
    return None


def _run_as() -> tuple[list[str], str | None]:
    """The command prefix that runs a server binary as a non-root user, and that user."""
    if os.geteuid() != 0:
        return [], None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError("running as root and there is no 'postgres' user to run the server") from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise RuntimeError("running as root and runuser is missing")
    return [runuser, "-u", "postgres", "--"], "postgres"


class PgServer:
    """One private server: ``initdb`` + ``pg_ctl start`` in ``root``; :meth:`stop` removes it."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.prefix, self.user = _run_as()
        self.root = Path(tempfile.mkdtemp(prefix="hs-pg-"))
        self.data = self.root / "data"
        self.port = random.randint(20000, 60000)
        self.log = self.root / "server.log"
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        os.chmod(self.root, 0o700)

    def _bin(self, name: str) -> str:
        return str(self.bindir / name)

    def _pg_ctl_start(self) -> list[str]:
        return [self._bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                "-o", f"-k {self.root} -c listen_addresses='' -p {self.port} -c fsync=off "
                      "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
                "start"]

    def start(self) -> None:
        """initdb and start; raises RuntimeError with the server's own words on failure."""
        steps = [
            [self._bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
             "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
            self._pg_ctl_start(),
        ]
        self._run(steps)

    def pause(self) -> None:
        """Stop the server, keeping its data (a server restarting, as far as clients can tell)."""
        self._run([[self._bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop"]])

    def resume(self) -> None:
        """Start a :meth:`pause`-d server again on the same socket."""
        self._run([self._pg_ctl_start()])

    def _run(self, steps: list[list[str]]) -> None:
        for cmd in steps:
            done = subprocess.run(self.prefix + cmd, capture_output=True, text=True, timeout=120,
                                  cwd=self.root)
            if done.returncode != 0:
                tail = ""
                if self.log.exists():
                    tail = self.log.read_text(errors="replace")[-800:]
                raise RuntimeError(f"{Path(cmd[0]).name} failed: {done.stderr.strip()[-800:]} {tail}")

    def url(self, dbname: str = "postgres") -> str:
        """A libpq URL reaching ``dbname`` over this server's Unix socket."""
        return f"postgresql://postgres@/{dbname}?host={self.root}&port={self.port}"

    def admin(self, sql: str) -> None:
        """Run one statement outside a transaction on the ``postgres`` database."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql)

    def create_database(self, name: str) -> str:
        """Create ``name`` (a trusted identifier made by the fixture) and return its URL."""
        self.admin(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name``, disconnecting anyone still on it."""
        self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its directory."""
        if self.data.exists():
            subprocess.run(self.prefix + [self._bin("pg_ctl"), "-D", str(self.data), "-m", "fast",
                                          "-w", "-t", "60", "stop"],
                           capture_output=True, text=True, timeout=90, cwd=self.root)
        shutil.rmtree(self.root, ignore_errors=True)


def unavailable_reason() -> str | None:
    """Why a PostgreSQL server cannot be had here, or None when it can."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        return f"psycopg not installed ({exc}); pip install 'hermes_store[postgresql]'"
    if find_bindir() is None:
        return "initdb/postgres not found; run scripts/setup_postgres.sh (Debian package 'postgresql')"
    try:
        _run_as()
    except RuntimeError as exc:
        return str(exc)
    return None


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A running private PostgreSQL server for this test session (skips loudly when impossible)."""
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"{SKIP_PREFIX}: {reason}")
    server = PgServer(find_bindir())  # type: ignore[arg-type]
    try:
        server.start()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        server.stop()
        pytest.skip(f"{SKIP_PREFIX}: the test server did not start: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a fresh, empty database on the test server (dropped after the test)."""
    name = f"t_{os.getpid()}_{next(_counter)}"
    url = pg_server.create_database(name)
    try:
        yield url
    finally:
        pg_server.drop_database(name)


# everything that makes one store database's schema what the migrations made it
_FINGERPRINT = """
SELECT md5(coalesce(string_agg(x, ',' ORDER BY x), '')) FROM (
  SELECT 'c:' || table_schema || '.' || table_name || '.' || column_name || ':' || data_type
         || ':' || coalesce(column_default, '') AS x
    FROM information_schema.columns
   WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
  UNION ALL SELECT 'i:' || schemaname || '.' || indexdef FROM pg_indexes
   WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
  UNION ALL SELECT 't:' || tgrelid::regclass::text || '.' || tgname FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL SELECT 'f:' || p.oid::regprocedure::text || md5(p.prosrc) FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
  UNION ALL SELECT 'n:' || nspname FROM pg_namespace
  UNION ALL SELECT 'm:' || version || ':' || name FROM hermes_store_migrations
) parts
"""
_USER_TABLES = """
SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
 WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
   AND tablename <> 'hermes_store_migrations'
"""
_SEQUENCES = """
SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'S' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
"""  # identity columns' sequences included (information_schema.sequences leaves them out)


class ReusedStore:
    """The worker's reusable store database (see the module docstring)."""

    def __init__(self, server: PgServer) -> None:
        self.server = server
        self.name: str | None = None
        self.fingerprint: str | None = None

    def url(self) -> str:
        """The URL of a migrated, empty store database (made and migrated when there is none)."""
        if self.name is None:
            from hermes_store.pgdb import PgDatabase

            name = f"s_{os.getpid()}_{next(_counter)}"
            url = self.server.create_database(name)
            PgDatabase(url).close()  # applies every migration in schema/pg
            self.name, self.fingerprint = name, self._query(url, _FINGERPRINT)[0][0]
        return self.server.url(self.name)

    @staticmethod
    def _query(url: str, sql: str) -> list[tuple]:
        import psycopg

        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            return list(conn.execute(sql).fetchall())

    def reset(self) -> None:
        """Empty every table (and restart every sequence); drop the database instead when the
        test changed its schema or the tables cannot be emptied within a few seconds."""
        if self.name is None:
            return
        import psycopg

        url = self.server.url(self.name)
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                conn.execute("SET lock_timeout = '5s'")
                if conn.execute(_FINGERPRINT).fetchone()[0] != self.fingerprint:
                    raise RuntimeError("the test changed the schema")
                tables = [row[0] for row in conn.execute(_USER_TABLES).fetchall()]
                sequences = [row[0] for row in conn.execute(_SEQUENCES).fetchall()]
                with conn.transaction():
                    # DELETE, not TRUNCATE: a test leaves a few rows, and TRUNCATE re-creates the
                    # files of every table and index; foreign keys and triggers are not fired
                    # (replica role), every sequence restarts
                    conn.execute("SET LOCAL session_replication_role = replica")
                    for table in tables:
                        conn.execute(f"DELETE FROM {table}")
                    for sequence in sequences:
                        conn.execute(f"ALTER SEQUENCE {sequence} RESTART")
        except (psycopg.Error, RuntimeError):
            self.drop()

    def drop(self) -> None:
        """Drop the database (the next :meth:`url` makes a fresh one)."""
        if self.name is not None:
            self.server.drop_database(self.name)
            self.name = self.fingerprint = None


@pytest.fixture(scope="session")
def pg_reused_store(pg_server: PgServer) -> Iterator[ReusedStore]:
    """The worker's reusable store database (dropped at the end of the session)."""
    reused = ReusedStore(pg_server)
    try:
        yield reused
    finally:
        reused.drop()


@pytest.fixture
def pg_store_url(pg_reused_store: ReusedStore) -> Iterator[str]:
    """The URL of a migrated, empty store database (emptied again after the test)."""
    try:
        yield pg_reused_store.url()
    finally:
        pg_reused_store.reset()


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001
    """Print one loud line when PostgreSQL tests were skipped for want of a server."""
    skipped = terminalreporter.stats.get("skipped", [])
    reasons: dict[str, int] = {}
    for report in skipped:
        longrepr = getattr(report, "longrepr", None)
        text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        if SKIP_PREFIX in text:
            reason = text[text.index(SKIP_PREFIX):]
            reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in reasons.items():
        terminalreporter.write_line(f"{reason} ({count} tests)", red=True, bold=True)
