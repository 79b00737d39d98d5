#!/usr/bin/env python3
"""``session_search`` end to end on a large store, lexical and hybrid side by side.

Reuses (or builds) the corpus and SQLite store of ``scripts/bench_search.py`` (``--messages``,
default 1M), embeds its messages of ``--roles`` (default the user's, the extra's default) with a
*hashing* embedder, then times the ``session_search`` tool (discover, ``limit`` 5, the default
detail: what an agent calls) over bench_search's 41 queries: once through a home without
``semantic`` (lexical) and once through a home whose config.yaml names the model (hybrid: the
nearest 300 vectors, the fusion, the three nearest messages of each shown session), the two
interleaved per query, each in its own long-lived tool context (as in a Hermes or MCP process).

The hashing embedder (each word a fixed pseudo-random vector, a text the normalised sum of its
words') is no model of meaning: it gives vectors with a real corpus's structure (texts that share
words are near) so that the vector search, the fusion and the per-session scoring do the work
they do on a real model's vectors, at a size no real model can embed on 2 cores (1M messages
with e5 at 25 texts/s is 11 hours). A real model adds its question embedding to the hybrid
figure: printed beside it when ``--embed-model`` is installed (``scripts/bench_vectors.py``
measures it the same way).

``--reranker MODEL`` adds a third side, interleaved with the other two: the hybrid home with
``semantic.reranker`` set, so the cross-encoder reads the corpus's real messages (two per each of
the first ten sessions) beside each question; its figure includes that model's CPU time. The
scores the reranker keeps are cleared before each timed call, so every call is timed as a new
question's (a question asked again reads no pair twice: ``reranker.MEMO_PAIRS``).

Usage: .venv/bin/python scripts/bench_hybrid.py [--messages 1000000] [--repeat 3]
                                                [--embed-model bundled:multilingual-e5-small]
                                                [--reranker bundled:ms-marco-MiniLM-L-12-v2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

import bench_search  # noqa: E402  (the corpus, the store and the query set)

from hermes_store.db import Database  # noqa: E402
from hermes_store.home import Home  # noqa: E402
from hermes_store.sessions import embeddings  # noqa: E402
from hermes_store.sessions.embeddings import Embedder  # noqa: E402
from hermes_store.sessions.reranker import load_reranker  # noqa: E402
from hermes_store.sessions.storage import open_session_storage  # noqa: E402
from hermes_store.sessions.vectors import VectorStore, embed_pending  # noqa: E402
from hermes_store.tooling import ToolContext  # noqa: E402
from hermes_store.tools import handle_tool_call  # noqa: E402

MODEL = "bench-hashing-384"
_WORD = re.compile(r"\w+")


class HashingEncoder:
    """Each word a fixed pseudo-random vector (seeded by its hash), a text the sum of its words'."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.table: dict[str, Any] = {}

    def _word(self, word: str) -> Any:
        vector = self.table.get(word)
        if vector is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
            vector = self.table[word] = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return vector

    def __call__(self, texts: list[str]) -> Any:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in zip(out, texts, strict=True):
            for word in _WORD.findall(text.lower())[:64]:
                row += self._word(word)
            if not row.any():
                row[0] = 1.0
        return out


def register(dim: int) -> Embedder:
    """The hashing embedder, registered so that ``load_embedder(MODEL)`` (session_search) finds it."""
    embedder = Embedder(MODEL, dim, HashingEncoder(dim))
    embeddings._CACHE[embeddings.resolve_model(MODEL)] = embedder
    return embedder


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    p50, p95, _p99 = bench_search.percentiles(samples)
    return p50, p95


def query_embedding_p95(model: str, queries: list[str], repeat: int) -> tuple[float, float] | None:
    """p50 / p95 of one question's embedding with ``model`` (None when it is not installed)."""
    try:
        embedder = embeddings.load_embedder(model)
    except embeddings.SemanticUnavailable:
        return None
    embedder.encode_query(["warm up"])
    samples = []
    for _ in range(repeat):
        for text in queries:
            began = time.perf_counter()
            embedder.encode_query([text])
            samples.append(time.perf_counter() - began)
    return percentiles(samples)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/hermes_store_bench_search"))
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per query and side")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--roles", default="user", help="roles embedded (comma-separated)")
    parser.add_argument("--embed-model", default="bundled:multilingual-e5-small",
                        help="a model whose question embedding is timed beside ('' for none)")
    parser.add_argument("--reranker", default="", help="a cross-encoder timed as a third side ('' for none)")
    args = parser.parse_args(argv)
    work = args.work / str(args.messages)
    corpus, db_path = work / "corpus", work / "bench.db"
    if not corpus.exists():
        bench_search.generate(corpus, args.messages, None)
    url = f"sqlite:///{db_path}"
    sides = ("lexical", "hybrid", "reranked") if args.reranker else ("lexical", "hybrid")
    homes = {side: Home(work / f"home-{side}", database_url=url) for side in sides}
    for home in homes.values():
        home.ensure()
    db = Database(db_path)
    if not db.scalar("SELECT count(*) FROM messages"):
        from hermes_store.sessions.loader import BulkLoader

        began = time.perf_counter()
        BulkLoader(db).run([corpus])
        print(f"indexed in {time.perf_counter() - began:.1f}s", file=sys.stderr)
    total = int(db.scalar("SELECT count(*) FROM messages"))
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.messages_fts_bench_vocab "
               "USING fts5vocab(main, messages_fts, col)")
    queries = bench_search.query_set(db)
    embedder = register(args.dim)
    roles = tuple(r.strip() for r in args.roles.split(",") if r.strip())
    vectors = VectorStore.for_home(homes["hybrid"])
    began = time.perf_counter()
    done = embed_pending(open_session_storage(db), vectors, embedder, batch=2048, roles=roles)
    if done["embedded"]:
        print(f"embedded {done['embedded']:,} messages in {time.perf_counter() - began:.1f}s", file=sys.stderr)
    count = vectors.count(MODEL)
    vectors.close()
    db.close()
    for side in sides[1:]:  # the reranked home reads the hybrid home's vectors (one store, one file)
        homes[side].config_path.write_text(
            f"semantic:\n  model: {MODEL}\n  roles: [{', '.join(roles)}]\n"
            + (f"  reranker: {args.reranker}\n" if side == "reranked" else ""), encoding="utf-8")
    homes["lexical"].config_path.write_text("", encoding="utf-8")

    contexts = {side: ToolContext(home) for side, home in homes.items()}
    cross_encoder = load_reranker(args.reranker) if args.reranker else None
    samples: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    first: dict[str, float] = {}
    try:
        for side, ctx in contexts.items():  # the first call of a process: opens, maps the cache file
            began = time.perf_counter()
            handle_tool_call("session_search", {"query": "warm up the store"}, ctx=ctx)
            first[side] = time.perf_counter() - began
        for cls, items in queries.items():
            for text in items:
                for side, ctx in contexts.items():
                    reply = json.loads(handle_tool_call("session_search", {"query": text, "limit": 5}, ctx=ctx))
                    if not reply.get("success"):
                        raise SystemExit(f"{side} {text!r}: {reply}")
                for _ in range(args.repeat):
                    for side, ctx in contexts.items():
                        if cross_encoder is not None:  # timed as a new question: no kept scores
                            cross_encoder.clear_scores()
                        began = time.perf_counter()
                        handle_tool_call("session_search", {"query": text, "limit": 5}, ctx=ctx)
                        samples[side].setdefault(cls, []).append(time.perf_counter() - began)
    finally:
        for ctx in contexts.values():
            ctx.close()

    print(f"store: {total:,} messages; {count:,} vectors of {args.dim} dims ({'+'.join(roles)}), "
          f"hashing embedder; session_search limit 5, {args.repeat} runs per query and side, interleaved")
    print("first call of a process: " + ", ".join(f"{side} {1000 * first[side]:.0f} ms" for side in sides))
    reranked = " reranked p50 / p95 (ms) | reranked / hybrid p95 |" if args.reranker else ""
    print(f"| class | queries | lexical p50 / p95 (ms) | hybrid p50 / p95 (ms) | hybrid / lexical p95 |{reranked}")
    print("|---|---:|---:|---:|---:|" + ("---:|---:|" if args.reranker else ""))
    for cls in [*queries, "all"]:
        p = {side: percentiles(sum(samples[side].values(), []) if cls == "all" else samples[side][cls])
             for side in sides}
        n = sum(len(v) for v in queries.values()) if cls == "all" else len(queries[cls])
        (a50, a95), (b50, b95) = p["lexical"], p["hybrid"]
        row = f"| {cls} | {n} | {a50:.1f} / {a95:.1f} | {b50:.1f} / {b95:.1f} | {b95 / a95:.2f} |"
        if args.reranker:
            c50, c95 = p["reranked"]
            row += f" {c50:.1f} / {c95:.1f} | {c95 / b95:.2f} |"
        print(row)
    if args.embed_model:
        timed = query_embedding_p95(args.embed_model, [q for items in queries.values() for q in items], 2)
        if timed is None:
            print(f"{args.embed_model}: not installed, its question embedding is not timed")
        else:
            _all50, all95 = percentiles(sum(samples["hybrid"].values(), []))
            print(f"{args.embed_model} question embedding p50 / p95: {timed[0]:.1f} / {timed[1]:.1f} ms; "
                  f"hybrid p95 + embedding p95: {all95 + timed[1]:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
