#!/usr/bin/env python3
"""Embed every LongMemEval and LoCoMo text once and keep the vectors in a cache directory.

The texts are the ones the evaluations embed (the messages of ``--lme-roles`` of every
LongMemEval haystack of ``--lme`` and those of ``--locomo-roles`` of every LoCoMo turn of
``--locomo``, ``Speaker: text [image: caption]`` as ``scripts/eval_locomo.py`` indexes it, each cut
as the model reads it) plus every question of both, which a model with query prompts (e5) embeds
as a question into a cache file of its own. Each distinct text is embedded once, in one process, shortest first in large
batches, and stored in ``DIR/<model digest>.npz`` keyed by the SHA-1 of the text; a second run
embeds only what is missing. ``scripts/eval_semantic.py`` reads the cache (``--semantic-cache``)
so fusion experiments need no model time. The throughput is printed.

Usage: .venv/bin/python scripts/semantic_cache.py --model bundled:all-MiniLM-L6-v2
       [--cache /tmp/sem27-cache] [--lme DIR|FILE] [--locomo DIR|FILE] [--batch 256]
       [--lme-roles user] [--locomo-roles user,assistant]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_data import locomo_conversations, longmemeval_questions, run_script  # noqa: E402
from eval_locomo import turns_of  # noqa: E402
from eval_semantic import EmbeddingCache  # noqa: E402

from hermes_store.sessions.embeddings import EMBED_ROLES, load_embedder, text_of  # noqa: E402


def lme_texts(data: Path, roles: tuple[str, ...] = EMBED_ROLES) -> tuple[list[str], list[str]]:
    """The embedded messages and the questions of every LongMemEval question file."""
    messages: list[str] = []
    questions: list[str] = []
    for question in longmemeval_questions(data):
        questions.append(question["question"])
        for turns in question["haystack_sessions"]:
            for turn in turns:
                text = text_of(turn["role"], turn.get("content") or "", roles)
                if text is not None:
                    messages.append(text)
    return messages, questions


def locomo_texts(data: Path, roles: tuple[str, ...] = EMBED_ROLES) -> tuple[list[str], list[str]]:
    """The embedded turns and the questions of every LoCoMo conversation."""
    messages: list[str] = []
    questions: list[str] = []
    for _name, conv in locomo_conversations(data):
        messages.extend(
            text for _n, _seq, role, text, _ts in turns_of(conv) if text_of(role, text, roles)
        )
        questions.extend(str(qa["question"]) for qa in conv.get("qa", []) if qa.get("question"))
    return messages, questions


def _roles(value: str) -> tuple[str, ...]:
    return tuple(role.strip() for role in value.split(",") if role.strip())


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/sem27-cache"))
    parser.add_argument("--lme", type=Path, default=Path("/work/shared/data/longmemeval/s_dev"))
    parser.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo"))
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lme-roles", type=_roles, default=EMBED_ROLES)
    parser.add_argument("--locomo-roles", type=_roles, default=("user", "assistant"))
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    embedder = load_embedder(args.model)
    lme_messages, lme_questions = lme_texts(args.lme, args.lme_roles)
    locomo_messages, locomo_questions = locomo_texts(args.locomo, args.locomo_roles)
    messages = lme_messages + locomo_messages
    questions = lme_questions + locomo_questions
    if embedder.query_raw is None:
        messages, questions = messages + questions, []
    began = time.perf_counter()
    done = chars = 0
    for texts, query in ((messages, False), (questions, True)):
        cache = EmbeddingCache(args.cache, embedder, query=query)
        distinct = list(dict.fromkeys(t[: embedder.chars] for t in texts))
        missing = sorted(cache.missing(distinct), key=len)  # short first: user turns early
        kind = "questions" if query else "texts"
        print(f"{len(distinct)} distinct {kind}, {len(missing)} to embed", flush=True)
        encode = embedder.encode_query if query else embedder.encode
        for start in range(0, len(missing), args.batch * 4):
            chunk = missing[start : start + args.batch * 4]
            cache.add(chunk, encode(chunk))
            done += len(chunk)
            chars += sum(len(t) for t in chunk)
            rate = done / (time.perf_counter() - began)
            print(f"  {done} embedded, {rate:.1f} texts/s", flush=True)
            if start % (args.batch * 16) == 0:
                cache.save()
        cache.save()
    seconds = time.perf_counter() - began
    print(f"embedded {done} texts ({chars / max(1, done):.0f} chars each) in {seconds:.1f} s: "
          f"{done / seconds if seconds else 0.0:.1f} texts/s on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_script(main))
