"""``hermes-store doctor [--fix]``: check the store database and its full-text indexes."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes_store.cli.common import counted, echo_error, echo_json, get_home
from hermes_store.cli.style import StatusLine, fill, output_columns, style
from hermes_store.home import ConfigError, Home

if TYPE_CHECKING:
    from hermes_store.dbhealth import Report


@click.command("doctor")
@click.option("--fix", is_flag=True, help="Repair what can be: salvage a damaged SQLite file, recreate missing "
              "tables/indexes/functions (PostgreSQL: re-run the migrations), rebuild failing full-text indexes, "
              "drop triggers and views the hermes_store schema does not have.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.pass_context
def doctor(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """Check the store: its schema and objects, the engine's consistency check, every
    full-text index, and a real search probe (SQLite: PRAGMA integrity_check and FTS5
    integrity-check; PostgreSQL: schema version, missing tables/indexes/functions/triggers,
    invalid indexes).

    Exit 0 when everything passes (after --fix), 1 otherwise.
    """
    from hermes_store.sessions import maintenance as m

    checks: list[dict] = []

    def record(name: str, problem: str | None, fixed: bool = False, **extra: object) -> None:
        checks.append({"check": name, "ok": problem is None or fixed,
                       "problem": problem, "fixed": fixed, **extra})

    home = get_home(ctx)
    try:
        path = home.sqlite_path
        store = {"engine": home.engine, "location": home.store_location()}
    except ConfigError as exc:
        record("config", str(exc))
        _report_on(checks, as_json)
        echo_error(str(exc))
        sys.exit(1)
    report = functools.partial(_report_on, store=store)  # every report names the store checked
    if path is None:
        state = _check_server(home, fix, record)
        if not state:
            report(checks, as_json)
            sys.exit(0 if state is None else 1)  # None: no store there yet, as for a SQLite file
    elif not path.exists():
        problem = home.store_directory_problem()  # a URL's mistyped folder: no write would work
        if problem:
            record("store", problem)
        else:
            record("store", None, note=f"no store at {path} yet (it is created by the first write)")
        report(checks, as_json)
        sys.exit(1 if problem else 0)
    elif not _check_file(path, fix, record):
        report(checks, as_json)
        sys.exit(1)
    try:
        db = home.open_db()
    except Exception as exc:
        record("open", str(exc))
        report(checks, as_json)
        sys.exit(1)
    try:
        with StatusLine() as line:  # progress on a terminal's stderr only
            line.show("doctor: integrity_check ...")
            problems = m.integrity_check(db)
            record("integrity_check", "; ".join(problems[:5]) if problems else None)
            for table in m.fts_tables(db):
                if getattr(db, "readonly", False) and hasattr(db, "read_only_reason"):  # FTS5's check writes
                    record(f"fts:{table}", None, note="not checked: the store is open read-only"
                           + (f" ({db.read_only_reason})" if db.read_only_reason else ""))
                    continue
                line.show(f"doctor: checking fts:{table} ...")
                try:
                    problem = m.fts_integrity(db, table)
                    fixed = False
                    if problem and fix:
                        m.fts_rebuild(db, table)
                        fixed = m.fts_integrity(db, table) is None
                    record(f"fts:{table}", problem, fixed)
                except Exception as exc:
                    record(f"fts:{table}", f"{type(exc).__name__}: {exc}")
            line.show("doctor: match probe ...")
            try:
                if m.index_ready(db):
                    problem = m.match_probe(db)
                    fixed = False
                    if problem and fix:
                        m.rebuild_message_index(db)
                        fixed = m.match_probe(db) is None
                    record("match_probe", problem, fixed)
            except Exception as exc:
                record("match_probe", f"{type(exc).__name__}: {exc}")
    finally:
        db.close()
    report(checks, as_json)
    sys.exit(0 if all(c["ok"] for c in checks) else 1)


def _check_server(home: Home, fix: bool, record: Callable[..., None]) -> bool | None:
    """The schema checks of a PostgreSQL store (version, missing objects; ``fix`` re-runs the
    migrations); False when the rest of the checks cannot run, None when the database holds no
    store yet (nothing of ours, nothing else): like an absent SQLite file, it is left as it is
    (the rest of doctor would create the whole store while reporting it missing)."""
    from hermes_store import dbhealth

    try:
        db = home.open_db(migrate=False)
    except Exception as exc:  # an unreachable server is a finding, not a crash
        record("open", str(exc))
        return False
    try:
        report = dbhealth.pg_inspect(db)
        if report.newer_schema:
            record("schema_version", report.problems[0])
            return False
        if dbhealth.pg_store_absent(db):
            record("store", None, note=f"no store at {db.display_url} yet (it is created by the first write)")
            return None
        # schema, then foreign_objects: the order a SQLite store's checks come in
        _pg_missing_objects(db, report, fix, record)
        _pg_foreign_objects(db, fix, record)
        return True
    finally:
        db.close()


def _pg_missing_objects(db: Any, report: Any, fix: bool, record: Callable[..., None]) -> None:
    """The PostgreSQL side of :func:`_missing_objects`: the schema's missing objects (``fix``
    re-runs the migrations)."""
    from hermes_store import dbhealth

    if not report.missing:
        record("schema", None, schema_version=report.user_version)
        return
    problem = "; ".join(report.problems)
    if not fix:
        record("schema", problem + " (run `hermes-store doctor --fix` to recreate them)")
        return
    try:
        done = dbhealth.pg_repair(db)
        after = dbhealth.pg_inspect(db)
        record("schema", problem, not after.missing, done=done, schema_version=after.user_version)
    except Exception as exc:
        record("schema", f"{problem}; repair failed: {type(exc).__name__}: {exc}")


def _check_file(path: Path, fix: bool, record: Callable[..., None]) -> bool:
    """The file checks of a SQLite store (readable, schema version, missing objects; ``fix``
    salvages a damaged file and recreates missing objects); False when the rest cannot run."""
    from hermes_store import dbhealth

    report = dbhealth.inspect(path)
    if report.not_a_store:  # another program's file, named as the store: check nothing, fix nothing
        record("store", report.problems[0])
        return False
    if report.unavailable:  # the file may be sound: nothing to salvage
        record("readable", report.problems[0])
        return False
    if report.corrupt:
        problem = "; ".join(report.problems[:5])
        if not fix:
            record("readable", problem + " (run `hermes-store doctor --fix` to salvage it)")
            return False
        try:
            salvaged = dbhealth.salvage(path)
        except Exception as exc:  # doctor never crashes: it says what it could not do
            record("salvage", f"{problem}; salvage failed: {type(exc).__name__}: {exc}")
            return False
        copied = ", ".join(f"{t} {c['copied']}" for t, c in salvaged["tables"].items() if c["copied"])
        errors = sum(c["read_errors"] for c in salvaged["tables"].values())
        record("salvage", problem, True, kept_as=salvaged["kept_as"], tables=salvaged["tables"],
               note=f"copied into a fresh store: {copied or 'nothing readable'}; {counted(errors, 'read error')} "
                    f"skipped; the damaged file is kept as {salvaged['kept_as']}")
        report = dbhealth.inspect(path)
    if report.newer_schema:
        record("schema_version", report.problems[0])
        return False
    _missing_objects(path, report, fix, record)
    _foreign_objects(path, report, fix, record)
    return True


def _missing_objects(path: Path, report: Report, fix: bool, record: Callable[..., None]) -> None:
    """Tables, indexes and triggers the migrations create that the file lacks (``fix`` recreates them)."""
    from hermes_store import dbhealth

    if not report.missing:
        record("schema", None)
        return
    problem = ", ".join(f"{kind} {name}" for kind, name in report.missing) + " missing"
    if not fix:
        record("schema", problem)
        return
    try:
        done = dbhealth.repair(path)
        record("schema", problem, not dbhealth.inspect(path).missing, done=done)
    except Exception as exc:
        record("schema", f"{problem}; repair failed: {type(exc).__name__}: {exc}")


def _foreign_objects(path: Path, report: Report, fix: bool, record: Callable[..., None]) -> None:
    """Objects the migrations never create or that differ from theirs (a trigger or view planted
    in a restored file): reported; ``fix`` drops extra triggers and views (tables and indexes
    are left to the user to judge)."""
    from hermes_store import dbhealth
    from hermes_store.db import Database

    if not report.foreign:
        record("foreign_objects", None)
        return
    problem = "; ".join(m.message for m in report.foreign)
    if not fix:
        record("foreign_objects", problem + " (run `hermes-store doctor --fix` to drop extra triggers and views and restore changed triggers and full-text indexes)")
        return
    try:
        done = dbhealth.drop_foreign_objects(path)
        with Database(path, readonly=True) as db:
            left = dbhealth.schema_mismatches(db, missing=False)
    except Exception as exc:  # doctor never crashes: it says what it could not do
        record("foreign_objects", f"{problem}; drop failed: {type(exc).__name__}: {exc}")
        return
    record("foreign_objects", problem, not left, done=done,
           **({"note": "left for you to judge: " + "; ".join(m.message for m in left)} if left else {}))


def _pg_foreign_objects(db: Any, fix: bool, record: Callable[..., None]) -> None:
    """The PostgreSQL side of :func:`_foreign_objects`: objects of the store's schema the
    migrations never create or that differ from theirs; ``fix`` drops extra triggers, views and
    rules (and re-applying the migrations restores a changed function)."""
    from hermes_store import dbhealth

    try:
        found = dbhealth.pg_schema_mismatches(db)
    except Exception as exc:  # doctor never crashes: it says what it could not do
        record("foreign_objects", f"could not compare the schema: {type(exc).__name__}: {exc}")
        return
    if not found:
        record("foreign_objects", None)
        return
    problem = "; ".join(m.message for m in found)
    if not fix:
        record("foreign_objects", problem + " (run `hermes-store doctor --fix` to drop extra triggers and views)")
        return
    try:
        done = dbhealth.pg_drop_foreign_objects(db)
        if any(m.reason == "definition" for m in found):
            done += dbhealth.pg_repair(db)
        left = dbhealth.pg_schema_mismatches(db)
    except Exception as exc:
        record("foreign_objects", f"{problem}; drop failed: {type(exc).__name__}: {exc}")
        return
    record("foreign_objects", problem, not left, done=done,
           **({"note": "left for you to judge: " + "; ".join(m.message for m in left)} if left else {}))


def _report_on(checks: list[dict], as_json: bool, store: dict[str, str] | None = None) -> None:
    """Print the checks (``--json``: ``{"ok", "store", "checks"}``), after the store they are of."""
    if as_json:
        echo_json({"ok": all(c["ok"] for c in checks), **({"store": store} if store else {}), "checks": checks})
        return
    columns = output_columns()  # on a terminal, a long line wraps at words under its text
    lines = [f"store  {store['location']} ({store['engine']})"] if store else []
    for check in checks:
        if check["problem"] is None:
            note = f": {check['note']}" if check.get("note") else ""
            lines.append(style("ok", "green") + f"     {check['check']}{note}")
        elif check["fixed"]:
            lines.append(f"fixed  {check['check']}: {check['problem']}")
            if check.get("note"):
                lines.append(f"       {check['note']}")
        else:
            lines.append(style("FAIL", "red") + f"   {check['check']}: {check['problem']}")
    for line in lines:
        click.echo(fill(line, columns, "", " " * 7))
