"""``hermes-store doctor [--fix]``: check the store database and its full-text indexes."""

from __future__ import annotations

import sys

import click

from hermes_store.cli.common import echo_json, get_home
from hermes_store.cli.style import StatusLine, style


@click.command("doctor")
@click.option("--fix", is_flag=True, help="Rebuild full-text indexes that fail their checks.")
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
    try:
        db = home.open_db()
    except Exception as exc:
        record("open", str(exc))
        _report(checks, as_json)
        sys.exit(1)
    try:
        with StatusLine() as line:  # progress on a terminal's stderr only
            line.show("doctor: integrity_check ...")
            problems = m.integrity_check(db)
            record("integrity_check", "; ".join(problems[:5]) if problems else None)
            for table in m.fts_tables(db):
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
    _report(checks, as_json)
    sys.exit(0 if all(c["ok"] for c in checks) else 1)


def _report(checks: list[dict], as_json: bool) -> None:
    if as_json:
        echo_json({"ok": all(c["ok"] for c in checks), "checks": checks})
        return
    for check in checks:
        if check["problem"] is None:
            click.echo(style("ok", "green") + f"     {check['check']}")
        elif check["fixed"]:
            click.echo(f"fixed  {check['check']}: {check['problem']}")
            if check.get("note"):
                click.echo(f"       {check['note']}")
        else:
            click.echo(style("FAIL", "red") + f"   {check['check']}: {check['problem']}")
