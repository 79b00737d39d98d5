"""Issue 25: ``--read-only`` makes no write at all (not even a search's retrieval_count)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from mcp_helpers import build_home, served

from hermes_store.facts.store import FactStore
from hermes_store.home import Home


def _files(root) -> dict[str, str]:
    """Digest of every file of the store (the database and its -wal/-shm companions)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.glob("hermes_store.db*")) if not p.name.endswith("-shm")}


def _counts(root) -> list[tuple[int, int]]:
    conn = sqlite3.connect(f"file:{root / 'hermes_store.db'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT fact_id, retrieval_count FROM facts ORDER BY fact_id").fetchall()
    finally:
        conn.close()


def test_read_only_server_searches_without_changing_the_database(tmp_path):
    root = tmp_path / "home"
    build_home(root)
    before_counts, before_files = _counts(root), _files(root)
    with served(root, "--read-only") as server:
        found = server.call("fact_store", {"action": "search", "query": "postgres"}).structured_content
        assert found["count"] == 1
        assert server.call("fact_store", {"action": "list"}).is_error is False
        assert server.call("recall", {"query": "billing postgres"}).is_error is False
    assert _counts(root) == before_counts
    assert _files(root) == before_files


def test_a_read_only_home_never_bumps_retrieval_count(engine, home):
    with home.open_db() as db:
        fact_id = FactStore(db).add_fact("The read-only probe fact about zeppelins", "general", "")["fact_id"]
    with home.open_db() as db:  # the control: a normal search counts the retrieval
        FactStore(db).search("zeppelins")
        assert FactStore(db).get_fact(fact_id)["retrieval_count"] == 1
    reader_home = Home(home.root)
    reader_home.read_only = True
    reader = FactStore(reader_home)
    try:
        assert [r["fact_id"] for r in reader.search("zeppelins")] == [fact_id]
    finally:
        reader.close()
    with home.open_db() as db:
        assert FactStore(db).get_fact(fact_id)["retrieval_count"] == 1


def _tree(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``roots`` (themselves included) with its mtime and size."""
    found = {}
    for root in roots:
        for path in [root, *root.rglob("*")] if root.exists() else []:
            info = path.stat()
            found[str(path)] = (info.st_mtime_ns, info.st_size)
    return found


def _read_everything(server) -> None:
    assert server.call("recall", {"query": "zebrafish billing"}).is_error is False
    assert server.call("session_search", {"query": "zebrafish"}).is_error is False
    assert server.call("session_search", {}).is_error is False
    assert server.call("fact_store", {"action": "search", "query": "postgres"}).is_error is False
    assert server.call("fact_store", {"action": "add", "content": "refused"}).is_error is True
    for uri in ("memory://MEMORY.md", "memory://USER.md", "memory://prompt"):
        server.read(uri)


@pytest.mark.parametrize("naming", ["home", "url"])
def test_a_read_only_server_leaves_no_file_beside_the_store(tmp_path, naming):
    """A read-only server left ``hermes_store.db-wal`` and ``-shm`` beside the store after its
    first read (SQLite creates them for a read-only connection and cannot remove them): a
    read-only session now leaves every file and folder of the home and of the store's folder as
    it found them, named by the home or by ``--database-url``."""
    root, elsewhere = tmp_path / "home", tmp_path / "stores"
    elsewhere.mkdir()
    options: tuple[str, ...] = ()
    if naming == "url":
        url = f"sqlite:///{elsewhere / 'x.db'}"
        options = ("--database-url", url)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("HERMES_STORE_DATABASE_URL", url)
            build_home(root)
        assert (elsewhere / "x.db").exists() and not (root / "hermes_store.db").exists()
    else:
        build_home(root)
    before = _tree(root, elsewhere)
    with served(root, "--read-only", options=options) as server:
        _read_everything(server)
    assert _tree(root, elsewhere) == before


def test_a_read_only_server_on_a_new_home_creates_nothing(tmp_path, engine, request):
    """Reading ``memory://prompt`` from a read-only server made the home and its ``memories/``
    folder; nothing is created now, on either engine."""
    root = tmp_path / "new-home"
    options = ("--database-url", request.getfixturevalue("pg_store_url")) if engine == "postgresql" else ()
    with served(root, "--read-only", options=options) as server:
        _read_everything(server)
        assert server.read("memory://prompt") == ""
    assert not root.exists()


def test_reading_another_profile_leaves_no_file_beside_its_store(tmp_path):
    """``session_search`` with ``profile`` (how an ``@session:work/ID`` link is read) opened the
    other profile's store read-only and left ``-wal``/``-shm`` files in that profile's folder,
    from a read-only server too; every read-only open of a store now leaves nothing."""
    root = tmp_path / "home"
    build_home(root)
    build_home(root / "profiles" / "work")
    before = _tree(root)
    with served(root, "--read-only") as server:
        found = server.call("session_search", {"query": "zebrafish", "profile": "work"}).structured_content
        assert found["success"] is True and found["count"] >= 1, found
    assert _tree(root) == before


def test_a_read_only_vector_file_read_leaves_no_file_beside_it(tmp_path):
    """A read-only home (``mcp --read-only`` with ``semantic.model`` set) read the message
    vectors file and left ``session_vectors.db-wal`` and ``-shm`` beside it (seen with the
    bundled e5 model: a recall or session_search from a read-only server); now nothing."""
    import numpy as np

    from hermes_store.sessions.vectors import VectorStore

    path = tmp_path / "session_vectors.db"
    writer = VectorStore(path)
    try:
        writer.put("words-4", [(1, "s1", 0, np.array([1, 0, 0, 0], dtype=np.float32), "0" * 24)])
    finally:
        writer.close()
    before = _tree(tmp_path)
    reader = VectorStore(path, read_only=True)
    try:
        assert len(reader.states("words-4")) == 1
    finally:
        reader.close()
    assert _tree(tmp_path) == before
