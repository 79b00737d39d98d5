"""The vector file's search cache: a memory-mapped matrix per model, kept fresh by a log.

No model is needed: the vectors are synthetic (numpy only; skipped without it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from hermes_store.sessions import storage_vectors  # noqa: E402
from hermes_store.sessions.storage_vectors import VectorStore  # noqa: E402
from hermes_store.sessions.vector_index import VectorMatrix  # noqa: E402

MODEL = "m"
DIM = 32


def _unit(rows):
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def _clustered(count: int, seed: int = 3):
    """``count`` unit vectors around 40 centres sharing one direction (like sentence embeddings)."""
    rng = np.random.default_rng(seed)
    centres = _unit(rng.standard_normal((40, DIM))) + 0.5 * _unit(rng.standard_normal(DIM))
    return _unit(centres[rng.integers(0, 40, count)] + 0.08 * rng.standard_normal((count, DIM)))


def _store(tmp_path: Path, vectors, start: int = 0) -> VectorStore:
    store = VectorStore(tmp_path / "session_vectors.db")
    store.put(MODEL, [(start + i, f"s{(start + i) // 10}", (start + i) % 10, row)
                      for i, row in enumerate(vectors)])
    return store


def _exact(vectors, query, k: int) -> list[int]:
    scores = vectors @ query
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


def _ids(found) -> list[int]:
    return [mid for mid, _sid, _seq, _score in found]


def test_the_sign_bit_path_finds_what_the_exact_scan_finds(tmp_path):
    """Forced onto the quantised path (candidates: a tenth of the rows), the nearest 10 are the
    exact float32 ones, with the same cosines, in the same order."""
    vectors = _clustered(3000)
    store = _store(tmp_path, vectors)
    rng = np.random.default_rng(5)
    for query in _unit(vectors[rng.integers(0, 3000, 20)] + 0.05 * rng.standard_normal((20, DIM))):
        quantised = store.nearest(MODEL, query, 10, exact_limit=0, candidates=300)
        exact = store.nearest(MODEL, query, 10)
        assert _ids(quantised) == _ids(exact) == _exact(vectors, query, 10)
        assert [round(s, 5) for *_r, s in quantised] == [round(float(vectors[i] @ query), 5)
                                                          for i in _exact(vectors, query, 10)]
    store.close()


def test_results_carry_session_and_position(tmp_path):
    vectors = _clustered(50)
    store = _store(tmp_path, vectors)
    mid, sid, seq, score = store.nearest(MODEL, vectors[23], 1)[0]
    assert (mid, sid, seq) == (23, "s2", 3) and score == pytest.approx(1.0, abs=1e-5)
    store.close()


def test_a_new_process_maps_the_cache_file_instead_of_rebuilding_it(tmp_path):
    vectors = _clustered(200)
    store = _store(tmp_path, vectors)
    first = _ids(store.nearest(MODEL, vectors[7], 5))
    cache = store.cache_path(MODEL)
    store.close()
    assert cache.is_file()
    stamp = cache.stat().st_mtime_ns
    again = VectorStore(tmp_path / "session_vectors.db")
    assert _ids(again.nearest(MODEL, vectors[7], 5)) == first
    assert cache.stat().st_mtime_ns == stamp
    again.close()


def test_vectors_written_after_the_cache_are_found(tmp_path):
    """put after the cache file (by this store or another one): the next search sees the new
    vectors and a replaced vector's new value, not the file's old one."""
    vectors = _clustered(200)
    store = _store(tmp_path, vectors)
    store.nearest(MODEL, vectors[0], 5)  # the cache file now covers 200 rows
    probe = _unit(np.random.default_rng(9).standard_normal(DIM))
    writer = VectorStore(tmp_path / "session_vectors.db")
    writer.put(MODEL, [(500, "new", 0, probe)])
    assert store.nearest(MODEL, probe, 1)[0][:3] == (500, "new", 0)
    writer.put(MODEL, [(3, "s0", 3, -probe), (4, "s0", 4, probe)])  # replaced in place
    top = store.nearest(MODEL, probe, 2)
    assert sorted(_ids(top)) == [4, 500]
    assert 3 not in _ids(store.nearest(MODEL, vectors[3], 3))
    fresh = VectorStore(tmp_path / "session_vectors.db")  # file + delta in a new process
    assert sorted(_ids(fresh.nearest(MODEL, probe, 2))) == [4, 500]
    for opened in (store, writer, fresh):
        opened.close()


def test_a_large_delta_rewrites_the_cache_file(tmp_path, monkeypatch):
    monkeypatch.setattr(storage_vectors, "COMPACT_ROWS", 5)
    vectors = _clustered(100)
    store = _store(tmp_path, vectors[:50])
    store.nearest(MODEL, vectors[0], 3)
    assert VectorMatrix.open(store.cache_path(MODEL)).rows == 50
    store.put(MODEL, [(50 + i, "late", i, row) for i, row in enumerate(vectors[50:])])
    assert _ids(store.nearest(MODEL, vectors[77], 1)) == [77]
    rewritten = VectorMatrix.open(store.cache_path(MODEL))
    assert rewritten.rows == 100 and list(rewritten.ids) == list(range(100))
    store.close()


def test_forget_and_drop_missing_delete_the_cache_and_the_answers(tmp_path):
    vectors = _clustered(100)
    store = _store(tmp_path, vectors)
    other = VectorStore(tmp_path / "session_vectors.db")
    assert _ids(other.nearest(MODEL, vectors[12], 1)) == [12]  # other has mapped the file
    cache = store.cache_path(MODEL)
    crashed = cache.with_name(cache.name + ".x1y2.tmp")  # a half-written file of a crashed writer
    crashed.write_bytes(cache.read_bytes()[:1000])
    assert store.forget([12], ["s3"]) == 11
    assert not cache.exists() and not crashed.exists()  # no forgotten vector stays in a cache
    left = _ids(other.nearest(MODEL, vectors[12], 100))
    assert 12 not in left and not set(range(30, 40)) & set(left) and len(left) == 89
    assert store.drop_missing(set(range(50)), MODEL) == 50
    assert sorted(_ids(other.nearest(MODEL, vectors[0], 100))) == sorted(
        set(range(50)) - {12} - set(range(30, 40)))
    store.close()
    other.close()


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "flip-id"])
def test_a_damaged_cache_file_is_rebuilt(tmp_path, damage):
    vectors = _clustered(300)
    store = _store(tmp_path, vectors)
    expected = _ids(store.nearest(MODEL, vectors[42], 10))
    cache = store.cache_path(MODEL)
    store.close()
    data = bytearray(cache.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data[:16] = b"not a cache file"
    elif damage == "empty":
        data = bytearray()
    else:
        data[256] ^= 0xFF  # inside the ids
    cache.write_bytes(bytes(data))
    again = VectorStore(tmp_path / "session_vectors.db")
    assert _ids(again.nearest(MODEL, vectors[42], 10)) == expected
    assert VectorMatrix.open(cache) is not None  # rewritten whole
    again.close()


def test_an_unwritable_cache_falls_back_to_memory(tmp_path, monkeypatch):
    vectors = _clustered(80)
    store = _store(tmp_path, vectors)

    def refuse(self, path):
        raise OSError("read-only")

    monkeypatch.setattr(VectorMatrix, "write", refuse)
    assert _ids(store.nearest(MODEL, vectors[5], 1)) == [5]
    assert not store.cache_path(MODEL).exists()
    store.close()


def test_each_model_has_its_own_cache(tmp_path):
    store = VectorStore(tmp_path / "session_vectors.db")
    a, b = _clustered(20, seed=1), _clustered(20, seed=2)
    store.put("a", [(i, "sa", i, row) for i, row in enumerate(a)])
    store.put("b", [(100 + i, "sb", i, row) for i, row in enumerate(b)])
    assert _ids(store.nearest("a", a[4], 1)) == [4]
    assert _ids(store.nearest("b", b[4], 1)) == [104]
    assert store.cache_path("a") != store.cache_path("b")
    assert set(_ids(store.nearest("a", a[0], 50))) == set(range(20))
    store.close()


def test_nearest_in_scores_each_named_session_exactly(tmp_path, monkeypatch):
    """A shown session's nearest messages are its own best, found however far the session is
    from the question globally, and the read is bounded."""
    vectors = _clustered(500)
    store = _store(tmp_path, vectors)  # ten messages per session: s0 .. s49
    query = vectors[0]
    far = min(range(1, 50), key=lambda n: float(np.max(vectors[10 * n : 10 * n + 10] @ query)))
    assert not {f"s{far}"} & {sid for _mid, sid, _seq, _c in store.nearest(MODEL, query, 50)}
    found = store.nearest_in(MODEL, ["s0", f"s{far}", "missing"], query, 3)
    assert set(found) == {"s0", f"s{far}"}
    for sid, base in (("s0", 0), (f"s{far}", 10 * far)):
        own = vectors[base : base + 10]
        assert _ids(found[sid]) == [base + i for i in _exact(own, query, 3)]
        assert all(s == sid for _m, s, _q, _c in found[sid])
    store.rows_store._db().execute("UPDATE vectors SET vec = x'0102' WHERE message_id = ?", (base,))
    assert base not in _ids(store.nearest_in(MODEL, [f"s{far}"], query, 10)[f"s{far}"])  # damaged: left out
    monkeypatch.setattr(storage_vectors, "NEAREST_IN_ROWS", 10)
    assert sum(len(v) for v in store.nearest_in(MODEL, ["s0", "s1"], query, 10).values()) == 10
    assert store.nearest_in(MODEL, [], query, 3) == {} and store.nearest_in(MODEL, ["s0"], query, 0) == {}
    store.close()
