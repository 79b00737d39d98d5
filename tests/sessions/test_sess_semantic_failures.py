"""The semantic half never fails a search, and a read-only home writes nothing for it.

A vector file that cannot be written is still read; a read-only home (``mcp --read-only``)
neither switches the file to WAL, nor adds the index, nor writes a search cache file; a damaged
vector file leaves the reply lexical with a ``semantic_note`` saying why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import apsw
import pytest

from hermes_store.sessions.vectors import VECTORS_FILENAME, VectorStore
from tests.sessions.test_sess_semantic import (
    MODEL,
    SESSIONS,
    _ask,
    _configure,
    _embed,
    _index,
    needs_model,
)

QUERY = "hiking outdoors with a puppy"  # no word shared with s-hike: only the vectors find it


def _folder_state(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir())
            if p.name.startswith(VECTORS_FILENAME)}


def _ready(home) -> Path:
    _index(home, SESSIONS)
    _embed(home)
    _configure(home, MODEL)
    path = VectorStore.for_home(home).path
    for cache in path.parent.glob(f"{path.name}.*.cache*"):
        cache.unlink()
    if path.exists():  # SQLite: a file of an older version, no index by session, no WAL
        conn = apsw.Connection(str(path))
        conn.execute("DROP INDEX IF EXISTS vectors_by_session; PRAGMA journal_mode=DELETE")
        conn.close()
    return path


def _make_unwritable(path: Path) -> bool:
    """Make ``path`` unwritable even for root where the filesystem allows (``chattr +i``),
    else by its mode (not for root); whether a write now fails."""
    if shutil.which("chattr") and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0:
        return True
    os.chmod(path, 0o444)
    try:
        with open(path, "ab"):
            return False
    except OSError:
        return True


def _make_writable(path: Path) -> None:
    if shutil.which("chattr"):
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    os.chmod(path, 0o644)


@needs_model
def test_a_read_only_home_writes_nothing_for_the_semantic_half(home, engine):
    path = _ready(home)
    before = _folder_state(path)
    home.read_only = True
    reply = _ask(home, QUERY)
    assert reply["results"][0]["session_id"] == "s-hike"  # found by meaning, read-only
    assert "semantic_note" not in reply
    after = _folder_state(path)
    assert after.keys() - before.keys() <= {VECTORS_FILENAME + "-shm"}  # no cache file, no -wal
    assert after.get(VECTORS_FILENAME) == before.get(VECTORS_FILENAME)


@needs_model
def test_a_vector_file_that_cannot_be_written_is_still_read(home):  # SQLite's own file
    path = _ready(home)
    if not _make_unwritable(path):
        pytest.skip("SKIPPED LOUDLY: cannot make a file unwritable here (root without chattr)")
    try:
        reply = _ask(home, QUERY)
    finally:
        _make_writable(path)
    assert reply["success"] is True, reply
    assert reply["results"][0]["session_id"] == "s-hike"
    assert "semantic_note" not in reply


@needs_model
def test_a_damaged_vector_file_leaves_the_reply_lexical_and_says_why(home, engine):
    path = _ready(home)
    lexical_first = _ask(home, "chocolate cake")["results"][0]["session_id"]
    rows = VectorStore.for_home(home).rows_store  # the file (SQLite) or the tables (PostgreSQL)
    model = rows._db().portable.scalar("SELECT model FROM vectors LIMIT 1")
    rows._db().portable.execute("INSERT INTO vectors (message_id, session_id, seq, model, vec)"
                                " VALUES (999999, 's-x', 0, ?, ?)", (model, b"\x00\xff"))  # a wrong size
    rows.close()
    for cache in path.parent.glob(f"{path.name}.*.cache*"):
        cache.unlink()
    reply = _ask(home, "chocolate cake")
    assert reply["success"] is True
    assert reply["results"][0]["session_id"] == lexical_first == "s-cake"
    assert "lexical results only" in reply["semantic_note"]


@needs_model
def test_a_vector_file_that_is_not_a_database_leaves_the_search_lexical(home):  # SQLite's own file
    path = _ready(home)
    Path(home.config_path).write_text("", encoding="utf-8")  # the reply with no semantic half
    lexical = _ask(home, "chocolate cake")
    _configure(home, MODEL)
    assert len(_ask(home, "chocolate cake")["results"]) > len(lexical["results"])  # the vectors fill places
    path.write_bytes(b"this is not an SQLite file " * 200)
    reply = _ask(home, "chocolate cake")
    assert reply["success"] is True
    assert [r["session_id"] for r in reply["results"]] == [r["session_id"] for r in lexical["results"]]


def test_a_model_that_cannot_be_loaded_is_one_error_line(home, monkeypatch):
    """``sessions embed --model x`` offline printed the loading library's own two-line reason
    ("... cached files.\nCheck your internet connection ..."): every error is one line."""
    from click.testing import CliRunner

    from hermes_store.cli import cli
    from hermes_store.sessions import embeddings

    def offline(location):
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files.\n"
                      "Check your internet connection.")

    monkeypatch.setitem(embeddings.LOADERS, "sentence-transformers", offline)
    result = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "embed", "--model", "no-such-model-x"])
    assert result.exit_code == 1, result.output
    assert result.stderr == ("Error: no-such-model-x: cannot be loaded offline (We couldn't connect to "
                             "'https://huggingface.co' to load the files. Check your internet connection.)\n")


class LocalEntryNotFoundError(OSError):
    """Named as huggingface_hub's: what the loaders' libraries raise for a name not in the cache."""


@pytest.mark.parametrize("kind", ["embedder", "reranker"])
def test_a_name_in_no_local_cache_is_said_to_be_that_not_a_connection_problem(kind, monkeypatch):
    """A model or reranker name that is neither on disk nor in the Hugging Face cache: the
    library says "Check your internet connection", but nothing is ever downloaded here; the
    one line says what to name instead."""
    from hermes_store.sessions import embeddings, reranker

    def offline(location):
        try:
            raise LocalEntryNotFoundError("Cannot find the requested files in the disk cache")
        except LocalEntryNotFoundError as exc:
            raise OSError("We couldn't connect to 'https://huggingface.co' to load the files, and couldn't "
                          "find them in the cached files. Check your internet connection.") from exc

    module, load = (embeddings, embeddings.load_embedder) if kind == "embedder" else (reranker, reranker.load_reranker)
    monkeypatch.setitem(module.LOADERS, "sentence-transformers" if kind == "embedder" else "cross-encoder", offline)
    with pytest.raises(embeddings.SemanticUnavailable) as caught:
        load("org/not-cached-model")
    assert str(caught.value) == (
        "org/not-cached-model: not a local directory, a bundled: model or a model in this machine's Hugging Face "
        "cache (nothing is downloaded: name the model's directory)")


@pytest.mark.parametrize("key", ["model", "reranker"])
def test_a_model_path_that_does_not_exist_is_named_by_status(home, tmp_path, key):
    """``status`` said "0 messages embedded (hermes-store sessions embed)" for a
    ``semantic.model`` path that does not exist (and nothing for such a reranker), while the
    search said it cannot be used and ``embed`` failed: it says why now, without loading."""
    import json

    from click.testing import CliRunner

    from hermes_store.cli import cli

    missing = tmp_path / "no-such-dir" / "model"
    model = MODEL if key == "reranker" else str(missing)
    reranker = f"\n  reranker: {missing}" if key == "reranker" else ""
    home.config_path.write_text(f"semantic:\n  model: {model}{reranker}\n", encoding="utf-8")
    _index(home, SESSIONS)
    out = CliRunner().invoke(cli, ["--home", str(home.root), "status", "--json"])
    assert out.exit_code == 0, out.output
    semantic = json.loads(out.output)["database"]["semantic"]
    assert semantic[f"{key}_error" if key == "reranker" else "error"] == f"{missing}: no such file or directory"
    text = CliRunner().invoke(cli, ["--home", str(home.root), "status"]).output
    assert f"cannot be used ({missing}: no such file or directory)" in text


@needs_model
def test_a_damaged_vector_file_is_named_by_embed_and_status(home):  # SQLite's own file
    """``sessions embed`` over a damaged ``session_vectors.db`` said "<home>/hermes_store.db:
    database disk image is malformed (run `hermes-store doctor`)": the store blamed, and
    doctor finds nothing wrong with it. It names the vector file now, and what to do."""
    import json

    from click.testing import CliRunner

    from hermes_store.cli import cli

    path = _ready(home)
    store = home.db_path.read_bytes()
    damaged = path.read_bytes()[:4096] + b"\x5a" * 8192  # the header kept, the pages gone
    path.write_bytes(damaged)
    for cache in path.parent.glob(f"{path.name}.*.cache*"):
        cache.unlink()
    out = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "embed"])
    assert out.exit_code == 1
    assert out.stderr.startswith(f"Error: {path}: the vector file is damaged (")
    assert "move it away and run `hermes-store sessions embed` again" in out.stderr
    assert str(home.db_path) not in out.stderr
    assert home.db_path.read_bytes() == store and path.read_bytes() == damaged  # nothing written
    status = CliRunner().invoke(cli, ["--home", str(home.root), "status", "--json"])
    assert json.loads(status.output)["database"]["semantic"]["error"].startswith(f"{path}: the vector file is damaged")


def test_status_checks_the_models_before_anything_is_indexed(home):
    """On a home with nothing indexed yet (a newcomer writes config.yaml first), ``status``
    said "0 messages embedded (hermes-store sessions embed)" for a mistyped ``semantic.model``
    and left the ``Reranker:`` line out; the model is checked, and the reranker named, now."""
    import json

    from click.testing import CliRunner

    from hermes_store.cli import cli

    home.config_path.write_text("semantic:\n  model: bundled:multilingual-e5-smal\n"
                                "  reranker: bundled:ms-marco-MiniLM-L-12-v2\n", encoding="utf-8")
    assert not home.store_exists()
    out = CliRunner().invoke(cli, ["--home", str(home.root), "status", "--json"])
    semantic = json.loads(out.output)["database"]["semantic"]
    assert semantic["error"].startswith("bundled:multilingual-e5-smal: no installed package ships it")
    assert semantic["reranker"] == "bundled:ms-marco-MiniLM-L-12-v2"
    text = CliRunner().invoke(cli, ["--home", str(home.root), "status"]).output
    assert "Semantic:   bundled:multilingual-e5-smal, cannot be used (" in text
    assert "Reranker:   bundled:ms-marco-MiniLM-L-12-v2" in text
    assert not home.store_exists()  # status made no store
