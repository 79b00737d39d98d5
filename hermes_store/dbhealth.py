"""What ``doctor`` checks and repairs in the store database (part of the database layer).

:func:`inspect` never raises: it reports a file that is missing, truncated or not SQLite,
a schema newer than this version, tables/triggers/indexes missing against the schema the
migrations build (compared with a fresh in-memory store), tables whose pages cannot be
read, and ``integrity_check`` problems.

:func:`repair` recreates missing objects from the reference schema and rebuilds every
full-text index (derived data). :func:`salvage` copies primary data row by row into a
fresh store, skipping what cannot be read (forward scan, backward scan and probes past
a damaged page, each followed by a backward read down to the damage, so at least what
``sqlite3 .dump`` recovers), keeps the damaged file beside it
(``hermes_store.db.damaged-<stamp>``) and reports what it copied per table.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from hermes_store.db import (
    Database,
    DatabaseError,
    StoreUnavailable,
    foreign_objects,
    latest_schema_version,
    migrations,
)
from hermes_store.sqlite_guard import stray_wal

logger = logging.getLogger(__name__)

SQLITE_MAGIC = b"SQLite format 3\x00"
FTS_SUFFIXES = ("_data", "_idx", "_content", "_docsize", "_config")
NOT_SALVAGED = frozenset({"sqlite_sequence", "fts_deferred"})  # internal, or transient state
PROBE_LIMIT = 64  # rowid probes past a damaged page (gaps double each time)
BATCH = 500


def _ident(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


@dataclass
class Report:
    """What :func:`inspect` found: problems (each naming the object) and facts about the file."""

    path: Path
    problems: list[str] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (type, name)
    unreadable_tables: list[str] = field(default_factory=list)
    foreign: list[SchemaMismatch] = field(default_factory=list)  # objects the migrations never create
    corrupt: bool = False
    newer_schema: bool = False
    not_a_store: bool = False  # another program's SQLite file: nothing here applies, nothing is fixed
    unavailable: bool = False  # cannot be opened now for a cause outside the file (a full disk): not damage
    user_version: int | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def reference_schema() -> dict[str, tuple[str, str, str | None]]:
    """``name -> (type, table, sql)`` of every object a fully migrated store has."""
    with Database(":memory:") as fresh:
        rows = fresh.query("SELECT type, name, tbl_name, sql FROM sqlite_schema")
    return {r["name"]: (r["type"], r["tbl_name"], r["sql"]) for r in rows}


@dataclass(frozen=True)
class SchemaMismatch:
    """One way a store's schema is not the one the migrations build: ``reason`` is ``extra``
    (an object the migrations never create), ``type`` (same name, another kind, e.g. a view
    named ``messages``), ``definition`` (same name and kind, other SQL) or ``missing``."""

    kind: str
    name: str
    reason: str
    expected: str | None = None  # the kind the migrations create, for ``type``

    @property
    def message(self) -> str:
        """The problem in words, naming the object."""
        if self.reason == "extra":
            return f"{self.kind} {self.name} is not part of the hermes_store schema"
        if self.reason == "type":
            return f"{self.name} is a {self.kind}, not the {self.expected} of the hermes_store schema"
        if self.reason == "definition":
            return f"{self.kind} {self.name} differs from the hermes_store schema (its definition was changed)"
        return f"{self.kind} {self.name} is missing"


@functools.lru_cache(maxsize=4)
def _schema_at(version: int) -> tuple[tuple[str, str, str | None], ...]:
    """``(name, type, sql)`` of every object a store migrated up to ``version`` has."""
    conn = apsw.Connection(":memory:")
    try:
        for number, path in migrations():
            if number <= version:
                conn.execute(path.read_text(encoding="utf-8"))
        rows = conn.execute("SELECT name, type, sql FROM sqlite_schema").fetchall()
    finally:
        conn.close()
    return tuple((str(name), str(kind), sql) for name, kind, sql in rows)


def _normal(sql: str | None) -> str | None:
    return " ".join(sql.split()) if sql else sql


def schema_mismatches(db: Database, *, missing: bool = True) -> list[SchemaMismatch]:
    """How the schema of the SQLite store ``db`` differs from what the migrations create up to
    its ``user_version`` on a fresh in-memory database: every table, index, trigger and view
    compared by name, kind and SQL (SQLite's own ``sqlite_*`` objects aside). Empty when the
    schema is exactly ours; a store written by a newer hermes_store is not judged (empty).
    ``missing=False`` leaves out missing objects (doctor reports those itself)."""
    version = db.user_version
    if version > latest_schema_version():
        return []
    reference = {name: (kind, _normal(sql)) for name, kind, sql in _schema_at(version)}
    actual = {r["name"]: (r["type"], _normal(r["sql"])) for r in db.query("SELECT name, type, sql FROM sqlite_schema")}
    found: list[SchemaMismatch] = []
    for name, (kind, sql) in sorted(actual.items()):
        if name.startswith("sqlite_"):
            continue  # SQLite's own (autoindexes, sqlite_sequence, ANALYZE statistics)
        if name not in reference:
            found.append(SchemaMismatch(kind, name, "extra"))
        elif reference[name][0] != kind:
            found.append(SchemaMismatch(kind, name, "type", expected=reference[name][0]))
        elif reference[name][1] != sql:
            found.append(SchemaMismatch(kind, name, "definition"))
    if missing:
        found += [SchemaMismatch(kind, name, "missing") for name, (kind, sql) in sorted(reference.items())
                  if name not in actual and sql is not None and not name.startswith("sqlite_")]
    return found


def drop_foreign_objects(path: str | os.PathLike[str]) -> list[str]:
    """Drop the triggers and views of the store at ``path`` that the migrations never create
    (``doctor --fix``), and put back a trigger of ours or a full-text index whose definition
    was changed (another tokenizer, other columns: searches found nothing) as the migrations
    define it, the index rebuilt from its rows (it holds no data of its own); other tables and
    indexes are left for the user to judge. Returns what was done."""
    dropped: list[str] = []
    with Database(path, migrate=False) as db:
        found = schema_mismatches(db, missing=False)
        reference = {name: sql for name, _kind, sql in _schema_at(db.user_version)}
        fts = [name for name, sql in reference.items() if sql and "USING FTS5" in sql.upper()]
        redefined = [m for m in found if m.reason == "definition"
                     and (m.kind == "trigger" or m.kind == "table" and m.name in fts)]
        extra = [m for m in found if m.reason == "extra" and m.kind in ("trigger", "view")]
        if extra or redefined:
            with db.write():
                for item in redefined:  # first: an FTS table's odd shadow tables go with it
                    db.execute(f"DROP {item.kind.upper()} {_ident(item.name)}")
                    db.execute(reference[item.name])
                    if item.kind == "table":
                        db.execute(f"INSERT INTO {_ident(item.name)}({_ident(item.name)}) VALUES('rebuild')")
                    dropped.append(f"recreated {item.kind} {item.name} as the hermes_store schema defines it")
                for item in extra:
                    db.execute(f"DROP {item.kind.upper()} IF EXISTS {_ident(item.name)}")
                    dropped.append(f"dropped {item.kind} {item.name} (not part of the hermes_store schema)")
    return dropped


def _fts_tables(schema: dict[str, tuple[str, str, str | None]]) -> list[str]:
    return [name for name, (kind, _, sql) in schema.items()
            if kind == "table" and sql and "USING fts5" in sql.replace("using", "USING")]


def _is_fts_part(name: str, fts: list[str]) -> bool:
    return name in fts or any(name == f"{t}{s}" for t in fts for s in FTS_SUFFIXES)


def _check_header(path: Path, report: Report) -> bool:
    """False, with the problem in ``report``, when ``path`` cannot be a SQLite database: a file
    that does not start with SQLite's header is another kind of file named as the store
    (``not_a_store``: nothing can be salvaged from it, nothing is changed); an unreadable or
    truncated store is ``corrupt``."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(100)
    except FileNotFoundError:
        return True
    except OSError as exc:
        report.problems.append(f"{path}: cannot read: {exc.strerror or exc}")
        report.corrupt = True
        return False
    if head and not head.startswith(SQLITE_MAGIC):
        report.problems.append(f"{path}: not a SQLite database (its first bytes are not the SQLite header), so "
                               "nothing in it can be salvaged; doctor --fix leaves it alone: name the store's own "
                               "file, or move this one aside for a fresh store")
        report.not_a_store = True
        return False
    problem = _size_problem(path, head)
    if problem:
        report.problems.append(problem)
        report.corrupt = True
    return not problem


def _size_problem(path: Path, head: bytes) -> str | None:
    """Why the SQLite file ``path`` (whose first bytes are ``head``) is truncated, or None."""
    size = path.stat().st_size
    if size == 0:
        return None  # SQLite treats an empty file as a new database
    page_size = int.from_bytes(head[16:18], "big") or 65536
    pages = int.from_bytes(head[28:32], "big")
    if size < 100 or (pages and size < pages * page_size and not Path(f"{path}-wal").exists()):
        return f"{path}: truncated ({size:,} bytes; the header says {pages:,} pages of {page_size:,})"
    return None


def inspect(path: str | os.PathLike[str]) -> Report:
    """Check the database at ``path`` without changing it (never raises)."""
    path = Path(path)
    report = Report(path)
    if not _check_header(path, report):
        return report
    if not path.exists():
        report.problems.append(f"{path}: no database yet (it is created on first use)")
        return report
    try:
        db = Database(path, readonly=True)
    except DatabaseError as exc:  # StoreUnavailable: e.g. no room for the -shm file, not damage
        report.problems.append(str(exc))
        report.unavailable = isinstance(exc, StoreUnavailable)
        report.corrupt = not report.unavailable
        return report
    try:
        foreign = foreign_objects(db.conn)
        if foreign:  # another program's file (or the store read through another database's -wal)
            stray = stray_wal(path, 0)
            report.problems.append(f"{path}: {stray}; doctor --fix leaves it alone" if stray else
                                   f"{path}: not a hermes_store database (it holds {', '.join(foreign[:3])}"
                                   f"{', ...' if len(foreign) > 3 else ''} and no hermes_store schema); "
                                   "doctor --fix leaves it alone: name the store's own file")
            report.not_a_store = True
            return report
        _inspect_open(db, report)
    except apsw.Error as exc:
        report.problems.append(f"{path}: the schema cannot be read: {exc}")
        report.corrupt = True
    finally:
        db.close()
    return report


def _inspect_open(db: Database, report: Report) -> None:
    try:
        report.user_version = db.user_version
        actual = {r["name"]: r["type"] for r in db.query("SELECT name, type FROM sqlite_schema")}
    except apsw.Error as exc:
        report.problems.append(f"{db.path}: the schema cannot be read: {exc}")
        report.corrupt = True
        return
    latest = latest_schema_version()
    if report.user_version > latest:
        report.newer_schema = True
        report.problems.append(f"{db.path}: schema version {report.user_version} is newer than this hermes_store "
                               f"({latest}); it is read with care and never written")
    reference = reference_schema()
    for name, (kind, _table, sql) in sorted(reference.items()):
        if sql is None or name.startswith("sqlite_"):
            continue
        if name not in actual:
            report.missing.append((kind, name))
            report.problems.append(f"{db.path}: {kind} {name} is missing")
    try:
        report.foreign = schema_mismatches(db, missing=False)
    except apsw.Error as exc:
        report.problems.append(f"{db.path}: the schema cannot be compared: {exc}")
    report.problems += [f"{db.path}: {mismatch.message}" for mismatch in report.foreign]
    for name, kind in sorted(actual.items()):
        if kind != "table" or name.startswith("sqlite_"):
            continue
        try:
            db.scalar(f"SELECT count(*) FROM {_ident(name)}")
        except apsw.Error as exc:
            report.unreadable_tables.append(name)
            report.corrupt = True
            report.problems.append(f"{db.path}: table {name} cannot be read: {exc}")
    try:
        rows = [str(r[0]) for r in db.iter_rows("PRAGMA integrity_check(20)")]
    except apsw.Error as exc:
        rows = [f"integrity_check failed: {exc}"]
    if rows != ["ok"]:
        report.corrupt = True
        report.problems.append(f"{db.path}: integrity_check: " + "; ".join(rows[:5]))


def repair(path: str | os.PathLike[str]) -> list[str]:
    """Recreate missing tables, triggers and indexes and rebuild every full-text index.

    Returns what was done. Refuses a database with a newer schema.
    """
    reference = reference_schema()
    done: list[str] = []
    with Database(path, migrate=False) as db:
        if db.user_version > latest_schema_version():
            raise DatabaseError(f"{db.path}: schema version {db.user_version} is newer than this hermes_store; "
                                "not repaired")
        actual = {r["name"] for r in db.query("SELECT name FROM sqlite_schema")}
        fts = _fts_tables(reference)
        order = {"table": 0, "view": 1, "index": 2, "trigger": 3}
        missing = [(n, k, s) for n, (k, _t, s) in reference.items()
                   if n not in actual and s is not None and not n.startswith("sqlite_")
                   and not (_is_fts_part(n, fts) and n not in fts)]
        with db.write():
            for name, kind, sql in sorted(missing, key=lambda item: order.get(item[1], 9)):
                db.execute(sql)
                done.append(f"recreated {kind} {name}")
            for table in fts:
                db.execute(f"INSERT INTO {_ident(table)}({_ident(table)}) VALUES('rebuild')")
            done.append(f"rebuilt {len(fts)} full-text indexes")
    return done


def _columns(db: Database, table: str) -> list[str]:
    return [r["name"] for r in db.query(f"PRAGMA table_info({_ident(table)})")]


def _read_rows(db: Database, sql: str, params: tuple, found: dict[int, tuple],
               within: tuple[int, int]) -> tuple[int | None, bool]:
    """Read ``sql`` (rowid first, then the columns) into ``found`` until it ends or fails.

    Rows already found are kept as first read; a rowid outside the open interval ``within``
    (which the query cannot return: garbage decoded from a damaged page) is left out.
    Returns the last rowid kept and whether the query ran to its end.
    """
    last = None
    try:
        for row in db.iter_rows(sql, params):
            key = int(row[0])
            if within[0] < key < within[1]:
                found.setdefault(key, tuple(row[1:]))
                last = key
    except apsw.Error:
        return last, False
    return last, True


def _scan(db: Database, table: str, cols: list[str], rowid: bool) -> tuple[list[tuple], int]:
    """Every readable row of ``table`` (by rowid where it has one) and the number of read errors.

    A rowid table is read forwards; at a damaged page, rowids past the last row read are
    probed with doubling gaps (at most ``PROBE_LIMIT`` probes in all) for a readable row, the
    rows just below it are read backwards down to the damage (the probe may have jumped over
    them) and the forward read resumes from it; last the table is read from its end backwards
    down to the first unreadable page, as ``sqlite3 .dump`` does.
    """
    select = ", ".join(_ident(c) for c in cols)
    quoted_table = _ident(table)
    if not rowid:  # WITHOUT ROWID: a forward then a backward full scan
        rows: dict[tuple, tuple] = {}
        errors = 0
        for direction in ("", " DESC"):
            try:
                for row in db.iter_rows(f"SELECT {select} FROM {quoted_table} ORDER BY 1{direction}, 2{direction}"):
                    rows[row] = row
            except apsw.Error:
                errors += 1
        return list(rows.values()), errors
    found: dict[int, tuple] = {}
    try:
        top = db.scalar(f"SELECT max(rowid) FROM {quoted_table}")
    except apsw.Error:
        top = None
    low, high = -(2**63) - 1, (top + 1 if top is not None else 2**63)  # no rowid outside
    last, ended = _read_rows(db, f"SELECT rowid, {select} FROM {quoted_table} ORDER BY rowid", (), found, (low, high))
    errors = 0 if ended else 1
    probes = 0
    while not ended:
        base = last if last is not None else 0
        step, resume = 1, None
        while probes < PROBE_LIMIT:
            probes += 1
            candidate = base + step
            if candidate >= high:
                break
            try:
                nxt = db.scalar(f"SELECT rowid FROM {quoted_table} WHERE rowid >= ? ORDER BY rowid LIMIT 1", (candidate,))
                db.iter_rows(f"SELECT {select} FROM {quoted_table} WHERE rowid = ?", (nxt,)).fetchall()
            except apsw.Error:
                step *= 2
                continue
            resume = None if nxt is None else int(nxt)
            break
        if resume is None:
            break
        # the rows between the damage and ``resume`` that the doubling gaps jumped over
        if not _read_rows(db, f"SELECT rowid, {select} FROM {quoted_table} WHERE rowid > ? AND rowid < ? "
                          "ORDER BY rowid DESC", (base, resume), found, (base, resume))[1]:
            errors += 1
        read, ended = _read_rows(db, f"SELECT rowid, {select} FROM {quoted_table} WHERE rowid >= ? ORDER BY rowid",
                                 (resume,), found, (resume - 1, high))
        last = read if read is not None else resume  # the next probes start past it either way
        errors += 0 if ended else 1
    # and from the end backwards down to the first unreadable page, as sqlite3 .dump does
    if not _read_rows(db, f"SELECT rowid, {select} FROM {quoted_table} ORDER BY rowid DESC", (), found, (low, high))[1]:
        errors += 1
    return [found[k] for k in sorted(found)], errors


def salvage(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Copy every readable primary row of the database at ``path`` into a fresh store in its place.

    The damaged file (with its -wal/-shm) is kept as ``<name>.damaged-<stamp>``; derived
    indexes are rebuilt by the fresh store's triggers. Returns ``{"kept_as", "tables":
    {table: {"copied", "read_errors"}}}``.
    """
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    fresh_path = path.with_name(f".{path.name}.salvage-{stamp}")
    reference = reference_schema()
    fts = _fts_tables(reference)
    tables = [n for n, (k, _t, s) in reference.items()
              if k == "table" and s and not _is_fts_part(n, fts) and n not in NOT_SALVAGED
              and not n.startswith("sqlite_")]
    counts: dict[str, dict[str, int]] = {}
    try:
        source = Database(path, readonly=True)
    except DatabaseError:
        source = None  # not even openable: nothing to copy, the fresh store replaces it
    fresh = Database(fresh_path)
    try:
        fresh.execute("PRAGMA foreign_keys=OFF")
        for table in tables:
            if source is None:
                counts[table] = {"copied": 0, "read_errors": 1}
                continue
            try:
                source_cols = set(_columns(source, table))
                has_rowid = not (reference[table][2] or "").upper().rstrip().endswith("WITHOUT ROWID")
            except apsw.Error:
                counts[table] = {"copied": 0, "read_errors": 1}
                continue
            cols = [c for c in _columns(fresh, table) if c in source_cols]
            if not cols:
                counts[table] = {"copied": 0, "read_errors": 0}
                continue
            rows, errors = _scan(source, table, cols, has_rowid)
            insert = (f"INSERT OR IGNORE INTO {_ident(table)} ({', '.join(_ident(c) for c in cols)}) "
                      f"VALUES ({', '.join('?' * len(cols))})")
            copied = 0
            with fresh.write():
                for row in rows:
                    try:
                        copied += fresh.execute(insert, row)
                    except apsw.Error:
                        errors += 1
            counts[table] = {"copied": copied, "read_errors": errors}
        with fresh.write():
            for table in fts:
                fresh.execute(f"INSERT INTO {_ident(table)}({_ident(table)}) VALUES('rebuild')")
    finally:
        fresh.close()
        if source is not None:
            source.close()
    kept = path.with_name(f"{path.name}.damaged-{stamp}")
    os.replace(path, kept)
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if side.exists():
            os.replace(side, Path(f"{kept}{suffix}"))
    os.replace(fresh_path, path)
    for suffix in ("-wal", "-shm"):
        leftover = Path(f"{fresh_path}{suffix}")
        if leftover.exists():
            leftover.unlink()
    return {"kept_as": str(kept), "tables": counts}


# --------------------------------------------------------------------------- PostgreSQL
# The migrations in ``schema/pg`` are written to be re-run (``IF NOT EXISTS``, ``OR REPLACE``,
# ``DROP ... IF EXISTS`` before ``CREATE TRIGGER``): the objects they name are what a
# current store holds, and re-applying them all recreates what is missing.
_PG_OBJECT = re.compile(
    r"\bCREATE\s+(?:UNIQUE\s+)?(?:(TABLE|INDEX|SEQUENCE)\s+IF\s+NOT\s+EXISTS|OR\s+REPLACE\s+(FUNCTION)|(TRIGGER))"
    r"\s+([A-Za-z_][A-Za-z0-9_]*)", re.I)


def pg_expected_objects() -> list[tuple[str, str]]:
    """``(kind, name)`` of every table, index, sequence, function and trigger the PostgreSQL
    migrations create (kind lower case), in migration order, without repeats."""
    from hermes_store.pgdb import pg_migrations

    seen: dict[tuple[str, str], None] = {}
    for _, path in pg_migrations():
        for match in _PG_OBJECT.finditer(path.read_text(encoding="utf-8")):
            kind = (match.group(1) or match.group(2) or match.group(3)).lower()
            seen.setdefault((kind, match.group(4).lower()), None)
    return list(seen)


def _pg_present(db: Any, kind: str, name: str) -> bool:
    if kind == "function":
        return bool(db.scalar("SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                              " WHERE p.proname = %s AND n.nspname = current_schema()", (name,)))
    if kind == "trigger":
        return bool(db.scalar("SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
                              " JOIN pg_namespace n ON n.oid = c.relnamespace"
                              " WHERE t.tgname = %s AND n.nspname = current_schema()", (name,)))
    return db.scalar("SELECT to_regclass(%s) IS NOT NULL", (name,)) is True


def pg_inspect(db: Any) -> Report:
    """What a PostgreSQL store lacks: the schema version against this hermes_store's, and every
    table, index, sequence, function and trigger of the migrations that is missing."""
    from hermes_store.pgdb import pg_migrations

    report = Report(Path(db.display_url))
    latest = max((version for version, _ in pg_migrations()), default=0)
    report.user_version = version = int(db.schema_version)
    if version > latest:
        report.newer_schema = True
        report.problems.append(f"{db.display_url}: schema version {version} is newer than this "
                               f"hermes_store's ({latest}); upgrade hermes_store")
        return report
    if version < latest:
        report.problems.append(f"schema version {version}, this hermes_store expects {latest}")
        report.missing.append(("migrations", f"{version + 1}..{latest}"))
    for kind, name in pg_expected_objects():
        if not _pg_present(db, kind, name):
            report.missing.append((kind, name))
    if report.missing:
        report.problems.append(", ".join(f"{kind} {name}" for kind, name in report.missing) + " missing")
    return report


def pg_store_absent(db: Any) -> bool:
    """True when the database's schema holds no store yet and nothing else (no relation at all):
    what an absent file is on SQLite."""
    from hermes_store.pgdb import SCHEMA_HOLDS_ANYTHING

    return not db.scalar(SCHEMA_HOLDS_ANYTHING)


def pg_repair(db: Any) -> list[str]:
    """Apply the pending migrations, then re-apply every migration in one transaction (each is
    written to be re-run), recreating what is missing; returns what was done."""
    from hermes_store.pgdb import pg_migrations

    done = []
    before = int(db.schema_version)
    with db.transaction() as conn:
        # the migrations rewrite rows (0003: UPDATE facts SET content = content): a trigger
        # function of ours that was replaced (facts_changed() deleting every message) would run
        # before its own migration restores it, so the tables' triggers are off until then
        for table in _user_trigger_tables(conn):
            conn.execute(f"ALTER TABLE {_ident(table)} DISABLE TRIGGER USER")
        after = db.migrate(guard=False)  # joins this transaction
        if after != before:
            done.append(f"migrated {before} -> {after}")
        for _, path in pg_migrations():
            conn.execute(path.read_text(encoding="utf-8"))
            done.append(f"re-applied {path.name}")
        for table in _user_trigger_tables(conn):
            conn.execute(f"ALTER TABLE {_ident(table)} ENABLE TRIGGER USER")
    return done


def _user_trigger_tables(conn: Any) -> list[str]:
    """The tables of the store's schema that have triggers of their own (not constraints')."""
    return [r["tbl"] for r in conn.execute(
        "SELECT DISTINCT c.relname AS tbl FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        " WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace ORDER BY 1").fetchall()]


# ----------------------------------------------------------- PostgreSQL: exactly our schema
# The reference is built the robust way: the migrations (up to the store's version) applied to a
# scratch schema inside a transaction that is always rolled back, then read from pg_catalog the
# same way as the store's own schema. Compared: tables, indexes (definition), sequences, views,
# materialized views, foreign tables, triggers (table, timing/events, function), rules and
# functions (arguments, body), all in the store's schema only (``current_schema()``).
_PG_CATALOGUE = """
SELECT c.relname AS name,
       CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'i' THEN 'index'
            WHEN 'I' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 'v' THEN 'view'
            WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' WHEN 'c' THEN 'type'
            ELSE 'relation' END AS kind,
       CASE WHEN c.relkind IN ('i', 'I') THEN pg_get_indexdef(c.oid) END AS def, NULL AS tbl
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = %(s)s AND c.relkind <> 't'
UNION ALL
SELECT t.tgname, 'trigger', c.relname || ' ' || t.tgtype::text || ' ' || p.proname, c.relname
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_proc p ON p.oid = t.tgfoid
 WHERE n.nspname = %(s)s AND NOT t.tgisinternal
UNION ALL
SELECT r.rulename, 'rule', c.relname || ' ' || r.ev_type::text, c.relname
  FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = %(s)s AND r.rulename <> '_RETURN'
UNION ALL
SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', 'function',
       md5(coalesce(p.prosrc, '')), NULL
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = %(s)s
"""
PG_DROPPABLE = ("trigger", "view", "rule")  # what ``doctor --fix`` drops; the rest is reported


class _Rollback(Exception):
    """Raised to roll the scratch schema's transaction back."""


def _pg_catalogue(conn: Any, schema: str) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    rows = conn.execute(_PG_CATALOGUE, {"s": schema}).fetchall()
    prefix = re.compile(rf'(?<![\w"])(?:"{re.escape(schema)}"|{re.escape(schema)})\.')
    return {(r["kind"], r["name"]): (prefix.sub("", r["def"]) if r["def"] else r["def"], r["tbl"])
            for r in rows}


_PG_REFERENCE: dict[int, dict[tuple[str, str], tuple[str | None, str | None]]] = {}


def pg_reference(db: Any, version: int) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    """``(kind, name) -> (definition, table)`` of what the migrations up to ``version`` create,
    built in a scratch schema on ``db``'s server and rolled back (cached per version)."""
    from hermes_store.pgdb import MIGRATIONS_TABLE, pg_migrations

    if version in _PG_REFERENCE:
        return _PG_REFERENCE[version]
    scratch = f"hermes_store_reference_{os.getpid()}_{time.monotonic_ns()}"
    found: dict[tuple[str, str], tuple[str | None, str | None]] = {}
    try:
        with db.transaction() as conn:
            conn.execute(f"CREATE SCHEMA {scratch}")
            conn.execute(f"SET LOCAL search_path TO {scratch}")
            conn.execute(f"CREATE TABLE {MIGRATIONS_TABLE} (version integer PRIMARY KEY, name text NOT NULL,"
                         " applied_at timestamptz NOT NULL DEFAULT now())")
            for number, path in pg_migrations():
                if number <= version:
                    conn.execute(path.read_text(encoding="utf-8"))
            found = _pg_catalogue(conn, scratch)
            raise _Rollback
    except _Rollback:
        pass
    _PG_REFERENCE[version] = found
    return found


def pg_schema_mismatches(db: Any) -> list[SchemaMismatch]:
    """How the PostgreSQL store ``db``'s schema differs from what the migrations create up to
    its version: every object of the kinds above that they never create (``extra``), or whose
    definition differs (``definition``: an index, trigger, rule or function body). Empty for a
    store written by a newer hermes_store (not judged)."""
    from hermes_store.pgdb import pg_migrations

    version = int(db.schema_version)
    if version > max((number for number, _ in pg_migrations()), default=0):
        return []
    reference = pg_reference(db, version)
    with db.transaction() as conn:
        schema = conn.execute("SELECT current_schema() AS s").fetchone()["s"]
        actual = _pg_catalogue(conn, schema)
    found: list[SchemaMismatch] = []
    for (kind, name), (definition, _) in sorted(actual.items()):
        if (kind, name) not in reference:
            found.append(SchemaMismatch(kind, name, "extra"))
        elif reference[(kind, name)][0] != definition:
            found.append(SchemaMismatch(kind, name, "definition"))
    return found


def pg_drop_foreign_objects(db: Any) -> list[str]:
    """Drop the triggers, views and rules of the PostgreSQL store that the migrations never
    create (``doctor --fix``); other extras are left for the user to judge. Returns what was dropped."""
    extra = [m for m in pg_schema_mismatches(db) if m.reason == "extra" and m.kind in PG_DROPPABLE]
    dropped: list[str] = []
    if not extra:
        return dropped
    with db.transaction() as conn:
        schema = conn.execute("SELECT current_schema() AS s").fetchone()["s"]
        tables = _pg_catalogue(conn, schema)
        for item in extra:
            table = tables[(item.kind, item.name)][1]
            on = f" ON {_ident(table)}" if item.kind in ("trigger", "rule") and table else ""
            conn.execute(f"DROP {item.kind.upper()} IF EXISTS {_ident(item.name)}{on}")
            dropped.append(f"dropped {item.kind} {item.name} (not part of the hermes_store schema)")
    return dropped


def pg_refuse_foreign(db: Any, doing: str) -> None:
    """Raise :class:`DatabaseError` naming the objects when the PostgreSQL store's schema is not
    exactly the migrations' (``doing``: e.g. ``migrate``)."""
    foreign = pg_schema_mismatches(db)
    if foreign:
        raise DatabaseError(f"{db.display_url}: refusing to {doing}: " + "; ".join(m.message for m in foreign[:5])
                            + (f" (and {len(foreign) - 5} more)" if len(foreign) > 5 else ""))
