"""``hermes-store sessions watch``: index transcripts as agents write them."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import click

from hermes_store.cli.common import counted, get_home


@click.command("watch")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--discover", is_flag=True,
              help="Also watch every known agent location found on this machine (see 'sessions sources').")
@click.option("--poll", is_flag=True, help="Poll instead of using file-system events.")
@click.option("--interval", type=click.FloatRange(0.05, 3600), default=0.5, show_default=True,
              help="Seconds between looks when polling.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing per round.")
@click.pass_context
def watch(ctx: click.Context, paths: tuple[Path, ...], discover: bool, poll: bool, interval: float,
          quiet: bool) -> None:
    """Index PATHS now and again whenever they change (appends, new files, rotation).

    Runs until Ctrl-C (exit 130) or SIGTERM (exit 0); what was committed stays, and the next
    run resumes where this one stopped.
    """
    from hermes_store.sessions.watch import RETRY_SECONDS, Watcher

    if not paths and not discover:
        raise click.UsageError("give PATHS to watch, or --discover (or both)")
    home = get_home(ctx)
    watched: list[Path] = list(paths)
    if discover:
        from hermes_store.sessions.discovery import find_sources

        for location in find_sources(None, Path.home(), Path(home.root)):
            if location.exists and Path(location.root) not in watched:
                watched.append(Path(location.root))
    if not watched:
        raise click.UsageError("nothing to watch: no agent locations found on this machine")

    def report(changed: list[Path], summary: Any) -> None:
        if quiet or not (summary.messages_added or summary.errors):
            return
        click.echo(f"indexed {counted(summary.messages_added, 'message')} "
                   f"({counted(summary.sessions_added, 'new session')})"
                   f" from {counted(summary.files, 'file')}", err=True)  # read, not paths watched
        for error in summary.errors:
            where = error["path"] + (f":{error['line']}" if error["line"] is not None else "")
            click.echo(f"  {where}: {error['error']}", err=True)

    embedder = _background_embedder(home, quiet)

    unreachable: list[str] = []  # the last error while the store could not be reached

    def on_unavailable(exc: Exception) -> None:
        if not unreachable or unreachable[-1] != str(exc):  # one line per new error, not per retry
            click.echo(f"store unavailable, retrying every {RETRY_SECONDS:g}s: {exc}", err=True)
        unreachable[:] = [str(exc)]

    def on_round(changed: list[Path], summary: Any) -> None:
        if unreachable:
            click.echo("store reachable again: indexing resumed", err=True)
            unreachable.clear()
        report(changed, summary)
        if embedder is not None and (summary.messages_added or summary.messages_updated):
            embedder.schedule()  # embeds on its own thread: the next round does not wait

    db = home.open_db()
    watcher = Watcher(db, watched, poll=poll, interval=interval, on_round=on_round,
                      on_unavailable=on_unavailable)
    if embedder is not None:
        embedder.schedule()
    previous = signal.signal(signal.SIGTERM, lambda *_: watcher.stop())
    try:
        if not quiet:
            click.echo(f"watching {counted(len(watched), 'path')} ({watcher.mode}); Ctrl-C to stop", err=True)
        watcher.run()
    except KeyboardInterrupt:
        click.echo("stopped: committed batches are kept", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if embedder is not None:
            embedder.close()
        db.close()


def _background_embedder(home: Any, quiet: bool) -> Any:
    """The background embedder when config.yaml sets ``semantic.model`` (None otherwise, or
    when the semantic extra is missing: the watch then only indexes, and says why)."""
    from hermes_store.sessions.embeddings import (
        SemanticUnavailable,
        configured_model,
        configured_roles,
        load_embedder,
    )
    from hermes_store.sessions.vectors import BackgroundEmbedder, VectorStore

    config = home.config()
    model = configured_model(config)
    if model is None:
        return None
    try:
        embedder = load_embedder(model)
    except SemanticUnavailable as exc:
        if not quiet:
            click.echo(f"semantic.model is set but not used: {exc}", err=True)
        return None
    return BackgroundEmbedder(
        home.open_db, VectorStore.for_home(home), embedder, roles=configured_roles(config)
    )
