"""A vector follows its message: ``embed_pending`` embeds again a message edited in place
(a transcript re-read under the same uid) and a row id whose vector was made from another
message, and keeps the vectors of an older version's file (which recorded no text digest)
as they are. Run on both engines, with a small deterministic embedder (no model needed)."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from hermes_store.db import Database
from hermes_store.sessions.embeddings import Embedder
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import VectorStore, embed_pending
from tests.sessions.test_sess_message_uid import CONT, index, rebuild
from tests.sessions.test_sess_message_uid import v31 as v31  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("engine")
EDITED_UID = "d1b2c3d4e5f60718293a4b5c6d7e8f90"


def _words(texts: list[str]) -> np.ndarray:
    """A bag of words hashed into 32 dimensions: equal texts, equal vectors."""
    out = np.zeros((len(texts), 32), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            out[row, zlib.crc32(word.encode()) % 32] += 1.0
        out[row, 31] += 0.01  # never all zero
    return out


class Counting:
    """The bag-of-words embedder, counting the texts it was given."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.embedder = Embedder("words-32", 32, self._encode)

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return _words(texts)


def _embed(home, model: Counting) -> dict:
    vectors = VectorStore.for_home(home)
    db = home.open_db()
    try:
        return embed_pending(open_session_storage(db), vectors, model.embedder, roles=("user", "assistant"))
    finally:
        db.close()
        vectors.close()


def _vector_of(home, message_id: int) -> tuple[str, int, np.ndarray]:
    vectors = VectorStore.for_home(home)
    try:
        found = {mid: (sid, seq, score) for mid, sid, seq, score in
                 vectors.nearest("words-32", np.ones(32, dtype=np.float32) / np.sqrt(32), 100)}
        sid, seq, _ = found[message_id]
        rows = vectors.rows_store.in_sessions("words-32", [sid], 100)
    finally:
        vectors.close()
    vec = next(np.frombuffer(bytes(blob), dtype=np.float32) for mid, _s, _q, blob in rows if mid == message_id)
    return sid, seq, vec


def _unit(text: str) -> np.ndarray:
    raw = _words([text])[0]
    return raw / np.linalg.norm(raw)


def test_a_message_edited_in_place_is_embedded_again(home, v31):  # noqa: F811
    first, _ = index(home, v31)
    model = Counting()
    assert _embed(home, model) == {"embedded": 7, "pending": 0, "pruned": 0, "stale": 0}
    assert _embed(home, model)["embedded"] == 0  # nothing changed, nothing embedded
    rebuild(v31, "UPDATE old_messages SET content = 'now production please, carefully'"
                 f" WHERE message_uid = '{EDITED_UID}'")
    index(home, v31)
    model.texts.clear()
    assert _embed(home, model) == {"embedded": 1, "pending": 0, "pruned": 0, "stale": 1}
    assert model.texts == ["now production please, carefully"]  # only the edited one
    message_id = first.row_ids[(CONT, 0)]
    sid, seq, vec = _vector_of(home, message_id)
    assert (sid, seq) == (CONT, 0)
    assert np.allclose(vec, _unit("now production please, carefully"), atol=1e-6)  # the new text's


def test_a_vector_made_from_another_message_is_replaced(home, v31):  # noqa: F811
    first, stored = index(home, v31)
    model = Counting()
    _embed(home, model)
    # a row id whose vector says another session and place (ids reused after a restore, say)
    message_id = first.row_ids[(CONT, 0)]
    vectors = VectorStore.for_home(home)
    try:
        vectors.put("words-32", [(message_id, "someone-else", 9, _unit("unrelated words"), "0" * 24)])
    finally:
        vectors.close()
    model.texts.clear()
    assert _embed(home, model)["stale"] == 1
    assert model.texts == ["now production please"]
    sid, seq, vec = _vector_of(home, message_id)
    assert (sid, seq) == (CONT, 0) and np.allclose(vec, _unit("now production please"), atol=1e-6)


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_an_older_vector_file_is_kept_and_gets_the_digest_column(home, v31):  # noqa: F811
    """A ``session_vectors.db`` of an older version has no ``text_hash`` column: it is added on
    the first write-capable open, its vectors are kept (not hours of re-embedding), and a
    read-only open of such a file still reads them."""
    first, _ = index(home, v31)
    model = Counting()
    _embed(home, model)
    path = Path(home.root) / "session_vectors.db"
    old = Database(path, migrate=False)
    try:  # back to the older layout: the same rows without the column
        old.execute("ALTER TABLE vectors DROP COLUMN text_hash")
    finally:
        old.close()
    readonly = VectorStore(path, read_only=True)
    try:
        assert len(readonly.states("words-32")) == 7
        assert all(digest is None for *_place, digest in readonly.states("words-32").values())
    finally:
        readonly.close()
    model.texts.clear()
    assert _embed(home, model)["embedded"] == 0 and model.texts == []  # kept as they are
    check = Database(path, migrate=False)
    try:
        assert "text_hash" in [r["name"] for r in check.query("PRAGMA table_info(vectors)")]
    finally:
        check.close()


def test_the_background_embedder_reads_the_store_once_per_run_and_stops_between_batches(
        home, v31, monkeypatch):  # noqa: F811
    """A run of the background embedder passes over the store once, however many batches it
    embeds (a pass at 1M messages takes seconds), and ``close`` ends it between batches."""
    from hermes_store.sessions.vectors import BackgroundEmbedder

    index(home, v31)
    db = home.open_db()
    engine_storage = type(open_session_storage(db))  # this engine's
    db.close()
    passes = []
    original = engine_storage.list_sessions

    def counted(self, *args, **kwargs):
        passes.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(engine_storage, "list_sessions", counted)
    model = Counting()
    worker = BackgroundEmbedder(home.open_db, VectorStore.for_home(home), model.embedder, batch=2,
                                roles=("user", "assistant"))
    try:
        worker.schedule()
        assert worker.wait_idle(60)
        assert worker.error is None and worker.embedded == 7  # four batches of at most two
        assert len(passes) == 1
    finally:
        worker.close()
    vectors, db = VectorStore.for_home(home), home.open_db()
    try:
        stopped = embed_pending(open_session_storage(db), vectors, model.embedder, roles=("user", "assistant"),
                                stop=lambda: True)
    finally:
        db.close()
        vectors.close()
    assert stopped["embedded"] == 0 and stopped["pending"] == 0  # nothing left to stop


def test_a_long_lived_context_picks_up_vectors_embedded_after_it_started(home, v31, monkeypatch):  # noqa: F811
    """An MCP server (one tool context for its life) asked before anything was embedded says
    so in ``semantic_note``; once vectors exist it searches them without a restart."""
    import json

    from hermes_store.sessions import embeddings
    from hermes_store.sessions.vectors import SemanticSlot
    from hermes_store.tooling import ToolContext
    from hermes_store.tools import handle_tool_call

    index(home, v31)
    model = Counting()
    monkeypatch.setitem(embeddings._CACHE, embeddings.resolve_model("words-32"), model.embedder)
    Path(home.config_path).write_text("semantic:\n  model: words-32\n  roles: [user, assistant]\n", encoding="utf-8")
    monkeypatch.setattr(SemanticSlot, "RECHECK_SECONDS", 0.0)
    ctx = ToolContext(home)
    try:
        first = json.loads(handle_tool_call("session_search", {"query": "production"}, ctx=ctx))
        assert "nothing is embedded with semantic.model 'words-32' yet" in first["semantic_note"]
        _embed(home, model)
        model.texts.clear()
        second = json.loads(handle_tool_call("session_search", {"query": "production"}, ctx=ctx))
        assert "semantic_note" not in second and second["results"]
        assert model.texts == ["production"]  # the semantic half ran: the question was encoded
    finally:
        ctx.close()
