"""The embeddings of what a command removes go with it (both engines, a small deterministic
embedder: no model needed)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.sessions.vectors import VectorStore
from tests.sessions.test_sess_semantic import _index
from tests.sessions.test_sess_semantic_location import _count, _embed

pytestmark = pytest.mark.usefixtures("engine")
OLD = {"s-old1": ["hiking a mountain trail", "ok"], "s-old2": ["filing a tax return", "ok"]}


def test_sessions_prune_drops_the_vectors_of_what_it_deletes(home):
    """``sessions prune`` deleted whole sessions but kept their vectors (``status`` still
    counted them as embedded, and the vector file kept them) until the next ``embed``, unlike
    ``sessions delete`` and ``forget``."""
    _index(home, OLD)  # sessions of 2023
    assert _embed(home)["embedded"] == 2
    dry = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "prune", "--older-than", "1d",
                                   "--dry-run", "--json"])
    assert json.loads(dry.output)["count"] == 2 and _count(home) == 2  # a dry run removes nothing
    out = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "prune", "--older-than", "1d", "--json"])
    assert out.exit_code == 0, out.output
    assert sorted(json.loads(out.output)["sessions"]) == ["s-old1", "s-old2"]
    assert _count(home) == 0
    vectors = VectorStore.for_home(home)
    try:
        assert vectors.rows_store.message_ids() == []
    finally:
        vectors.close()


def _embed_with(home, name: str, roles: tuple[str, ...] = ("user",)) -> dict:
    from hermes_store.sessions.embeddings import Embedder
    from hermes_store.sessions.storage import open_session_storage
    from hermes_store.sessions.vectors import embed_pending
    from tests.sessions.test_sess_semantic_stale import _words

    vectors, db = VectorStore.for_home(home), home.open_db()
    try:
        return embed_pending(open_session_storage(db), vectors, Embedder(name, 32, _words), roles=roles)
    finally:
        db.close()
        vectors.close()


def _counts(home, *models: str) -> list[int]:
    vectors = VectorStore.for_home(home)
    try:
        return [vectors.count(model) for model in models]
    finally:
        vectors.close()


def test_a_second_model_keeps_the_first_models_vectors(home):
    """The vectors were keyed by the message alone: embedding with a second model (trying
    bge-small-en, another home on the same store) replaced every vector of the first, so going
    back embedded everything again. Each model keeps its own now, and one model's embed with
    fewer roles prunes only its own."""
    _index(home, OLD)
    assert _embed_with(home, "model-a", ("user", "assistant"))["embedded"] == 4
    assert _embed_with(home, "model-b")["embedded"] == 2
    assert _counts(home, "model-a", "model-b") == [4, 2]
    assert _embed_with(home, "model-a", ("user", "assistant")) == {"embedded": 0, "pending": 0, "pruned": 0, "stale": 0}
    assert _embed_with(home, "model-b") == {"embedded": 0, "pending": 0, "pruned": 0, "stale": 0}
    assert _embed_with(home, "model-a")["pruned"] == 2  # its own assistant vectors, not b's
    assert _counts(home, "model-a", "model-b") == [2, 2]
    out = CliRunner().invoke(cli, ["--home", str(home.root), "forget", "--session", "s-old1"])
    assert out.exit_code == 0, out.output
    assert _counts(home, "model-a", "model-b") == [1, 1]  # forget takes every model's


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_a_vector_file_keyed_by_message_is_rekeyed_with_its_vectors(home):
    """A ``session_vectors.db`` of an older version (keyed by the message) is rebuilt keyed by
    message and model on its first write-capable open, every vector kept."""
    import apsw

    from hermes_store.sessions.storage_vectors_sql import VECTORS_FILENAME

    _index(home, OLD)
    with home.open_db() as db:
        users = [(r["id"], r["session_id"], r["seq"]) for r in
                 db.query("SELECT id, session_id, seq FROM messages WHERE role = 'user' ORDER BY id")]
    conn = apsw.Connection(str(home.root / VECTORS_FILENAME))  # the old layout, with model-a's two
    conn.execute("CREATE TABLE vectors (message_id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
                 " seq INTEGER NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL, text_hash TEXT);"
                 "CREATE TABLE vector_log (n INTEGER PRIMARY KEY, model TEXT NOT NULL, message_id INTEGER NOT NULL);"
                 "CREATE TABLE vector_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    conn.executemany("INSERT INTO vectors VALUES (?, ?, ?, 'model-a', ?, NULL)",
                     [(mid, sid, seq, b"\0\0\x80\x3f" * 32) for mid, sid, seq in users])
    conn.close()
    assert _embed_with(home, "model-b")["embedded"] == 2
    assert _counts(home, "model-a", "model-b") == [2, 2]
    assert _embed_with(home, "model-a")["embedded"] == 0  # kept as they were


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
@pytest.mark.parametrize(("seconds", "said"), [
    (12.0, "under a minute left"), (29.0, "under a minute left"), (95.0, "about 2 min left"),
    (39_900.0, "about 11 h 5 min left")])
def test_the_embed_progress_line_says_the_time_left_plainly(seconds, said):
    """It said "about 0 min left" for the last seconds and "about 665 min left" for a store
    that embeds for 11 hours."""
    from hermes_store.cli.embed import time_left

    assert time_left(seconds) == said
