"""``hermes-store recall QUERY`` — one query over memory, user profile, facts and sessions."""

from __future__ import annotations

import click

from hermes_store.cli.common import (
    bold_terms,
    echo_json,
    fail,
    model_facing,
    nothing_indexed_note,
    store_home,
)
from hermes_store.cli.style import fill, output_columns, style, style_marks
from hermes_store.home import ConfigError
from hermes_store.recall import KINDS, RECALL_KINDS, unknown_kinds_problem
from hermes_store.recall import recall as run_recall
from hermes_store.tooling import fence_reply


@click.command("recall")
@click.argument("query")
@click.option("--kinds", default=",".join(KINDS), show_default=True,
              help="Comma-separated kinds to search: memory,user,facts,sessions.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option("--budget", type=click.IntRange(1, None), default=None,
              help="Pack the best results into at most N estimated tokens and print the block.")
@click.option("--since", default=None, help="Only items from this date (ISO date or age like 30d).")
@click.option("--until", default=None, help="Only items up to this date.")
@click.option("--after", default=None,
              help="Past sessions started at or after this (ISO date/datetime, or 7d, 24h, 2w).")
@click.option("--before", default=None,
              help="Past sessions started before this (a bare date is midnight UTC).")
@click.option("--min-trust", type=click.FloatRange(0, 1), default=None, help="Hide facts below this trust.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@model_facing
def recall(ctx: click.Context, query: str, kinds: str, limit: int, budget: int | None, since: str | None,
           until: str | None, after: str | None, before: str | None, min_trust: float | None,
           as_json: bool) -> None:
    """Search built-in memory, the user profile, facts and past sessions at once."""
    wanted = [k.strip() for k in kinds.split(",") if k.strip()]
    problem = unknown_kinds_problem(wanted)
    if problem:
        raise click.BadParameter(problem, param_hint="'--kinds'")  # quoted as click quotes --role
    home = store_home(ctx)  # a bad store setting stops here (exit 1), not as a kind's error
    try:
        # listed for a person: memory and session hits come marked in our bold style, whose marks
        # no stored text can hold (a ``>>>`` prompt stays text); --json and --budget keep >>> <<<
        marks = {} if as_json or budget is not None else {"marks": style_marks("bold")}
        result = run_recall(query, kinds=wanted, limit=limit, budget_tokens=budget, since=since, until=until,
                            min_trust=min_trust, home=home, after=after, before=before, **marks)
    except ValueError as exc:  # a bad --since/--until (a bad config value is a failure, exit 1)
        fail(str(exc), 1 if isinstance(exc, ConfigError) else 2)
    if as_json:
        echo_json(result.to_dict())  # fenced like a tool reply (model_facing) unless --raw
        if result.errors:  # a kind that could not be searched is a failure, not "no results"
            ctx.exit(1)
        return
    if budget is not None:
        click.echo(result.rendered)
        if result.omitted:
            click.echo(f"({len(result.omitted)} more left out by the {budget}-token budget)")
        for kind, error in result.errors.items():
            click.echo(style(f"error: {kind} could not be searched: {error}", "red"), err=True)
        if result.errors:
            ctx.exit(1)
        return
    if not result.results and not result.errors:
        click.echo("No results.")
        if "sessions" in wanted and not home.store_exists():  # a first run: say where we looked
            click.echo(fill(nothing_indexed_note(home), output_columns(err=True), "", "  "), err=True)
    columns = output_columns()  # on a terminal, lines wrap at words with their indent kept
    for kind in RECALL_KINDS:
        items = [it for it in result.results if it.kind == kind.name]
        if not items:
            continue
        click.echo(style(kind.title, "bold", "cyan"))
        for item in items:
            head, body = kind.describe(fence_reply(item.to_dict()))
            click.echo(fill(head + style(f"   [{item.why}]", "dim"), columns, "", "      "))
            body = " ".join(body.split())
            # sessions and memory come marked by the index; a fact is marked here, the same bold
            click.echo(fill(bold_terms(body, query) if kind.name == "facts" else body, columns, "    "))
    for kind, note in result.notes.items():
        click.echo(style(fill(f"note ({kind}): {note}", output_columns(err=True), "", "  "), "dim"), err=True)
    for kind, error in result.errors.items():
        click.echo(style(f"error: {kind} could not be searched: {error}", "red"), err=True)
    if result.errors:
        ctx.exit(1)
