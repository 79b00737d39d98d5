"""``hermes-store sessions embed``: embed indexed messages for semantic search (optional extra)."""

from __future__ import annotations

import time

import click

from hermes_store.cli.common import counted, echo_json, fail, get_home
from hermes_store.cli.style import StatusLine
from hermes_store.sessions.embeddings import (
    SemanticUnavailable,
    configured_model,
    configured_roles,
    load_embedder,
)
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import VectorStore, embed_pending


def time_left(seconds: float) -> str:
    """What the progress line says of the time left: "under a minute left", "about 12 min
    left", "about 11 h 5 min left" (a large store embeds for hours: not "about 665 min")."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute left"
    if minutes < 60:
        return f"about {minutes} min left"
    return f"about {minutes // 60} h {minutes % 60} min left"


@click.command("embed")
@click.option(
    "--model", default=None, help="Model path or name (default: semantic.model of config.yaml)."
)
@click.option(
    "--batch",
    type=click.IntRange(min=1, max=4096),
    default=256,
    show_default=True,
    help="Messages embedded and committed per step.",
)
@click.option(
    "--max",
    "max_messages",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many messages (run again to continue).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def embed(
    ctx: click.Context, model: str | None, batch: int, max_messages: int | None, as_json: bool
) -> None:
    """Embed the messages that have no vector yet (incremental, resumable): the user's, or
    those of the roles semantic.roles of config.yaml names. A message edited since its
    vector was made is embedded again.

    Needs the optional extra: pip install 'hermes_store[semantic]'. session_search fuses
    the semantic ranking in once config.yaml sets semantic.model and vectors exist.
    """
    home = get_home(ctx)
    config = home.config()
    name = model or configured_model(config)
    if not name:
        fail("no model: set semantic.model in config.yaml or pass --model")
    try:
        embedder = load_embedder(name)
    except SemanticUnavailable as exc:
        fail(str(exc))
    if not home.store_exists():
        fail("no session store yet: run 'hermes-store sessions index' first")
    vectors = VectorStore.for_home(home)
    damage = vectors.damage()
    if damage:
        vectors.close()
        fail(damage)
    with home.open_reader() as db, StatusLine() as line:  # progress on a terminal's stderr only
        line.show(f"Embedding: finding the messages without a vector of {embedder.label or embedder.name}")
        began = time.monotonic()

        def progress(done: int, total: int) -> None:
            rate = done / max(time.monotonic() - began, 1e-6)
            left = (total - done) / rate if rate else 0
            line.show(f"Embedding {done:,} / {total:,} messages ({rate:.0f}/s, {time_left(left)})")

        result = embed_pending(
            open_session_storage(db),
            vectors,
            embedder,
            batch=batch,
            max_messages=max_messages,
            roles=configured_roles(config),
            progress=progress,
        )
    result["vectors"] = vectors.count(embedder.name)
    result["model"] = embedder.label or embedder.name
    result["model_name"] = embedder.name  # what the vectors are stored under
    vectors.close()
    if as_json:
        echo_json(result)
        return
    again = f", {result['stale']} edited since their vector was made" if result["stale"] else ""
    click.echo(
        f"Embedded {counted(result['embedded'], 'message')} ({result['pending']} left{again}, "
        f"{counted(result['vectors'], 'vector')} of {result['model']})"
    )
