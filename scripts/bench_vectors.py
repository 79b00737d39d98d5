#!/usr/bin/env python3
"""Nearest-neighbour latency of :class:`~hermes_store.sessions.vectors.VectorStore` on synthetic
unit vectors: ``--vectors`` rows of ``--dim`` columns written into a fresh vector file (in
batches of 10 000), then ``--queries`` random unit queries asking for the nearest
``--k`` (session_search asks for 300). Prints the file size, the first query (which loads the
matrix) and p50/p95 of the others.

Usage: .venv/bin/python scripts/bench_vectors.py [--vectors 1000000] [--dim 384] [--queries 50]
       [--k 300] [--dir /tmp/bench-vectors]
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import numpy as np

from hermes_store.sessions.storage_vectors import VectorStore


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--k", type=int, default=300)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench-vectors"))
    args = parser.parse_args(argv)
    shutil.rmtree(args.dir, ignore_errors=True)
    store = VectorStore(args.dir / "session_vectors.db")
    rng = np.random.default_rng(7)
    began = time.perf_counter()
    for start in range(0, args.vectors, 10_000):
        block = rng.standard_normal((min(10_000, args.vectors - start), args.dim)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        store.put("bench", [(start + i, f"s{(start + i) // 50}", (start + i) % 50, row)
                            for i, row in enumerate(block)])
    written = time.perf_counter() - began
    store.close()
    size = sum(p.stat().st_size for p in args.dir.glob("session_vectors.db*"))
    store = VectorStore(args.dir / "session_vectors.db")
    times = []
    for _ in range(args.queries + 1):
        query = rng.standard_normal(args.dim).astype(np.float32)
        query /= np.linalg.norm(query)
        t0 = time.perf_counter()
        assert len(store.nearest("bench", query, args.k)) == args.k
        times.append(1000 * (time.perf_counter() - t0))
    first, rest = times[0], sorted(times[1:])
    print(f"{args.vectors} vectors of {args.dim} dims written in {written:.1f} s; file "
          f"{size / 1e6:.0f} MB ({size / args.vectors:.0f} bytes/vector)")
    print(f"nearest {args.k}: first query (loads the matrix) {first:.0f} ms; then p50 "
          f"{rest[len(rest) // 2]:.1f} ms, p95 {rest[int(len(rest) * 0.95)]:.1f} ms over {len(rest)}")
    store.close()
    shutil.rmtree(args.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
