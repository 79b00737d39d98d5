"""HRR algebra: determinism, bind/unbind, blobs, and the measured presence signal."""

from __future__ import annotations

import numpy as np
import pytest

from hermes_store.facts import hrr


def test_atoms_are_deterministic_and_distinct():
    a = hrr.atom("alice", 512)
    assert np.array_equal(a, hrr.atom("alice", 512))
    assert abs(hrr.similarity(a, hrr.atom("bob", 512))) < 0.15
    assert a.min() >= 0 and a.max() < 2 * np.pi


def test_bind_unbind_roundtrip():
    a, b = hrr.atom("x", 256), hrr.atom("y", 256)
    assert hrr.similarity(hrr.unbind(hrr.bind(a, b), b), a) == pytest.approx(1.0)


def test_entity_presence_carries_signal():
    dim = 1024
    fact = hrr.encode_fact("lives in a flat near the river", ["Alice", "Paris"], dim)
    present = hrr.similarity(fact, hrr.entity_key("alice", dim))
    absent = hrr.similarity(fact, hrr.entity_key("Bob", dim))
    assert present > 0.3
    assert abs(absent) < 0.1


def test_query_bound_to_content_role_carries_signal():
    dim = 1024
    fact = hrr.encode_fact("the deploy script lives in the tools folder", ["Carol"], dim)
    related = hrr.similarity(fact, hrr.query_key("deploy script tools", dim))
    unrelated = hrr.similarity(fact, hrr.query_key("banana bread recipe", dim))
    assert related > unrelated + 0.05


def test_blob_roundtrip_and_dimension_check():
    vec = hrr.encode_text("hello world", 128)
    blob = hrr.to_blob(vec)
    assert blob.startswith(b"HRR1") and len(blob) == 4 + 4 * 128
    assert np.allclose(hrr.from_blob(blob, 128), vec, atol=1e-5)
    legacy = vec.astype(np.float64).tobytes()
    assert np.allclose(hrr.from_blob(legacy, 128), vec)
    with pytest.raises(hrr.VectorFormatError):
        hrr.from_blob(blob, 256)


def test_similarities_matrix_matches_scalar():
    vecs = np.stack([hrr.encode_text(t, 64) for t in ("a b", "c d", "e")])
    probe = hrr.encode_text("a b", 64)
    sims = hrr.similarities(hrr.to_complex(vecs), probe)
    assert sims[0] == pytest.approx(hrr.similarity(vecs[0], probe), abs=1e-4)
    assert sims[0] > sims[1]
