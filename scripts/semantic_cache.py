#!/usr/bin/env python3
"""Embed every LongMemEval and LoCoMo text once and keep the vectors in a cache directory.

The texts are the ones the evaluations embed (``sessions embed``'s choice of roles and its
:data:`~hermes_store.sessions.embeddings.EMBED_CHARS` cut) plus the questions: every user and
assistant message of every LongMemEval haystack of ``--lme``, every LoCoMo turn of ``--locomo``
(``Speaker: text [image: caption]``, as ``scripts/eval_locomo.py`` indexes it) and every
question of both. Each distinct text is embedded once, in one process, shortest first in large
batches, and stored in ``DIR/<model digest>.npz`` keyed by the SHA-1 of the text; a second run
embeds only what is missing. ``scripts/eval_semantic.py`` reads the cache (``--semantic-cache``)
so fusion experiments need no model time. The throughput is printed.

Usage: .venv/bin/python scripts/semantic_cache.py --model bundled:all-MiniLM-L6-v2
       [--cache /tmp/sem27-cache] [--lme DIR] [--locomo DIR] [--batch 256]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_locomo import turns_of  # noqa: E402
from eval_semantic import EmbeddingCache  # noqa: E402

from hermes_store.sessions.embeddings import EMBED_CHARS, load_embedder, text_of  # noqa: E402


def lme_texts(data: Path) -> list[str]:
    """The embedded messages and the questions of every LongMemEval question file."""
    out: list[str] = []
    for path in sorted(data.glob("*.json")):
        question = json.loads(path.read_text(encoding="utf-8"))
        out.append(question["question"])
        for turns in question["haystack_sessions"]:
            for turn in turns:
                text = text_of(turn["role"], turn.get("content") or "")
                if text is not None:
                    out.append(text)
    return out


def locomo_texts(data: Path) -> list[str]:
    """The turns and the questions of every LoCoMo conversation."""
    out: list[str] = []
    for path in sorted(data.glob("*.json")):
        conv = json.loads(path.read_text(encoding="utf-8"))
        out.extend(text for _n, _seq, role, text, _ts in turns_of(conv) if text_of(role, text))
        out.extend(str(qa["question"]) for qa in conv.get("qa", []) if qa.get("question"))
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/sem27-cache"))
    parser.add_argument("--lme", type=Path, default=Path("/work/shared/data/longmemeval/s_dev"))
    parser.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo"))
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    embedder = load_embedder(args.model)
    cache = EmbeddingCache(args.cache, embedder)
    texts = list(dict.fromkeys(t[:EMBED_CHARS] for t in lme_texts(args.lme) + locomo_texts(args.locomo)))
    missing = sorted(cache.missing(texts), key=len)  # short first: LoCoMo and user turns early
    print(f"{len(texts)} distinct texts, {len(missing)} to embed", flush=True)
    began = time.perf_counter()
    done = 0
    for start in range(0, len(missing), args.batch * 4):
        chunk = missing[start : start + args.batch * 4]
        cache.add(chunk, embedder.encode(chunk))
        done += len(chunk)
        rate = done / (time.perf_counter() - began)
        print(f"  {done}/{len(missing)} embedded, {rate:.1f} texts/s", flush=True)
        if done % (args.batch * 16) < args.batch * 4:
            cache.save()
    cache.save()
    seconds = time.perf_counter() - began
    chars = sum(len(t) for t in missing)
    print(f"embedded {done} texts ({chars / max(1, done):.0f} chars each) in {seconds:.1f} s: "
          f"{done / seconds if seconds else 0.0:.1f} texts/s on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
