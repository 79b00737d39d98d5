"""``hermes-store backup DEST`` and ``hermes-store restore SRC`` (consistent while writers run)."""

from __future__ import annotations

import click

from hermes_store.backup import backup as backup_store
from hermes_store.backup import restore as restore_store
from hermes_store.cli.common import echo_json, get_home
from hermes_store.cli.style import StatusLine


@click.command("backup")
@click.argument("dest", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def backup(ctx: click.Context, dest: str, as_json: bool) -> None:
    """Copy the store's database to DEST (a file, or a directory for a time-stamped file).

    Uses SQLite's online backup: one consistent snapshot even while agents write.
    MEMORY.md / USER.md are plain files: copy them as they are.
    """
    with StatusLine() as line:  # on a terminal's stderr only
        line.show(f"Backing up {get_home(ctx).db_path} ...")
        result = backup_store(get_home(ctx).db_path, dest)
    if as_json:
        echo_json({"success": True, **result})
        return
    click.echo(f"backed up {result['pages']:,} pages ({result['bytes']:,} bytes, schema "
               f"{result['schema_version']}) to {result['backup']}")


@click.command("restore")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Restore even over a store that changed after the backup.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def restore(ctx: click.Context, source: str, force: bool, as_json: bool) -> None:
    """Replace the store's database by the backup SOURCE (the current one is kept beside it)."""
    result = restore_store(get_home(ctx).db_path, source, force=force)
    if as_json:
        echo_json({"success": True, **result})
        return
    kept = f"; the previous database is kept as {result['previous_kept_as']}" if result["previous_kept_as"] else ""
    click.echo(f"restored {result['database']} from {result['restored']}{kept}")
