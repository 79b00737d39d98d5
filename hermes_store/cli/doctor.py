"""``hermes-store doctor [--fix]``: check the store database and its full-text indexes."""

from __future__ import annotations

import sys

import click

from hermes_store.cli.common import echo_json, get_home
from hermes_store.db import DatabaseError


@click.command("doctor")
@click.option("--fix", is_flag=True, help="Rebuild full-text indexes that fail their checks.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.pass_context
def doctor(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """PRAGMA integrity_check, FTS5 integrity-check of every index, and a MATCH+snippet probe.

    Exit 0 when everything passes (after --fix), 1 otherwise.
    """
    from hermes_store.sessions import maintenance as m

    checks: list[dict] = []

    def record(name: str, problem: str | None, fixed: bool = False) -> None:
        checks.append({"check": name, "ok": problem is None or fixed,
                       "problem": problem, "fixed": fixed})

    try:
        db = get_home(ctx).open_db()
    except DatabaseError as exc:
        record("open", str(exc))
        _report(checks, as_json)
        sys.exit(1)
    try:
        problems = m.integrity_check(db)
        record("integrity_check", "; ".join(problems[:5]) if problems else None)
        for table in m.fts_tables(db):
            problem = m.fts_integrity(db, table)
            fixed = False
            if problem and fix:
                m.fts_rebuild(db, table)
                fixed = m.fts_integrity(db, table) is None
            record(f"fts:{table}", problem, fixed)
        if m.index_ready(db):
            problem = m.match_probe(db)
            fixed = False
            if problem and fix:
                m.rebuild_message_index(db)
                fixed = m.match_probe(db) is None
            record("match_probe", problem, fixed)
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
            click.echo(f"ok     {check['check']}")
        elif check["fixed"]:
            click.echo(f"fixed  {check['check']}: {check['problem']}")
        else:
            click.echo(f"FAIL   {check['check']}: {check['problem']}")
