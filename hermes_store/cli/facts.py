"""``hermes-store facts``: the fact store from the command line (same engine as the tools).

Every command accepts ``--json`` and prints the exact reply of the
corresponding ``fact_store``/``fact_feedback`` tool call; without it a short
human-readable listing is printed. Failures exit with status 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from hermes_store.cli.common import (
    bold_terms,
    counted,
    echo_error,
    echo_json,
    fail,
    get_home,
    model_facing,
    open_facts,
)
from hermes_store.cli.style import fill, output_columns
from hermes_store.db import DatabaseError
from hermes_store.facts.config import load_fact_config
from hermes_store.facts.fact_tools import (
    CATEGORIES,
    MAX_LIMIT,
    answered_without_a_store,
    run_fact_feedback,
    run_fact_store,
)
from hermes_store.facts.shown import mark_reply
from hermes_store.facts.store import FactStore, FactStoreError
from hermes_store.home import ConfigError
from hermes_store.tooling import ToolArgumentError

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print the tool's JSON reply.")
CATEGORY_OPTION = click.option("--category", default=None,
                               help=f"Category ({', '.join(CATEGORIES)} or your own).")
LIMIT_OPTION = click.option("--limit", type=click.IntRange(1, MAX_LIMIT), default=10, show_default=True,
                            help=f"Maximum results (1-{MAX_LIMIT}, as the fact_store tool).")


def _run(ctx: click.Context, runner: Callable[[dict[str, Any], FactStore], dict[str, Any]],
         args: dict[str, Any], as_json: bool, render: Callable[[dict[str, Any]], None],
         refused: Callable[[dict[str, Any]], str | None] = lambda reply: None) -> None:
    """Run the tool call ``args`` and print its reply (``render``, or the JSON); exit 1 when it
    failed or ``refused(reply)`` names why nothing was done, with ``--json`` too: the tool's own
    reply says ``success: true`` then, as Hermes' does (`removed: false`), and the command's JSON
    says ``success: false`` with the reason as ``error`` (docs/cli.md, "Exit codes")."""
    home = get_home(ctx)
    try:
        store = open_facts(home, reads=answered_without_a_store(args), config=load_fact_config(home))
    except ConfigError as exc:
        fail(str(exc))  # a bad config value: a failure (1), not a usage error
        return
    try:
        reply = runner({k: v for k, v in args.items() if v is not None}, store)
    except ToolArgumentError as exc:
        reply = {"success": False, "error": str(exc)}
    finally:
        store.close()
    reply = mark_reply(reply)  # the stored text unchanged, a fact the threat scan flags marked
    reason = str(reply.get("error")) if reply.get("success") is False else refused(reply)
    if as_json:
        echo_json(reply if reason is None else {**reply, "success": False, "error": reason})
        if reason is not None:
            echo_error(str(reason))  # as fail() does for every other --json failure
            ctx.exit(1)
        return
    if reason is not None:
        fail(reason)
    render(reply)


def _fact_line(fact: dict[str, Any], query: str | None = None) -> str:
    # labelled as recall labels them ("trust 0.55"): a bare "[0.50]" told a newcomer nothing
    score = f", score {fact['score']:.3f}" if fact.get("score") is not None else ""
    ents = f"  [{', '.join(fact['entities'])}]" if fact.get("entities") else ""
    flagged = f"[flagged: {', '.join(fact['flagged'])}] " if fact.get("flagged") else ""
    content = bold_terms(fact["content"], query) if query else fact["content"]
    return f"#{fact['fact_id']} (trust {float(fact['trust_score']):.2f}{score}) {flagged}{content}{ents}"


def _render_results(reply: dict[str, Any], query: str | None = None) -> None:
    """The facts of ``reply``, one a line; the words ``query`` matched bold (a terminal only)."""
    results = reply.get("results", reply.get("facts", []))
    if not results:
        click.echo("No facts found.")
    columns = output_columns()  # on a terminal, a long fact wraps at words, indented
    for fact in results:
        click.echo(fill(_fact_line(fact, query), columns, "", "    "))


def _render_pairs(reply: dict[str, Any]) -> None:
    if reply.get("query_note"):
        click.echo(f"note: {reply['query_note']}", err=True)
    if not reply["results"]:
        click.echo("No contradictions found.")
    for pair in reply["results"]:
        click.echo(f"{pair['contradiction_score']:.2f}  #{pair['fact_a']['fact_id']} "
                   f"{pair['fact_a']['content']}\n      #{pair['fact_b']['fact_id']} {pair['fact_b']['content']}")


@click.group("facts")
def facts() -> None:
    """The fact store: facts with entities, trust scores and HRR vectors."""


@facts.command("add")
@click.argument("content")
@CATEGORY_OPTION
@click.option("--tags", default=None, help="Comma-separated tags.")
@click.option("--entity", "entities", multiple=True, help="Link this entity too (repeatable).")
@JSON_OPTION
@click.pass_context
def add(ctx: click.Context, content: str, category: str | None, tags: str | None,
        entities: tuple[str, ...], as_json: bool) -> None:
    """Store CONTENT as a fact (a duplicate reports the existing id)."""
    _run(ctx, run_fact_store, {"action": "add", "content": content, "category": category, "tags": tags,
                               "entities": list(entities) or None}, as_json,
         lambda r: click.echo(f"#{r['fact_id']} {r['status']}"))


@facts.command("search")
@click.argument("query")
@CATEGORY_OPTION
@click.option("--min-trust", type=float, default=None, help="Minimum trust (default: config, 0.3).")
@LIMIT_OPTION
@JSON_OPTION
@click.pass_context
@model_facing
def search(ctx: click.Context, query: str, category: str | None, min_trust: float | None, limit: int,
           as_json: bool) -> None:
    """Facts matching QUERY, ranked by relevance × trust."""
    _run(ctx, run_fact_store, {"action": "search", "query": query, "category": category,
                               "min_trust": min_trust, "limit": limit}, as_json,
         lambda reply: _render_results(reply, query))


def _entity_command(action: str, doc: str) -> click.Command:
    @click.argument("entity")
    @CATEGORY_OPTION
    @LIMIT_OPTION
    @JSON_OPTION
    @click.pass_context
    @model_facing
    def command(ctx: click.Context, entity: str, category: str | None, limit: int, as_json: bool) -> None:
        _run(ctx, run_fact_store, {"action": action, "entity": entity, "category": category,
                                   "limit": limit}, as_json, _render_results)

    command.__doc__ = doc
    return facts.command(action)(command)


probe = _entity_command("probe", "Every fact about ENTITY (name or alias).")
related = _entity_command("related", "Facts connecting ENTITY to other entities, then its neighbours' facts.")


@facts.command("reason")
@click.argument("entities", nargs=-1, required=True)
@CATEGORY_OPTION
@LIMIT_OPTION
@JSON_OPTION
@click.pass_context
@model_facing
def reason(ctx: click.Context, entities: tuple[str, ...], category: str | None, limit: int,
           as_json: bool) -> None:
    """Facts in which all ENTITIES occur together (then chains through a shared entity)."""
    _run(ctx, run_fact_store, {"action": "reason", "entities": list(entities), "category": category,
                               "limit": limit}, as_json, _render_results)


@facts.command("contradict")
@CATEGORY_OPTION
@LIMIT_OPTION
@JSON_OPTION
@click.pass_context
@model_facing
def contradict(ctx: click.Context, category: str | None, limit: int, as_json: bool) -> None:
    """Pairs of facts with the same subject and relation but different values."""
    _run(ctx, run_fact_store, {"action": "contradict", "category": category, "limit": limit},
         as_json, _render_pairs)


@facts.command("update")
@click.argument("fact_id", type=int)
@click.option("--content", default=None, help="New content.")
@CATEGORY_OPTION
@click.option("--tags", default=None, help="New comma-separated tags.")
@click.option("--trust-delta", type=float, default=None, help="Add this to the trust (clamped to [0, 1]).")
@JSON_OPTION
@click.pass_context
def update(ctx: click.Context, fact_id: int, content: str | None, category: str | None,
           tags: str | None, trust_delta: float | None, as_json: bool) -> None:
    """Edit fact FACT_ID."""
    _run(ctx, run_fact_store, {"action": "update", "fact_id": fact_id, "content": content,
                               "category": category, "tags": tags, "trust_delta": trust_delta},
         as_json, lambda reply: click.echo(f"#{fact_id} updated"),
         refused=lambda reply: None if reply["updated"] else f"fact_id {fact_id} not found")


@facts.command("remove")
@click.argument("fact_id", type=int)
@JSON_OPTION
@click.pass_context
def remove(ctx: click.Context, fact_id: int, as_json: bool) -> None:
    """Delete fact FACT_ID."""
    _run(ctx, run_fact_store, {"action": "remove", "fact_id": fact_id}, as_json,
         lambda reply: click.echo(f"#{fact_id} removed"),
         refused=lambda reply: None if reply["removed"] else f"fact_id {fact_id} not found")


@facts.command("list")
@CATEGORY_OPTION
@click.option("--min-trust", type=float, default=None, help="Minimum trust (default 0).")
@LIMIT_OPTION
@JSON_OPTION
@click.pass_context
@model_facing
def list_(ctx: click.Context, category: str | None, min_trust: float | None, limit: int,
          as_json: bool) -> None:
    """Facts by trust, highest first."""
    _run(ctx, run_fact_store, {"action": "list", "category": category, "min_trust": min_trust,
                               "limit": limit}, as_json, _render_results)


@facts.command("feedback")
@click.argument("action", type=click.Choice(["helpful", "unhelpful"]))
@click.argument("fact_id", type=int)
@JSON_OPTION
@click.pass_context
def feedback(ctx: click.Context, action: str, fact_id: int, as_json: bool) -> None:
    """Rate fact FACT_ID helpful (+0.05) or unhelpful (−0.10)."""
    _run(ctx, run_fact_feedback, {"action": action, "fact_id": fact_id}, as_json,
         lambda r: click.echo(f"#{r['fact_id']} trust {r['old_trust']:.2f} -> {r['new_trust']:.2f} "
                              f"(helpful {r['helpful_count']})"))


@facts.command("entities")
@click.option("--limit", type=int, default=100, show_default=True, help="Maximum entities.")
@JSON_OPTION
@click.pass_context
@model_facing
def entities(ctx: click.Context, limit: int, as_json: bool) -> None:
    """Known entities with their aliases and how many facts mention them."""
    home = get_home(ctx)
    with open_facts(home, reads=True, config=_config(home)) as store:
        rows = store.list_entities(limit=limit)
    if as_json:
        echo_json({"success": True, "entities": rows, "count": len(rows)})
        return
    if not rows:
        click.echo("No entities.")
    for row in rows:
        aliases = f" (aka {', '.join(row['aliases'])})" if row["aliases"] else ""
        click.echo(f"{row['name']}{aliases}: {counted(row['fact_count'], 'fact')}")


@facts.command("alias")
@click.argument("entity")
@click.argument("alias")
@JSON_OPTION
@click.pass_context
def alias(ctx: click.Context, entity: str, alias: str, as_json: bool) -> None:
    """Record ALIAS as another name of ENTITY (probe/reason/search then resolve it)."""
    home = get_home(ctx)
    with FactStore(home.ensure(), config=_config(home)) as store:
        added = store.add_alias(entity, alias)
        found = store.resolve_entity(entity)
    reply = {"success": added, "entity": found["name"] if found else entity, "alias": alias}
    if not added:
        reply["error"] = f"alias {alias!r} is already a name or alias of an entity"
    if as_json:
        echo_json(reply)
        if not added:
            ctx.exit(1)
        return
    if not added:
        fail(reply["error"])
    click.echo(f"{reply['entity']} aka {alias}")


def _config(home):
    try:
        return load_fact_config(home)
    except ConfigError as exc:
        fail(str(exc))  # a bad config value: a failure (1), not a usage error
        raise


@facts.command("import-hermes")
@click.argument("path", required=False, type=click.Path(dir_okay=False))
@JSON_OPTION
@click.pass_context
def import_hermes(ctx: click.Context, path: str | None, as_json: bool) -> None:
    """Copy facts from a Hermes holographic store (default: <home>/memory_store.db)."""
    home = get_home(ctx)
    source = path or str(home.root / "memory_store.db")
    try:
        with FactStore(home.ensure(), config=_config(home)) as store:
            counts = store.import_hermes(source)
    except (FactStoreError, DatabaseError) as exc:
        fail(str(exc))  # with --json, also {"success": false, ...} on stdout
        return
    if as_json:
        echo_json({"success": True, **counts})
        return
    click.echo(f"imported {counted(counts['imported'], 'fact')} keeping their ids, skipped {counts['skipped']} already "
               f"stored, {counts['renumbered']} given a new id (theirs was taken), "
               f"{counts['entities']} entities kept with their ids")
    for reason in counts.get("blocked_reasons", []):
        click.echo(f"not imported: {reason}", err=True)


def _add_portable_commands() -> None:
    from hermes_store.cli.facts_portable import export, import_

    facts.add_command(export)
    facts.add_command(import_)


_add_portable_commands()
