"""``hermes-store doctor [--fix]``: check the store database and its full-text indexes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_store.cli.common import echo_json, get_home

if TYPE_CHECKING:
    from hermes_store.dbhealth import Report


@click.command("doctor")
@click.option("--fix", is_flag=True, help="Rebuild full-text indexes that fail their checks; drop triggers "
              "and views the hermes_store schema does not have.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.pass_context
def doctor(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """PRAGMA integrity_check, FTS5 integrity-check of every index, and a MATCH+snippet probe.

    Exit 0 when everything passes (after --fix), 1 otherwise.
    """
    from hermes_store import dbhealth
    from hermes_store.sessions import maintenance as m

    checks: list[dict] = []

    def record(name: str, problem: str | None, fixed: bool = False, **extra: object) -> None:
        checks.append({"check": name, "ok": problem is None or fixed,
                       "problem": problem, "fixed": fixed, **extra})

    home = get_home(ctx)
    report = dbhealth.inspect(home.db_path)
    if report.corrupt:
        problem = "; ".join(report.problems[:5])
        if fix:
            try:
                salvaged = dbhealth.salvage(home.db_path)
                copied = ", ".join(f"{t} {c['copied']}" for t, c in salvaged["tables"].items() if c["copied"])
                errors = sum(c["read_errors"] for c in salvaged["tables"].values())
                record("salvage", problem, True, kept_as=salvaged["kept_as"], tables=salvaged["tables"],
                       note=f"copied into a fresh store: {copied or 'nothing readable'}; {errors} read error(s) "
                            f"skipped; the damaged file is kept as {salvaged['kept_as']}")
            except Exception as exc:  # doctor never crashes: it says what it could not do
                record("salvage", f"{problem}; salvage failed: {type(exc).__name__}: {exc}")
                _report(checks, as_json)
                sys.exit(1)
            report = dbhealth.inspect(home.db_path)
        else:
            record("readable", problem + " (run `hermes-store doctor --fix` to salvage it)")
            _report(checks, as_json)
            sys.exit(1)
    if report.newer_schema:
        record("schema_version", report.problems[0])
        _report(checks, as_json)
        sys.exit(1)
    if report.missing:
        problem = ", ".join(f"{kind} {name}" for kind, name in report.missing) + " missing"
        fixed = False
        if fix:
            try:
                done = dbhealth.repair(home.db_path)
                fixed = not dbhealth.inspect(home.db_path).missing
                record("schema", problem, fixed, done=done)
            except Exception as exc:
                record("schema", f"{problem}; repair failed: {type(exc).__name__}: {exc}")
        else:
            record("schema", problem)
    else:
        record("schema", None)
    _foreign_objects(home.db_path, report, fix, record)
    try:
        db = home.open_db()
    except Exception as exc:
        record("open", str(exc))
        _report(checks, as_json)
        sys.exit(1)
    try:
        problems = m.integrity_check(db)
        record("integrity_check", "; ".join(problems[:5]) if problems else None)
        for table in m.fts_tables(db):
            try:
                problem = m.fts_integrity(db, table)
                fixed = False
                if problem and fix:
                    m.fts_rebuild(db, table)
                    fixed = m.fts_integrity(db, table) is None
                record(f"fts:{table}", problem, fixed)
            except Exception as exc:
                record(f"fts:{table}", f"{type(exc).__name__}: {exc}")
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
    _report(checks, as_json)
    sys.exit(0 if all(c["ok"] for c in checks) else 1)


def _foreign_objects(path: Path, report: Report, fix: bool, record: Callable[..., None]) -> None:
    """Objects the migrations never create (a trigger or view planted in a restored file):
    reported; ``--fix`` drops extra triggers and views (tables and indexes are left to the user)."""
    if not report.foreign:
        record("foreign_objects", None)
        return
    from hermes_store import dbhealth

    problem = "; ".join(m.message for m in report.foreign)
    if not fix:
        record("foreign_objects", problem)
        return
    try:
        done = dbhealth.drop_foreign_objects(path)
    except Exception as exc:  # doctor never crashes: it says what it could not do
        record("foreign_objects", f"{problem}; drop failed: {type(exc).__name__}: {exc}")
        return
    with dbhealth.Database(path, readonly=True) as db:
        left = dbhealth.schema_mismatches(db, missing=False)
    record("foreign_objects", problem, not left, done=done,
           **({"note": "left for you to judge: " + "; ".join(m.message for m in left)} if left else {}))


def _report(checks: list[dict], as_json: bool) -> None:
    if as_json:
        echo_json({"ok": all(c["ok"] for c in checks), "checks": checks})
        return
    for check in checks:
        if check["problem"] is None:
            click.echo(f"ok     {check['check']}")
        elif check["fixed"]:
            click.echo(f"fixed  {check['check']}: {check['problem']}")
            if check.get("note"):
                click.echo(f"       {check['note']}")
        else:
            click.echo(f"FAIL   {check['check']}: {check['problem']}")
