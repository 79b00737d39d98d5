"""The in-memory side of the vector file: one model's vectors as a memory-mapped matrix, searched
by sign bits first and rescored exactly.

A :class:`VectorMatrix` holds, sorted by message id, the float32 unit vectors of one model, the
message ids and a binary code of each vector (the signs of ``vector - mean``, 48 bytes for 384
dims, stored word-major so each 64-bit word is one contiguous column). It lives in one cache file
beside ``session_vectors.db`` (:meth:`VectorMatrix.write`: a temporary file, fsync, then
``os.replace``, so a reader sees the old file or the new one, never half of one) and is opened
with ``mmap`` (:meth:`VectorMatrix.open`: the header, the file size and a CRC of the header and
the ids are checked; anything else is ``None`` and the caller rebuilds the file from SQLite).

:func:`search` scores every vector exactly (float32 ``matrix @ query``) up to ``exact_limit``
rows; above that it ranks all rows by Hamming distance of their codes to the query's (about
10 ms for 1M rows), keeps the ``candidates`` nearest and rescores only those in float32 (a
gather of their rows from the mapped file). Rows added since the file was written (``delta``)
are always scored exactly. Figures, recall and the command: docs/retrieval.md, "Semantic search".
No SQL here: :mod:`.storage_vectors` reads and writes the rows.
"""

from __future__ import annotations

import mmap
import os
import struct
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_store.sessions.embeddings import numpy_module

#: Up to this many rows a search scores every vector exactly (about 10 ms at 100k x 384).
EXACT_LIMIT = 100_000
#: Rows the sign-bit ranking passes on to the exact float32 rescoring above ``EXACT_LIMIT``.
CANDIDATES = 20_000
_MAGIC = b"HSVECS01"
_HEADER = struct.Struct("<8sIIQQQI")  # magic, dim, words, rows, epoch, last log row, ids CRC
_HEADER_SIZE = 64  # the header, its CRC and padding
_ALIGN = 64


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _layout(dim: int, words: int, rows: int) -> tuple[int, int, int, int, int]:
    """Offsets of the mean, ids, codes and vectors, and the file size."""
    mean = _HEADER_SIZE
    ids = _aligned(mean + 4 * dim)
    bits = _aligned(ids + 8 * rows)
    vecs = _aligned(bits + 8 * words * rows)
    return mean, ids, bits, vecs, vecs + 4 * dim * rows


def _codes(vectors: Any, mean: Any) -> Any:
    """The sign bits of ``vectors - mean`` as ``words x rows`` uint64 (word-major)."""
    np = numpy_module()
    rows, dim = vectors.shape
    words = -(-dim // 64)
    out = np.zeros((rows, words * 8), dtype=np.uint8)
    for start in range(0, rows, 65_536):
        block = np.packbits(vectors[start : start + 65_536] > mean, axis=1)
        out[start : start + len(block), : block.shape[1]] = block
    return np.ascontiguousarray(out.view(np.uint64).T)


@dataclass
class VectorMatrix:
    """The vectors of one model: ``ids`` (sorted int64), ``vecs`` (float32 rows), ``bits`` (their
    sign codes, ``words x rows``), ``mean`` (what the codes are centred on), and what it covers:
    the store's ``epoch`` and the ``last_n`` log row it includes."""

    ids: Any
    vecs: Any
    bits: Any
    mean: Any
    epoch: int
    last_n: int
    _map: Any = None  # the mmap the arrays view (kept open while they are used)

    @classmethod
    def from_rows(cls, ids: Any, vecs: Any, epoch: int, last_n: int) -> VectorMatrix:
        """A matrix of rows already sorted by id (codes computed here)."""
        np = numpy_module()
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        sample = vecs[:: max(1, len(vecs) // 100_000)]
        mean = (sample.mean(axis=0) if len(sample) else np.zeros(vecs.shape[1])).astype(np.float32)
        return cls(np.ascontiguousarray(ids, dtype=np.int64), vecs, _codes(vecs, mean), mean,
                   int(epoch), int(last_n))

    @property
    def rows(self) -> int:
        """How many vectors."""
        return len(self.ids)

    def write(self, path: Path) -> None:
        """Write the matrix to ``path`` crash-safely (temporary file, fsync, ``os.replace``)."""
        dim, words, rows = self.vecs.shape[1], self.bits.shape[0], self.rows
        offsets = _layout(dim, words, rows)
        head = _HEADER.pack(_MAGIC, dim, words, rows, self.epoch, self.last_n,
                            zlib.crc32(memoryview(self.ids).cast("B")))
        head += struct.pack("<I", zlib.crc32(head))
        parts = [self.mean, self.ids, self.bits, self.vecs]
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(head.ljust(_HEADER_SIZE, b"\0"))
                for offset, part in zip(offsets[:4], parts, strict=True):
                    out.write(b"\0" * (offset - out.tell()))
                    out.write(memoryview(part).cast("B"))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def open(cls, path: Path) -> VectorMatrix | None:
        """The matrix in ``path``, memory-mapped; None when the file is missing, truncated, of
        another format or its header or ids fail their CRC (the caller rebuilds it)."""
        np = numpy_module()
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size < _HEADER_SIZE:
                    return None
                mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        head = mapped[: _HEADER.size + 4]
        magic, dim, words, rows, epoch, last_n, ids_crc = _HEADER.unpack(head[: _HEADER.size])
        (head_crc,) = struct.unpack("<I", head[_HEADER.size :])
        if magic != _MAGIC or head_crc != zlib.crc32(head[: _HEADER.size]) or not dim:
            mapped.close()
            return None
        mean_at, ids_at, bits_at, vecs_at, end = _layout(dim, words, rows)
        if end != size or words != -(-dim // 64):
            mapped.close()
            return None
        ids = np.frombuffer(mapped, dtype=np.int64, count=rows, offset=ids_at)
        if zlib.crc32(memoryview(ids).cast("B")) != ids_crc:
            del ids
            mapped.close()
            return None
        return cls(
            ids,
            np.frombuffer(mapped, dtype=np.float32, count=rows * dim, offset=vecs_at).reshape(rows, dim),
            np.frombuffer(mapped, dtype=np.uint64, count=words * rows, offset=bits_at).reshape(words, rows),
            np.frombuffer(mapped, dtype=np.float32, count=dim, offset=mean_at),
            int(epoch), int(last_n), mapped,
        )

    def positions(self, ids: Any) -> Any:
        """Row positions of those of ``ids`` that this matrix holds."""
        np = numpy_module()
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids) or not self.rows:
            return np.zeros(0, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, ids), self.rows - 1)
        return at[self.ids[at] == ids]

    def close(self) -> None:
        """Drop the arrays and close the mapping."""
        self.ids = self.vecs = self.bits = self.mean = None
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # an array still views it: the mapping goes with that array
                pass
            self._map = None


def hamming(matrix: VectorMatrix, query: Any) -> Any:
    """Hamming distance (uint16) of each row's code to the code of ``query``."""
    np = numpy_module()
    code = _codes(query.reshape(1, -1), matrix.mean)[:, 0]
    distance = np.bitwise_count(matrix.bits[0] ^ code[0]).astype(np.uint16)
    for word in range(1, len(code)):
        distance += np.bitwise_count(matrix.bits[word] ^ code[word])
    return distance


def _top(scores: Any, k: int) -> Any:
    np = numpy_module()
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top], kind="stable")]


def _matrix_scores(matrix: VectorMatrix, query: Any, excluded: Any, exact_limit: int,
                   candidates: int) -> tuple[Any, Any]:
    """(row positions, float32 cosines) of the rows worth ranking: all of them up to
    ``exact_limit`` rows, else the ``candidates`` nearest by code distance."""
    np = numpy_module()
    if matrix.rows <= max(exact_limit, candidates):
        scores = matrix.vecs @ query
        scores[excluded] = -np.inf
        return np.arange(matrix.rows), scores
    distance = hamming(matrix, query)
    distance[excluded] = np.iinfo(np.uint16).max
    counts = np.cumsum(np.bincount(distance, minlength=int(distance.max()) + 1))
    threshold = int(np.searchsorted(counts, candidates))
    below = np.flatnonzero(distance < threshold)
    ties = np.flatnonzero(distance == threshold)[: max(0, candidates - len(below))]
    picked = np.sort(np.concatenate((below, ties)))  # at most ``candidates``, read in file order
    picked = picked[distance[picked] < np.iinfo(np.uint16).max]
    return picked, matrix.vecs[picked] @ query


def search(matrix: VectorMatrix | None, delta_ids: Any, delta_vecs: Any, query: Any, k: int, *,
           exact_limit: int = EXACT_LIMIT, candidates: int = CANDIDATES) -> list[tuple[int, float]]:
    """The ``k`` ids nearest to the unit vector ``query`` with their cosines, best first, over
    ``matrix`` (rows whose id is in ``delta_ids`` excluded: the delta replaces them) and the
    delta rows (scored exactly)."""
    np = numpy_module()
    query = np.asarray(query, dtype=np.float32)
    ids, scores = [], []
    if matrix is not None and matrix.rows:
        picked, picked_scores = _matrix_scores(matrix, query, matrix.positions(delta_ids),
                                               exact_limit, candidates)
        ids.append(matrix.ids[picked])
        scores.append(picked_scores)
    if len(delta_ids):
        ids.append(np.asarray(delta_ids, dtype=np.int64))
        scores.append(np.asarray(delta_vecs, dtype=np.float32) @ query)
    if not ids:
        return []
    all_ids, all_scores = np.concatenate(ids), np.concatenate(scores)
    keep = np.isfinite(all_scores)
    all_ids, all_scores = all_ids[keep], all_scores[keep]
    top = _top(all_scores, k)
    return [(int(all_ids[i]), float(all_scores[i])) for i in top]
