"""``hermes-store migrate --to URL``: copy this store to another engine (ids kept, counts verified)."""

from __future__ import annotations

import click

from hermes_store.cli.common import echo_json, fail, get_home
from hermes_store.cli.style import StatusLine
from hermes_store.db import DatabaseError
from hermes_store.engines import display_url, engine_for_url
from hermes_store.home import Home


def _open_target(home: Home, url: str):
    """The target database (a file or a server, by the engine the URL's scheme chooses)."""
    return Home(home.root, database_url=url, url_option="--to").open_db()


def _copy_vectors(home: Home, target_url: str, line: StatusLine) -> int:
    """Copy the store's message embeddings to the target's (ids are kept, so they still name
    their messages); the source keeps its own."""
    from hermes_store.sessions.storage_vectors import VectorStore

    source, target = VectorStore.for_home(home), VectorStore.for_home(Home(home.root, database_url=target_url))
    try:
        return source.copy_into(target, lambda n: line.show(f"  copied {'vectors':<16} {n:>9,} rows"))
    finally:
        source.close()
        target.close()


@click.command("migrate")
@click.option("--to", "target_url", required=True, metavar="URL",
              help="Where to copy the store: postgresql://user@host/db or sqlite:///path/to/file.db.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def migrate(ctx: click.Context, target_url: str, as_json: bool) -> None:
    """Copy sessions, facts and memory history to another database (SQLite <-> PostgreSQL).

    The source is this home's store (`--database-url` / config choose it). The target must
    be empty; every table's row count is verified before the copy is committed, and ids are
    kept. MEMORY.md / USER.md stay where they are (they are this home's own files).
    """
    from hermes_store.dbcopy import copier

    home = get_home(ctx)
    try:
        source_engine = home.engine
        target_engine = engine_for_url(target_url).name
        if source_engine == target_engine:
            fail(f"the store is already on {source_engine}; --to must name the other engine "
                 "(postgresql://... from SQLite, sqlite:///path from PostgreSQL)", 2)
            return
        if not home.store_exists():  # opening it would create an empty store just to copy nothing
            fail(f"{home.store_location()}: no store to migrate yet (nothing was created there); "
                 "nothing was copied")
            return
        source = home.open_db()
        try:
            target = _open_target(home, target_url)
            try:
                if not as_json:
                    click.echo(f"Copying {source_engine} -> {target_engine} ({display_url(target_url)})")
                with StatusLine() as line:  # progress on a terminal's stderr only
                    def progress(table: str, n: int) -> None:
                        line.show(f"  copied {table:<16} {n:>9,} rows")

                    copy = copier(source_engine, target_engine)
                    report = copy(source, target, progress)
                    vectors = _copy_vectors(home, target_url, line)
            finally:
                target.close()
        finally:
            source.close()
    except (ValueError, DatabaseError) as exc:  # ConfigError and an unknown URL scheme included
        fail(str(exc))
        return
    data = {**report.as_dict(), "vectors": vectors}
    if as_json:
        echo_json(data)
        return
    for table, rows in data["tables"].items():
        click.echo(f"  {table:<16} {rows:>9,} {'row' if rows == 1 else 'rows'}")
    if vectors:
        click.echo(f"  {'vectors':<16} {vectors:>9,} {'row' if vectors == 1 else 'rows'} (the semantic extra's embeddings)")
    click.echo(f"Done: {data['total_rows']:,} rows in {len(data['tables'])} tables, counts verified, "
               f"ids kept ({data['seconds']:.1f}s).")
