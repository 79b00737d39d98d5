"""``hermes-store browse [--port N]`` — look at the store in Datasette (read-only, 127.0.0.1)."""

from __future__ import annotations

import sys

import click

from hermes_store.cli.common import get_home


@click.command("browse")
@click.option("--port", type=click.IntRange(0, 65535), default=8001, show_default=True,
              help="Port on 127.0.0.1 (0 picks a free one).")
@click.pass_context
def browse(ctx: click.Context, port: int) -> None:
    """Serve the store in Datasette: full-text search on messages and facts, canned queries.

    Read-only and bound to 127.0.0.1, and only for you: open the printed URL (it carries this
    run's token; requests without it, or with another Host, are refused). Needs the `browse`
    extra: pip install 'hermes_store[browse]'.
    """
    from hermes_store.browse import BrowseUnavailable, prepare, run

    try:
        path = prepare(get_home(ctx))

        def announce(url: str) -> None:
            click.echo(f"Serving {path} read-only; open {url} (Ctrl-C stops)", err=True)

        code = run(get_home(ctx), port, announce)
    except BrowseUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    sys.exit(code)
