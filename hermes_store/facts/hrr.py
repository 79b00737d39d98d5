"""Phase-vector holographic reduced representations (HRR) with NumPy.

A vector is ``dim`` phase angles in [0, 2π). Atoms are derived from SHA-256
(identical on every machine), binding adds phases, unbinding subtracts them,
bundling is the circular mean, and similarity is ``mean(cos(a - b))`` in [-1, 1].

What carries signal (measured in ``scripts/eval_facts.py``):

* entity presence: ``similarity(fact, bind(atom(entity), ROLE_ENTITY))`` is about
  ``1/(k+1)`` of the way to 1 for a fact bundling ``k`` entities plus content, and
  about 0 otherwise;
* query relevance: the query's word bundle must be bound to ``ROLE_CONTENT``
  before it is compared with a fact.

Vectors are stored as ``b"HRR1"`` + little-endian float32 angles; legacy raw
float64 blobs (Hermes before the format tag) are still read.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

from hermes_store.facts.text import words

TWO_PI = 2.0 * math.pi
FORMAT_TAG = b"HRR1"
ENCODING_VERSION = "hrr1-words-v1"  # bump when encode_text/encode_fact change meaning
DEFAULT_DIM = 1024
ROLE_CONTENT_NAME = "__hrr_role_content__"
ROLE_ENTITY_NAME = "__hrr_role_entity__"
EMPTY_NAME = "__hrr_empty__"


class VectorFormatError(ValueError):
    """A stored vector blob has an unknown format or the wrong dimension."""


@lru_cache(maxsize=65536)
def _atom_cached(word: str, dim: int) -> np.ndarray:
    blocks = math.ceil(dim / 16)
    raw = b"".join(hashlib.sha256(f"{word}:{i}".encode()).digest() for i in range(blocks))
    values = np.array(struct.unpack(f"<{blocks * 16}H", raw)[:dim], dtype=np.float64)
    vec = values * (TWO_PI / 65536.0)
    vec.setflags(write=False)
    return vec


def atom(word: str, dim: int = DEFAULT_DIM) -> np.ndarray:
    """The deterministic phase vector of ``word`` (read-only array, cached)."""
    if dim < 1:
        raise ValueError(f"hrr dim must be positive, got {dim}")
    return _atom_cached(word, int(dim))


def role_content(dim: int = DEFAULT_DIM) -> np.ndarray:
    """The role atom a fact's text is bound to."""
    return atom(ROLE_CONTENT_NAME, dim)


def role_entity(dim: int = DEFAULT_DIM) -> np.ndarray:
    """The role atom every linked entity is bound to."""
    return atom(ROLE_ENTITY_NAME, dim)


def bind(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bind two vectors (phase addition)."""
    return np.mod(a + b, TWO_PI)


def unbind(memory: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Undo :func:`bind` with ``key`` (phase subtraction)."""
    return np.mod(memory - key, TWO_PI)


def bundle(vectors: Sequence[np.ndarray] | Iterable[np.ndarray]) -> np.ndarray:
    """Superpose vectors: the circular mean of their phases."""
    stack = np.asarray(list(vectors), dtype=np.float64)
    if stack.size == 0:
        raise ValueError("bundle needs at least one vector")
    total = np.exp(1j * stack).sum(axis=0)
    return np.mod(np.angle(total), TWO_PI)


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Mean cosine of the phase differences, in [-1, 1]; mismatched dimensions raise."""
    if a.shape != b.shape:
        raise VectorFormatError(f"vector dimensions differ: {a.shape[-1]} vs {b.shape[-1]}")
    return float(np.mean(np.cos(a - b)))


def to_complex(vectors: np.ndarray) -> np.ndarray:
    """``exp(i·v)`` (complex64), so many similarities become one matrix product."""
    return np.exp(1j * np.asarray(vectors, dtype=np.float32)).astype(np.complex64)


def similarities(matrix: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """``similarity(row, probe)`` for every row of a :func:`to_complex` matrix."""
    if matrix.size == 0:
        return np.zeros(0, dtype=np.float64)
    if matrix.shape[1] != probe.shape[-1]:
        raise VectorFormatError(f"vector dimensions differ: {matrix.shape[1]} vs {probe.shape[-1]}")
    conj = np.exp(-1j * probe.astype(np.float64)).astype(np.complex64)
    return (matrix @ conj).real.astype(np.float64) / matrix.shape[1]


def encode_text(text: str, dim: int = DEFAULT_DIM) -> np.ndarray:
    """Bundle of the atoms of the words of ``text`` (index tokenisation; empty -> EMPTY atom)."""
    tokens = words(text)
    if not tokens:
        return atom(EMPTY_NAME, dim)
    return bundle(atom(t, dim) for t in tokens)


def entity_key(name: str, dim: int = DEFAULT_DIM) -> np.ndarray:
    """``bind(atom(name), ROLE_ENTITY)``: what an entity's presence in a fact looks like."""
    return bind(atom(name.casefold(), dim), role_entity(dim))


def query_key(text: str, dim: int = DEFAULT_DIM) -> np.ndarray:
    """A query's words bound to the content role, ready to compare with fact vectors."""
    return bind(encode_text(text, dim), role_content(dim))


def encode_fact(content: str, entity_names: Sequence[str], dim: int = DEFAULT_DIM) -> np.ndarray:
    """``bundle(bind(text, ROLE_CONTENT), *bind(entity, ROLE_ENTITY))`` for one fact."""
    parts = [query_key(content, dim)]
    parts.extend(entity_key(name, dim) for name in entity_names)
    return bundle(parts)


def to_blob(vector: np.ndarray) -> bytes:
    """Serialise as ``b"HRR1"`` + little-endian float32 angles."""
    return FORMAT_TAG + np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dim: int) -> np.ndarray:
    """Decode a stored vector of dimension ``dim`` (tagged float32 or legacy raw float64).

    Raises :class:`VectorFormatError` when the blob does not hold ``dim`` values,
    so a changed dimension is detected instead of crashing inside NumPy.
    """
    data = bytes(blob)
    if data.startswith(FORMAT_TAG) and len(data) == len(FORMAT_TAG) + 4 * dim:
        return np.frombuffer(data, dtype="<f4", offset=len(FORMAT_TAG)).astype(np.float64)
    if len(data) == 8 * dim:
        return np.frombuffer(data, dtype=np.float64).copy()
    raise VectorFormatError(f"vector blob of {len(data)} bytes does not hold {dim} dimensions")
