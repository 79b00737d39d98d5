"""``hermes-store tui`` — search all your agents' past as you type (needs the ``tui`` extra)."""

from __future__ import annotations

import sys

import click

from hermes_store.cli.common import fail, store_home


@click.command("tui")
@click.option("--query", "-q", default="", help="Start with this query in the search box.")
@click.pass_context
def tui(ctx: click.Context, query: str) -> None:
    """Interactive search over every indexed session, facts and memory (keyboard only)."""
    try:
        from hermes_store.tui.app import SearchApp
        from hermes_store.tui.backend import StoreView
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("textual", "rich"):
            raise
        fail("the TUI needs Textual, the tui extra: pip install -e '.[tui]' in a clone")
        return
    home = store_home(ctx)  # a bad store URL fails here, one line and exit 1, before the screen opens
    terminal = sys.stdin.isatty() and sys.__stderr__ is not None and sys.__stderr__.isatty()
    if not terminal:
        fail("hermes-store tui needs a terminal (stdin and stderr are not one); "
             "in a script use `hermes-store sessions search QUERY`")
        return
    store = StoreView(home)
    # a store that cannot be opened (a server that does not answer, a damaged file) fails here as
    # every command does, one line and exit 1 (the group reports it), not as a screen to quit
    store.db()
    SearchApp(home, query=query, store=store).run()
