"""Where a ``sqlite:///`` store's vectors live: beside the file it names, in a vector file of
that store's own. Two stores in one directory (``x.db`` and ``y.db``, a backup beside the
home's store) never share one, and a file an older version shared between them gives each
store its own vectors back. A small deterministic embedder: no model needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_store.home import Home
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import VectorStore, embed_pending
from tests.sessions.test_sess_semantic import _index
from tests.sessions.test_sess_semantic_stale import Counting, _unit

pytestmark = pytest.mark.usefixtures("engine")
ENGINE = pytest.mark.parametrize("engine", ["sqlite"], indirect=True)


def _embed(home: Home, vectors: VectorStore | None = None) -> dict:
    vectors = vectors or VectorStore.for_home(home)
    db = home.open_db()
    try:
        return embed_pending(open_session_storage(db), vectors, Counting().embedder, roles=("user",))
    finally:
        db.close()
        vectors.close()


def _count(home: Home) -> int:
    vectors = VectorStore.for_home(home)
    try:
        return vectors.count("words-32")
    finally:
        vectors.close()


def _store(tmp_path: Path, name: str, sessions: dict[str, list[str]]) -> Home:
    (tmp_path / "stores").mkdir(exist_ok=True)
    home = Home(tmp_path / f"home-{name}", database_url=f"sqlite:///{tmp_path / 'stores' / name}").ensure()
    _index(home, sessions)
    return home


X = {"s-x1": ["hiking a mountain trail", "ok"], "s-x2": ["filing a tax return", "ok"]}
Y = {"s-y1": ["baking a birthday cake", "ok"]}


@ENGINE
def test_two_stores_in_one_directory_keep_their_own_vectors(tmp_path):
    """Before: x.db and y.db beside each other both used ``session_vectors.db``: y's status
    counted x's vectors, and y's first ``embed`` pruned them as messages y does not hold."""
    x, y = _store(tmp_path, "x.db", X), _store(tmp_path, "y.db", Y)
    assert _embed(x)["embedded"] == 2
    assert _count(y) == 0  # nothing of x's is y's
    assert _embed(y) == {"embedded": 1, "pending": 0, "pruned": 0, "stale": 0}
    assert _count(x) == 2 and _count(y) == 1
    assert VectorStore.for_home(x).path == tmp_path / "stores" / "x.db.session_vectors.db"
    assert not (tmp_path / "stores" / "session_vectors.db").exists()


@ENGINE
def test_a_homes_own_store_keeps_session_vectors_db(home):
    assert VectorStore.for_home(home).path == Path(home.root) / "session_vectors.db"
    named = Home(Path(home.root).parent / "other", database_url=f"sqlite:///{home.db_path}")
    assert VectorStore.for_home(named).path == Path(home.root) / "session_vectors.db"  # shared, as documented


@ENGINE
def test_a_vector_file_an_older_version_shared_is_taken_over(tmp_path):
    """Each store takes the vectors of its own messages from the old shared file (same id,
    session and place), which is emptied of them and deleted when nothing is left."""
    x = _store(tmp_path, "x.db", X)
    shared = tmp_path / "stores" / "session_vectors.db"
    assert _embed(x, VectorStore(shared))["embedded"] == 2  # the old layout
    foreign = VectorStore(shared)
    foreign.put("words-32", [(999, "s-elsewhere", 0, _unit("not x's"), None)])
    foreign.nearest("words-32", _unit("tax"), 1)  # a cache file of the shared vectors, x's among them
    foreign.close()
    assert _count(x) == 2  # x's two, not the foreign one
    assert not list(shared.parent.glob("session_vectors.db.*.cache*"))  # no copy forget would miss
    assert _embed(x)["embedded"] == 0  # nothing embedded again
    left = VectorStore(shared)
    try:
        assert left.rows_store.message_ids() == [999]  # x's went with it, the other store's stays
    finally:
        left.close()


@ENGINE
def test_a_shared_file_left_empty_is_deleted(tmp_path):
    x = _store(tmp_path, "x.db", X)
    shared = tmp_path / "stores" / "session_vectors.db"
    _embed(x, VectorStore(shared))
    VectorStore(shared).nearest("words-32", _unit("tax"), 1)  # and a cache file of it
    assert list(shared.parent.glob("session_vectors.db.*.cache"))
    assert _count(x) == 2
    assert not shared.exists() and not list(shared.parent.glob("session_vectors.db*"))


@ENGINE
def test_a_shared_file_beside_a_homes_store_is_copied_and_kept(home, tmp_path):
    """``session_vectors.db`` beside a ``hermes_store.db`` is that store's own: a copy of the
    store named by its own URL (a backup in the home) copies its matching vectors and leaves it."""
    _index(home, X)
    assert _embed(home)["embedded"] == 2
    copy = Path(home.root) / "copy.db"
    copy.write_bytes(home.db_path.read_bytes())
    other = Home(tmp_path / "h2", database_url=f"sqlite:///{copy}").ensure()
    assert _count(other) == 2
    assert _count(home) == 2  # the home's own are untouched


@ENGINE
def test_a_damaged_shared_file_fails_nothing(tmp_path):
    """A shared file that cannot be read is left as it is: the store's own vectors start
    empty (search lexical, ``embed`` embeds) instead of every search failing."""
    x = _store(tmp_path, "x.db", X)
    shared = tmp_path / "stores" / "session_vectors.db"
    _embed(x, VectorStore(shared))
    damaged = shared.read_bytes()[:4096] + b"Z" * 9000
    shared.write_bytes(damaged)
    assert _count(x) == 0
    assert _embed(x)["embedded"] == 2 and _count(x) == 2
    assert shared.read_bytes() == damaged
