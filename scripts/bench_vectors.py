#!/usr/bin/env python3
"""Nearest-neighbour latency of :class:`~hermes_store.sessions.storage_vectors.VectorStore` at
scale, the brute force it replaced beside it, and the hybrid query budget.

Writes ``--vectors`` synthetic unit vectors of ``--dim`` columns into a fresh vector file (in
batches of 10 000): ``--data random`` (Gaussian directions: no structure, the worst case for any
index) or ``clustered`` (20 000 centres sharing a common direction, the way sentence embeddings
crowd into a cone; queries are noisy copies of stored vectors). Then, on ``--queries`` queries
asking for the nearest ``--k`` (``session_search`` asks for 300), it prints side by side:

- **old**: every vector read from SQLite into one float32 matrix, ``matrix @ query`` (what
  ``nearest`` did before the cache file): load time, RSS growth, p50/p95;
- **new**: ``VectorStore.nearest`` (a memory-mapped cache file, sign-bit candidates rescored in
  float32): the first query ever (which builds the file), the first query of a new process (which
  maps it; the file is in the page cache), then per ``--candidates`` value p50/p95, recall@k,
  recall@10 and top-1 against the old exact answers; RSS growth; p95 with ``--delta`` vectors
  written after the file;
- **hybrid**: p95 of embedding one short query with ``--embed-model`` (50 runs; skipped if the
  extra is missing) plus the new p95 plus ``--lexical-p95`` (the lexical search p95 at 1M of
  ``scripts/bench_search.py``, docs/benchmarks.md): a sum of p95s, an upper-side estimate.

Usage: .venv/bin/python scripts/bench_vectors.py [--vectors 1000000] [--dim 384] [--queries 50]
       [--k 300] [--data random|clustered] [--delta 5000] [--candidates 20000,10000]
       [--embed-model bundled:all-MiniLM-L6-v2] [--lexical-p95 34.5] [--torch-threads 1] [--dir /tmp/bench-vectors]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import time
from pathlib import Path

import numpy as np

from hermes_store.sessions.storage_vectors import VectorStore
from hermes_store.sessions.vector_index import CANDIDATES, EXACT_LIMIT

MODEL = "bench"


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _unit(block: np.ndarray) -> np.ndarray:
    return (block / np.linalg.norm(block, axis=-1, keepdims=True)).astype(np.float32)


class Data:
    """Deterministic synthetic vectors and queries of one kind."""

    def __init__(self, kind: str, dim: int) -> None:
        self.kind, self.dim = kind, dim
        self.rng = np.random.default_rng(7)
        self.centres = _unit(self.rng.standard_normal((20_000, dim))) + 0.5 * _unit(
            self.rng.standard_normal(dim))

    def block(self, rows: int) -> np.ndarray:
        """``rows`` unit vectors."""
        if self.kind == "random":
            return _unit(self.rng.standard_normal((rows, self.dim)))
        centre = self.centres[self.rng.integers(0, len(self.centres), rows)]
        return _unit(centre + 0.035 * self.rng.standard_normal((rows, self.dim)))

    def queries(self, count: int) -> list[np.ndarray]:
        """``count`` unit queries (clustered: near stored centres, like a question near its turns)."""
        return list(self.block(count))


def _put(store: VectorStore, data: Data, start: int, count: int) -> None:
    for at in range(start, start + count, 10_000):
        block = data.block(min(10_000, start + count - at))
        store.put(MODEL, [(at + i, f"s{(at + i) // 50}", (at + i) % 50, row)
                          for i, row in enumerate(block)])


def _pcts(times: list[float]) -> str:
    ordered = sorted(times)
    return f"p50 {ordered[len(ordered) // 2]:.1f} ms, p95 {ordered[int(len(ordered) * 0.95)]:.1f} ms"


def _timed(call, queries: list[np.ndarray]) -> tuple[list[float], list[list[int]]]:
    times, answers = [], []
    for query in queries:
        began = time.perf_counter()
        answers.append(call(query))
        times.append(1000 * (time.perf_counter() - began))
    return times, answers


def _old(path: Path, queries: list[np.ndarray], k: int) -> tuple[list[list[int]], list[float]]:
    """The brute force before the cache file: load, then ``matrix @ query`` per query."""
    store = VectorStore(path)
    before, began = _rss_mb(), time.perf_counter()
    ids, positions, blobs = [], [], []
    for mid, sid, seq, vec in store.rows(MODEL):
        ids.append(mid)
        positions.append((sid, seq))
        blobs.append(vec)
    matrix = np.vstack(blobs)
    del blobs
    load = time.perf_counter() - began

    def nearest(query: np.ndarray) -> list[int]:
        scores = matrix @ query
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [ids[i] for i in top if positions[i]]

    times, answers = _timed(nearest, queries)
    print(f"old  (float32 brute force): load {load:.1f} s, RSS +{_rss_mb() - before:.0f} MB; "
          f"{_pcts(times)}")
    store.close()
    return answers, times


def _recall(got: list[list[int]], exact: list[list[int]], top: int) -> float:
    return float(np.mean([len(set(a[:top]) & set(b[:top])) / len(b[:top]) for a, b in zip(got, exact, strict=True)]))


def _embed_p95(model: str, threads: int) -> float | None:
    if not model:
        return None
    try:
        from hermes_store.sessions.embeddings import SemanticUnavailable, load_embedder

        embedder = load_embedder(model)
    except (ImportError, SemanticUnavailable) as exc:
        print(f"query embedding: skipped ({exc})")
        return None
    if threads:
        import torch

        torch.set_num_threads(threads)
    embedder.encode_query(["warm up"])
    times = []
    for _ in range(50):
        began = time.perf_counter()
        embedder.encode_query(["what did I say about my sister's wedding?"])
        times.append(1000 * (time.perf_counter() - began))
    print(f"query embedding ({model}, one short query, 50 runs, "
          f"{'torch threads ' + str(threads) if threads else 'threads as loaded'}): {_pcts(times)}")
    return sorted(times)[int(len(times) * 0.95)]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--k", type=int, default=300)
    parser.add_argument("--data", choices=("random", "clustered"), default="random")
    parser.add_argument("--delta", type=int, default=5_000)
    parser.add_argument("--candidates", type=lambda text: [int(v) for v in text.split(",")],
                        default=[CANDIDATES], help="comma-separated; the first is the hybrid's")
    parser.add_argument("--embed-model", default="bundled:all-MiniLM-L6-v2")
    parser.add_argument("--lexical-p95", type=float, default=34.5)
    parser.add_argument("--torch-threads", type=int, default=0,
                        help="set torch's threads before timing the query embedding (0: as loaded)")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench-vectors"))
    args = parser.parse_args(argv)
    shutil.rmtree(args.dir, ignore_errors=True)
    path = args.dir / "session_vectors.db"
    data = Data(args.data, args.dim)
    store = VectorStore(path)
    began = time.perf_counter()
    _put(store, data, 0, args.vectors)
    written = time.perf_counter() - began
    store.close()
    size = sum(p.stat().st_size for p in args.dir.glob("session_vectors.db*"))
    print(f"{args.vectors} {args.data} vectors of {args.dim} dims written in {written:.1f} s; file "
          f"{size / 1e6:.0f} MB ({size / args.vectors:.0f} bytes/vector); k = {args.k}, "
          f"{args.queries} queries")
    queries = data.queries(args.queries)
    exact, _old_times = _old(path, queries, args.k)
    gc.collect()  # the old matrix goes before the new path is measured

    cache = VectorStore(path).cache_path(MODEL)
    store = VectorStore(path)
    began = time.perf_counter()
    store.nearest(MODEL, queries[0], args.k)
    built = time.perf_counter() - began
    store.close()
    store = VectorStore(path)
    before = _rss_mb()
    began = time.perf_counter()
    store.nearest(MODEL, queries[0], args.k)
    mapped = 1000 * (time.perf_counter() - began)
    print(f"new  (VectorStore.nearest): first query ever {built:.1f} s (builds the "
          f"{cache.stat().st_size / 1e6:.0f} MB cache file); first query of a new process "
          f"{mapped:.0f} ms (maps it)")
    p95s = []
    for candidates in args.candidates:
        tuning = {"candidates": candidates}
        times, answers = _timed(
            lambda q, t=tuning: [m for m, *_ in store.nearest(MODEL, q, args.k, **t)], queries)
        name = ("exact float32 over the mapped file" if args.vectors <= max(EXACT_LIMIT, candidates)
                else f"sign bits -> {candidates} candidates -> float32")
        print(f"     {name}: {_pcts(times)}; recall@{args.k} {_recall(answers, exact, args.k):.3f}, "
              f"recall@10 {_recall(answers, exact, 10):.3f}, top-1 equal {_recall(answers, exact, 1):.3f}")
        p95s.append(sorted(times)[int(len(times) * 0.95)])
    print(f"     RSS +{_rss_mb() - before:.0f} MB since the new process opened it (mapped file pages)")
    tuning = {"candidates": args.candidates[0]}
    _put(store, data, args.vectors, args.delta)
    began = time.perf_counter()
    store.nearest(MODEL, queries[0], args.k, **tuning)
    delta_first = 1000 * (time.perf_counter() - began)
    delta_times, _ = _timed(lambda q: store.nearest(MODEL, q, args.k, **tuning), queries)
    print(f"     after {args.delta} more vectors: first query {delta_first:.0f} ms (reads them), "
          f"then {_pcts(delta_times)}")
    store.close()
    vector_p95 = p95s[0]
    embed_p95 = _embed_p95(args.embed_model, args.torch_threads)
    if embed_p95 is not None:
        print(f"hybrid p95 <= lexical {args.lexical_p95:.1f} + query embedding {embed_p95:.1f} + "
              f"vectors {vector_p95:.1f} = {args.lexical_p95 + embed_p95 + vector_p95:.1f} ms")
    shutil.rmtree(args.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
