"""``facts export`` and ``facts import``: the fact store as JSON Lines (every field, ids kept)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hermes_store.cli.common import counted, echo_json, fail, get_home, open_facts
from hermes_store.facts.portable import export_facts, read_export
from hermes_store.facts.store import FactStoreError
from hermes_store.fsutil import atomic_write_text


@click.command("export")
@click.argument("dest", required=False, type=click.Path(dir_okay=False))
@click.pass_context
def export(ctx: click.Context, dest: str | None) -> None:
    """Write every fact and entity as JSON Lines to DEST (default: stdout)."""
    import io

    home = get_home(ctx)
    buffer = io.StringIO()
    with open_facts(home, reads=True) as store:  # a read: a home without a store gets none
        counts = export_facts(store, buffer)
    if dest is None:
        sys.stdout.write(buffer.getvalue())
        return
    atomic_write_text(Path(dest), buffer.getvalue())
    click.echo(f"exported {counted(counts['facts'], 'fact')} and {counted(counts['entities'], 'entity', 'entities')} "
               f"to {dest}", err=True)


@click.command("import")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def import_(ctx: click.Context, source: str, as_json: bool) -> None:
    """Import a `facts export` file: ids kept where free, facts already stored skipped."""
    home = get_home(ctx)
    try:
        rows = read_export(source)  # a file that cannot be read or a bad line: no store made for it
        with open_facts(home, reads=False) as store:
            counts = store.import_rows(source, *rows)
    except FactStoreError as exc:
        fail(str(exc))  # with --json, also {"success": false, ...} on stdout
        return
    if as_json:
        echo_json({"success": True, **counts})
        return
    click.echo(f"imported {counted(counts['imported'], 'fact')}, skipped {counts['skipped']} already stored, "
               f"{counts['renumbered']} given a new id, {counts['entities']} entities kept with their ids")
    for reason in counts.get("blocked_reasons", []):
        click.echo(f"not imported: {reason}", err=True)
