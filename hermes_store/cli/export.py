"""``hermes-store sessions export``: a stored session back as Markdown or JSONL."""

from __future__ import annotations

from pathlib import Path

import click

from hermes_store.cli.common import fail, get_home
from hermes_store.fsutil import atomic_write_text


@click.command("export")
@click.argument("session_id")
@click.option("--format", "fmt", type=click.Choice(["md", "jsonl"]), default="md", show_default=True)
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None,
              help="Write to this file (atomically) instead of standard output.")
@click.pass_context
def export(ctx: click.Context, session_id: str, fmt: str, output: Path | None) -> None:
    """Give back the whole of session SESSION_ID (a unique prefix will do): every message,
    tool call and tool result, even when its source file is gone."""
    from hermes_store.sessions.export import export_session
    from hermes_store.sessions.live import SessionIndex

    with get_home(ctx).open_reader() as db, SessionIndex(db) as index:  # a read: never makes a store
        matches = index.resolve_id(session_id)
        if len(matches) != 1:
            fail(f"session id prefix {session_id!r} is ambiguous" if matches
                 else f"session not found: {session_id}")
        pieces = export_session(index.storage, matches[0], fmt)
        if output is None:
            for piece in pieces:
                click.echo(piece, nl=False)
        else:
            atomic_write_text(output, "".join(pieces))
