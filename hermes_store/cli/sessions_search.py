"""``hermes-store sessions search QUERY`` — message-level search over past sessions."""

from __future__ import annotations

import click

from hermes_store import timeutil
from hermes_store.cli.common import echo_json, fail, get_home, model_facing, nothing_indexed_note
from hermes_store.cli.style import fill, output_columns, style_marks
from hermes_store.sessions.live import SessionIndex
from hermes_store.sessions.search import (
    SORTS,
    SearchError,
    SearchResult,
    search_messages,
    unknown_roles_problem,
)


def _check_sources(known: list[str], *given: list[str] | None) -> None:
    """A usage error naming the valid sources when a ``--source`` is not one of them."""
    unknown = [s for values in given for s in (values or []) if s not in known]
    if unknown:
        valid = ", ".join(known) if known else "none: no sessions are indexed"
        raise click.BadParameter(f"unknown source {', '.join(map(repr, unknown))} (valid: {valid})",
                                 param_hint="'--source'")


#: how each time bound of ``sessions search`` is read: a message's time (since/until) or a
#: session's start, as Hermes' ``session_search`` reads it (after/before)
_BOUND_READERS = {"since": timeutil.parse_when, "until": timeutil.parse_when,
                  "after": timeutil.parse_bound, "before": timeutil.parse_bound}


def _check_bounds(**given: str | None) -> None:
    """A usage error naming the option for a time bound that cannot be read, before any store
    is opened: on a home with nothing indexed yet a bad ``--since`` was answered "No matching
    messages." (exit 0) instead of the error the same command gives once sessions exist."""
    for name, value in given.items():
        try:
            _BOUND_READERS[name](value)
        except timeutil.TimeParseError as exc:
            raise click.BadParameter(str(exc), param_hint=f"'--{name}'") from exc


@click.command("search")
@click.argument("query")
@click.option("--limit", "-n", type=click.IntRange(1, 1000), default=20, show_default=True,
              help="Maximum number of messages.")
@click.option("--role", "roles", default=None,
              help="Comma-separated roles, e.g. user,assistant (reasoning is searched only when named).")
@click.option("--source", "sources", multiple=True, help="Only these sources (repeatable or comma-separated).")
@click.option("--exclude-source", "exclude_sources", multiple=True,
              help="Leave out these sources (repeatable or comma-separated).")
@click.option("--since", default=None, help="From this date (YYYY-MM-DD, ISO date-time, epoch, or 7d/5h).")
@click.option("--until", default=None, help="Up to this date (a bare date includes that whole day).")
@click.option("--after", default=None,
              help="Sessions started at or after this (ISO date/datetime, or 7d, 24h, 2w).")
@click.option("--before", default=None, help="Sessions started before this (a bare date is midnight UTC).")
@click.option("--exclude-session", "exclude_sessions", multiple=True,
              help="Leave out this session and its lineage (repeatable).")
@click.option("--sort", type=click.Choice(SORTS), default="relevance", show_default=True)
@click.option("--tool", "tools", multiple=True,
              help="Only calls of these tools and their results, e.g. Bash (repeatable or comma-separated).")
@click.option("--context", "expand_context", is_flag=True,
              help="Also return the neighbours of matching messages (best evidence recall).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@model_facing
def search(ctx: click.Context, query: str, limit: int, roles: str | None, sources: tuple[str, ...],
           exclude_sources: tuple[str, ...], since: str | None, until: str | None, after: str | None,
           before: str | None, exclude_sessions: tuple[str, ...], sort: str, tools: tuple[str, ...],
           expand_context: bool, as_json: bool) -> None:
    """Search past session messages for QUERY (words, "phrases", OR, NOT, prefix*)."""
    home = get_home(ctx)

    def split(values: tuple[str, ...]) -> list[str] | None:
        parts = [p.strip() for v in values for p in v.split(",") if p.strip()]
        return parts or None

    problem = unknown_roles_problem(r.strip() for r in (roles or "").split(",") if r.strip())
    if problem:
        raise click.BadParameter(problem, param_hint="'--role'")
    _check_bounds(since=since, until=until, after=after, before=before)
    known: list[str] = []
    if not home.store_exists():
        result = SearchResult(query, None, [], "empty")
    else:
        db = home.open_db()
        try:
            known = SessionIndex(db).known_sources()
            _check_sources(known, split(sources))  # excluding none is harmless
            result = search_messages(
                db, query, limit=limit, roles=roles, sources=split(sources),
                exclude_sources=split(exclude_sources), since=since, until=until, sort=sort,
                expand_context=expand_context, after=after, before=before,
                exclude_session_ids=split(exclude_sessions), tools=split(tools),
                # shown to a person: the hits are marked in our bold style, whose marks no stored
                # text can hold (a ``>>>`` prompt stays text); --json keeps the >>> <<< marks
                **({} if as_json else {"marks": style_marks("bold")}),
            )
        except SearchError as exc:
            fail(str(exc), 2)
            return
        finally:
            db.close()
    if as_json:
        echo_json(result.to_json())
        return
    if result.note:
        click.echo(fill(f"note: {result.note}", output_columns(err=True), "", "  "), err=True)
    if not result.results:
        click.echo("No matching messages.")
        if not known:  # nothing indexed at all: say where we looked and how to fill it
            click.echo(fill(nothing_indexed_note(home), output_columns(err=True), "", "  "), err=True)
        return
    columns = output_columns()  # on a terminal, lines wrap at words with their indent kept
    for row in result.results:
        title = f" — {row['title']}" if row.get("title") else ""
        click.echo(fill(f"{timeutil.shown_time(row['timestamp'])}  {row['source']}  {row['session_id']}#{row['seq']} "
                        f"[{row['role']}]{title}", columns, "", "    "))
        click.echo(fill(" ".join(str(row["snippet"]).split()), columns, "    "))
