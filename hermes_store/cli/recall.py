"""``hermes-store recall QUERY`` — one query over memory, user profile, facts and sessions."""

from __future__ import annotations

import re

import click

from hermes_store.cli.common import echo_json, fail, get_home
from hermes_store.recall import KINDS
from hermes_store.recall import recall as run_recall

_MARK = re.compile(r">>>(.*?)<<<", re.S)
_TITLES = {"memory": "Memory (MEMORY.md)", "user": "User profile (USER.md)", "facts": "Facts", "sessions": "Past sessions"}


def _highlight(text: str) -> str:
    """Turn >>>match<<< markers into bold text (plain when not on a terminal)."""
    return _MARK.sub(lambda m: click.style(m.group(1), bold=True), text)


@click.command("recall")
@click.argument("query")
@click.option("--kinds", default=",".join(KINDS), show_default=True,
              help="Comma-separated kinds to search: memory,user,facts,sessions.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option("--budget", type=click.IntRange(1, None), default=None,
              help="Pack the best results into at most N estimated tokens and print the block.")
@click.option("--since", default=None, help="Only items from this date (ISO date or age like 30d).")
@click.option("--until", default=None, help="Only items up to this date.")
@click.option("--min-trust", type=click.FloatRange(0, 1), default=None, help="Hide facts below this trust.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def recall(ctx: click.Context, query: str, kinds: str, limit: int, budget: int | None, since: str | None,
           until: str | None, min_trust: float | None, as_json: bool) -> None:
    """Search built-in memory, the user profile, facts and past sessions at once."""
    wanted = [k.strip() for k in kinds.split(",") if k.strip()]
    bad = [k for k in wanted if k not in KINDS]
    if bad:
        raise click.BadParameter(f"unknown kind(s) {', '.join(bad)}; choose from {', '.join(KINDS)}",
                                 param_hint="--kinds")
    try:
        result = run_recall(query, kinds=wanted, limit=limit, budget_tokens=budget, since=since, until=until,
                            min_trust=min_trust, home=get_home(ctx))
    except ValueError as exc:
        fail(str(exc), 2)
    if as_json:
        echo_json(result.to_dict())
        if result.errors:  # a kind that could not be searched is a failure, not "no results"
            ctx.exit(1)
        return
    if budget is not None:
        click.echo(result.rendered)
        if result.omitted:
            click.echo(f"({len(result.omitted)} more left out by the {budget}-token budget)")
        for kind, error in result.errors.items():
            click.secho(f"error: {kind} could not be searched: {error}", fg="red", err=True)
        if result.errors:
            ctx.exit(1)
        return
    if not result.results and not result.errors:
        click.echo("No results.")
    for kind in KINDS:
        items = [it for it in result.results if it.kind == kind]
        if not items:
            continue
        click.secho(_TITLES[kind], bold=True, fg="cyan")
        for item in items:
            d = item.to_dict()
            if kind in ("memory", "user"):
                when = d.get("updated_at") or d.get("created_at") or "time unknown"
                head = f"  #{item.id}  ({when})"
                body = d.get("snippet") or d["text"]
            elif kind == "facts":
                head = f"  #{item.id}  trust {d['trust_score']:.2f}, helpful {d.get('helpful_count', 0)}"
                body = d["text"]
            else:
                head = f"  {d['link']} #{item.id}  {d.get('time') or ''} {d.get('role') or ''} {d.get('title') or ''}".rstrip()
                body = d.get("snippet") or ""
            click.echo(head + click.style(f"   [{item.why}]", dim=True))
            click.echo("    " + _highlight(" ".join(body.split())))
    for kind, note in result.notes.items():
        click.secho(f"note ({kind}): {note}", dim=True, err=True)
    for kind, error in result.errors.items():
        click.secho(f"error: {kind} could not be searched: {error}", fg="red", err=True)
    if result.errors:
        ctx.exit(1)
