"""Copy a whole store between engines (SQLite file <-> PostgreSQL), ids kept, counts verified.

Part of the database layer (beside :mod:`hermes_store.db` and :mod:`hermes_store.pgdb`): it
moves table rows, nothing else. The target must not hold any of the copied rows yet (nothing
already stored is overwritten or merged); the copy runs in one transaction on the target and
is committed only after every table's row count matches the source's. Derived data (full-text
indexes, the built-in entry index) is rebuilt by the target itself.

Shared tables (sessions, facts, ...) are copied whole. The built-in memory's provenance and
history belong to one home; on PostgreSQL they carry the home's writer label, so copying to a
server files them under this home, and copying back takes only this home's rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hermes_store.db import Database, DatabaseError
from hermes_store.dbhealth import pg_refuse_foreign, schema_mismatches
from hermes_store.pgdb import PgDatabase

# (table, identity column or None), parents before children
SHARED_TABLES: tuple[tuple[str, str | None], ...] = (
    ("store_meta", None),
    ("sources", "id"),
    ("sessions", None),
    ("messages", "id"),
    # `forget`'s tombstones: without them a migrated or restored store re-imports what was
    # forgotten for good the next time its transcript is indexed
    ("forgotten", "id"),
    ("entities", "entity_id"),
    ("entity_aliases", None),
    ("facts", "fact_id"),
    ("fact_entities", None),
)
HOME_TABLES: tuple[str, ...] = ("memory_entries", "memory_sync", "memory_history")
APPEND_ONLY: frozenset[str] = frozenset({"memory_history"})  # a restore adds to it, never deletes
_PG_ONLY_COLUMNS = {"written_by", "home", "tsv"}
_BATCH = 5000


@dataclass
class CopyReport:
    """What a copy moved: rows per table (equal on both sides once it returns)."""

    source: str
    target: str
    tables: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"source": self.source, "target": self.target, "tables": dict(self.tables),
                "total_rows": sum(self.tables.values()), "seconds": round(self.seconds, 3)}


def _sqlite_columns(db: Database, table: str) -> list[str]:
    return [row["name"] for row in db.query(f"PRAGMA table_info({table})")]


def _pg_columns(db: PgDatabase, table: str) -> list[str]:
    rows = db.query(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = %s AND is_generated = 'NEVER' "
        "ORDER BY ordinal_position", (table,))
    return [row["column_name"] for row in rows]


def _common(sqlite_cols: list[str], pg_cols: list[str]) -> list[str]:
    wanted = set(pg_cols) - _PG_ONLY_COLUMNS
    return [c for c in sqlite_cols if c in wanted]


def copied_tables() -> list[tuple[str, str | None, bool]]:
    """(table, identity column, home-scoped) in copy order."""
    out = [(t, ident, False) for t, ident in SHARED_TABLES]
    out += [(t, "id" if t == "memory_history" else None, True) for t in HOME_TABLES]
    return out


def _sqlite_rows(db: Database, table: str, cols: list[str]) -> Iterator[tuple[Any, ...]]:
    for row in db.iter_rows(f"SELECT {', '.join(cols)} FROM {table}"):
        yield tuple(row)


def _exactly_ours(db: Database) -> None:
    """Refuse a SQLite store whose schema is not exactly the migrations' (an extra trigger
    would run on every copied row; a view in place of a table could be unbounded)."""
    foreign = schema_mismatches(db)
    if foreign:
        raise DatabaseError(f"{db.path}: refusing to migrate: " + "; ".join(m.message for m in foreign[:5])
                            + (f" (and {len(foreign) - 5} more)" if len(foreign) > 5 else ""))


def sqlite_to_postgres(source: Database, target: PgDatabase,
                       progress: Callable[[str, int], None] | None = None, *,
                       replace: bool = False) -> CopyReport:
    """Copy every table of ``source`` into the empty store ``target`` (one transaction).

    ``replace=True`` (a restore) first empties the shared tables and this home's memory rows
    in the same transaction instead of refusing a store that holds rows; the append-only
    ``memory_history`` is never emptied: the rows of ``source`` it lacks are added to it.
    Nothing is committed unless every table's count checks out.
    """
    started = time.monotonic()
    _exactly_ours(source)
    # an extra trigger on the target (AFTER INSERT ON facts ... DELETE FROM messages) would run on every copied row
    pg_refuse_foreign(target, "restore into it" if replace else "migrate into it")
    report = CopyReport(str(source.path), target.display_url)
    plan = []
    for table, ident, scoped in copied_tables():
        if not source.table_exists(table):
            continue
        cols = _common(_sqlite_columns(source, table), _pg_columns(target, table))
        plan.append((table, ident, scoped, cols))
    with target.transaction():
        if replace:
            _empty_for_restore(target, plan)
        for table, _, scoped, _ in plan:
            if replace and table in APPEND_ONLY:
                continue
            where, params = (" WHERE home = %s", (target.writer,)) if scoped else ("", ())
            present = target.scalar(f"SELECT count(*) FROM {table}{where}", params)
            if present:
                raise DatabaseError(
                    f"{target.display_url}: table {table} already holds {present} {'row' if present == 1 else 'rows'}; "
                    "migrate copies into an empty store only (nothing is merged or overwritten)")
        for table, ident, scoped, cols in plan:
            where, params = (" WHERE home = %s", (target.writer,)) if scoped else ("", ())
            kept: set[Any] = set()
            if replace and table in APPEND_ONLY and ident:
                kept = {row["i"] for row in target.query(f"SELECT {ident} AS i FROM {table}{where}", params)}
            rows = _sqlite_rows(source, table, cols)
            if kept:
                at = cols.index(ident)  # type: ignore[arg-type]
                rows = (row for row in rows if row[at] not in kept)
            count = target.copy_rows(f"COPY {table} ({', '.join(cols)}) FROM STDIN", rows)
            if ident:
                target.execute(
                    f"SELECT setval(pg_get_serial_sequence(%s, %s), "
                    f"coalesce((SELECT max({ident}) FROM {table}), 0) + 1, false)", (table, ident))
            expected = int(source.scalar(f"SELECT count(*) FROM {table}") or 0)
            stored = int(target.scalar(f"SELECT count(*) FROM {table}{where}", params) or 0)
            if kept:  # only the rows the target lacked are copied: count those on both sides
                both = sum(1 for row in source.query(f"SELECT {ident} AS i FROM {table}") if row["i"] in kept)
                expected, stored = expected - both, stored - len(kept)
            if not count == expected == stored:
                raise DatabaseError(f"{table}: copied {count} of {expected} {'row' if expected == 1 else 'rows'}, {stored} stored; rolled back")
            report.tables[table] = stored
            if progress:
                progress(table, stored)
    report.seconds = time.monotonic() - started
    return report


def _empty_for_restore(target: PgDatabase, plan: list[tuple[str, str | None, bool, list[str]]]) -> None:
    """Delete what a restore replaces: the shared tables' rows and this home's memory rows
    (children first; ``memory_history`` is append-only and kept)."""
    for table, _, scoped, _ in reversed(plan):
        if table in APPEND_ONLY:
            continue
        where, params = (" WHERE home = %s", (target.writer,)) if scoped else ("", ())
        target.execute(f"DELETE FROM {table}{where}", params)


def postgres_to_sqlite(source: PgDatabase, target: Database,
                       progress: Callable[[str, int], None] | None = None, *,
                       exact_schema: bool = True) -> CopyReport:
    """Copy the shared tables and this home's memory rows of ``source`` into the empty ``target``.

    Every table is read in one REPEATABLE READ snapshot of ``source``: the copy is consistent
    (all or none of each writer's transaction) even while other processes write. A source whose
    schema is not exactly the migrations' (an extra trigger, a view in place of a table) is refused
    unless ``exact_schema=False`` (a backup: only rows are copied, and the owner may want one
    before ``doctor --fix``)."""
    if exact_schema:
        pg_refuse_foreign(source, "migrate from it")
    with source.snapshot():
        return _postgres_to_sqlite(source, target, progress)


def _postgres_to_sqlite(source: PgDatabase, target: Database,
                        progress: Callable[[str, int], None] | None) -> CopyReport:
    started = time.monotonic()
    _exactly_ours(target)
    report = CopyReport(source.display_url, str(target.path))
    plan = []
    for table, _, scoped in copied_tables():
        if not (target.table_exists(table) and source.table_exists(table)):
            continue
        cols = _common(_sqlite_columns(target, table), _pg_columns(source, table))
        plan.append((table, scoped, cols))
    with target.write():
        for table, _, _ in plan:
            present = target.scalar(f"SELECT count(*) FROM {table}")
            if present:
                raise DatabaseError(
                    f"{target.path}: table {table} already holds {present} {'row' if present == 1 else 'rows'}; "
                    "migrate copies into an empty store only (nothing is merged or overwritten)")
        for table, scoped, cols in plan:
            where, params = (" WHERE home = %s", (source.writer,)) if scoped else ("", ())
            insert = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
            count = 0
            with source.transaction() as conn, conn.cursor(name=f"copy_{table}") as cursor:
                cursor.itersize = _BATCH
                cursor.execute(f"SELECT {', '.join(cols)} FROM {table}{where} ORDER BY 1", params)
                while batch := cursor.fetchmany(_BATCH):
                    target.executemany(insert, [tuple(_sqlite_value(r[c]) for c in cols) for r in batch])
                    count += len(batch)
            expected = int(source.scalar(f"SELECT count(*) FROM {table}{where}", params) or 0)
            stored = int(target.scalar(f"SELECT count(*) FROM {table}") or 0)
            if not count == expected == stored:
                raise DatabaseError(f"{table}: copied {count} of {expected} {'row' if expected == 1 else 'rows'}, {stored} stored; rolled back")
            report.tables[table] = stored
            if progress:
                progress(table, stored)
    report.seconds = time.monotonic() - started
    return report


def _sqlite_value(value: Any) -> Any:
    """PostgreSQL values as SQLite stores them (bytea arrives as memoryview)."""
    return bytes(value) if isinstance(value, memoryview) else value


def store_fingerprint(db: Database | PgDatabase, *, home: str | None = None,
                      meta_keys_left_out: tuple[str, ...] = ()) -> dict[str, list[int]]:
    """``{table: [rows, highest id]}`` of every copied table of the store ``db`` (either engine;
    the memory tables' rows of ``home`` only when given: a shared PostgreSQL store holds every
    home's): what a restore compares to tell an untouched store from one that changed.
    ``store_meta`` rows of ``meta_keys_left_out`` (what a backup file says of itself, which a
    restore brings along) are not counted."""
    sql = db.portable
    out: dict[str, list[int]] = {}
    for table, ident, scoped in copied_tables():
        if not db.table_exists(table):
            continue
        where, params = (" WHERE home = ?", [home]) if scoped and home is not None else ("", [])
        if table == "store_meta" and meta_keys_left_out:
            where = f" WHERE key NOT IN ({', '.join('?' * len(meta_keys_left_out))})"
            params = list(meta_keys_left_out)
        top = f"coalesce(max({ident}), 0)" if ident else "0"
        row = sql.query_one(f"SELECT count(*) AS n, {top} AS top FROM {table}{where}", params) or {}
        out[table] = [int(row.get("n") or 0), int(row.get("top") or 0)]
    return out


# (source engine, target engine) -> the copy between them; a new engine adds its pairs here
COPIERS: dict[tuple[str, str], Callable[..., CopyReport]] = {
    ("sqlite", "postgresql"): sqlite_to_postgres,
    ("postgresql", "sqlite"): postgres_to_sqlite,
}


def copier(source_engine: str, target_engine: str) -> Callable[..., CopyReport]:
    """The copy from ``source_engine`` to ``target_engine`` (``ValueError`` naming the pairs
    that can be copied when there is none)."""
    found = COPIERS.get((source_engine, target_engine))
    if found is None:
        pairs = ", ".join(f"{a} -> {b}" for a, b in COPIERS)
        raise ValueError(f"cannot copy a store from {source_engine} to {target_engine} (possible: {pairs})")
    return found
