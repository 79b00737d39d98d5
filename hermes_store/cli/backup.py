"""``hermes-store backup DEST`` and ``hermes-store restore SRC`` (consistent while writers run)."""

from __future__ import annotations

import click

from hermes_store.backup import backup_store, restore_store
from hermes_store.cli.common import echo_json, fail, get_home
from hermes_store.cli.style import StatusLine
from hermes_store.db import DatabaseError
from hermes_store.home import ConfigError


@click.command("backup")
@click.argument("dest", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def backup(ctx: click.Context, dest: str, as_json: bool) -> None:
    """Copy the store's database to DEST (a file, or a directory for a time-stamped file).

    One consistent snapshot even while agents write: SQLite's online backup of the file, or
    on PostgreSQL every table read in one REPEATABLE READ snapshot into a SQLite store file.
    MEMORY.md / USER.md are plain files: copy them as they are.
    """
    try:
        with StatusLine() as line:  # on a terminal's stderr only
            line.show(f"Backing up {get_home(ctx).store_location()} ...")
            result = backup_store(get_home(ctx), dest)
    except (ConfigError, DatabaseError) as exc:
        fail(str(exc))  # with --json, also {"success": false, ...} on stdout
        return
    if as_json:
        echo_json({"success": True, **result})
        return
    size = (f"{result['pages']:,} pages" if "pages" in result else f"{result['rows']:,} rows")
    click.echo(f"backed up {size} ({result['bytes']:,} bytes, schema "
               f"{result['schema_version']}) to {result['backup']}")


@click.command("restore")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Restore even over a store that changed after the backup.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def restore(ctx: click.Context, source: str, force: bool, as_json: bool) -> None:
    """Replace the store's database by the backup SOURCE (a SQLite file's current copy is kept
    beside it; a PostgreSQL store is replaced in one transaction, counts verified)."""
    try:
        result = restore_store(get_home(ctx), source, force=force)
    except (ConfigError, DatabaseError) as exc:
        fail(str(exc))  # with --json, also {"success": false, ...} on stdout
        return
    if as_json:
        echo_json({"success": True, **result})
        return
    kept = f"; the previous database is kept as {result['previous_kept_as']}" if result["previous_kept_as"] else ""
    click.echo(f"restored {result['database']} from {result['restored']}{kept}")

