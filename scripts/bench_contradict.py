#!/usr/bin/env python3
"""``fact_store contradict`` on a synthetic store: the reference full scan vs the index path.

Builds (or reuses) a SQLite fact store of ``--facts`` synthetic facts: people with a home
city, a job, a favourite colour and an age, some of them restated with another value (the
planted contradictions), plus many "X lives in <popular place>" facts about other people,
so a few entities are mentioned by hundreds of facts. Then times
``conflicts.contradict_report`` with ``source="scan"`` (every link of the store loaded,
then grouped) and ``source="index"`` (entity pages from the ``fact_entities`` index) side by
side, checks both return the same pairs in the same order, and prints seconds, rows read,
comparisons and the ratio.

Usage: .venv/bin/python scripts/bench_contradict.py [--facts 20000] [--work DIR] [--limit 10]
                                                    [--repeat 3] [--all]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from hermes_store.db import Database
from hermes_store.facts import FactStore, conflicts

SYLLABLES = ["ka", "lo", "mi", "ra", "vo", "shi", "bel", "dor", "tu", "ne", "sa", "qui"]
PLACES = ["Paris", "Lisbon", "Oslo", "Kyoto", "Lima", "Dakar", "Quito", "Hanoi", "Perth", "Cairo",
          "Berlin", "Madrid", "Vienna", "Prague", "Dublin", "Seoul", "Nairobi", "Bogota", "Austin", "Tunis"]
JOBS = ["nurse", "pilot", "baker", "teacher", "plumber", "chemist", "lawyer", "farmer", "editor", "dentist"]
COLOURS = ["red", "green", "blue", "yellow", "purple", "orange", "black", "white"]


def names(count: int) -> list[str]:
    """``count`` distinct capitalised made-up names."""
    out: list[str] = []
    for a in SYLLABLES:
        for b in SYLLABLES:
            for c in SYLLABLES:
                for d in ("", "n", "r", "s", "a", "o", "el", "us", "ik", "em", "ar", "ot", "in", "al", "er", "is"):
                    out.append(f"{a}{b}{c}{d}".capitalize())
    if count > len(out):
        raise SystemExit(f"at most {len(out)} names")
    return out[:count]


def facts_for(count: int, seed: int = 7) -> list[str]:
    """Synthetic fact texts: per person four attributes, ~10 % restated with another value."""
    rng = random.Random(seed)
    people = names(count // 4 + 10)
    out: list[str] = []
    for person in people:
        out += [f"{person} lives in {rng.choice(PLACES)}", f"{person} works as a {rng.choice(JOBS)}",
                f"{person}'s favourite colour is {rng.choice(COLOURS)}", f"{person} is {rng.randint(18, 90)} years old"]
        if rng.random() < 0.1:
            out.append(f"{person} works as a {rng.choice(JOBS)}")
        if len(out) >= count:
            break
    return out[:count]


def build(path: Path, count: int) -> FactStore:
    """The store at ``path`` holding ``count`` synthetic facts (reused when already built)."""
    db = Database(path)
    store = FactStore(db, hrr_dim=64)
    have = store.storage.count_facts()
    if have < count:
        texts = facts_for(count)
        started = time.perf_counter()
        with store.storage.transaction():
            for text in texts[have:]:
                store.add_fact(text)
        print(f"built {count} facts in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return store


def timed(store: FactStore, source: str, limit: int, repeat: int) -> tuple[float, float, conflicts.ContradictReport]:
    """Median wall and CPU seconds of ``repeat`` unbudgeted runs, and the last report (CPU time
    counts SQLite too, which runs in this process: the steadier figure on a loaded machine)."""
    walls, cpus = [], []
    report = None
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        report = conflicts.contradict_report(store, limit=limit, source=source, seconds=0,
                                             max_work=10**12)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    assert report is not None
    return statistics.median(walls), statistics.median(cpus), report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=20000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_contradict"))
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--all", action="store_true", help="also compare every pair (no limit)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    store = build(args.work / f"facts-{args.facts}.db", args.facts)
    links = len(store.storage.entity_fact_links())
    print(f"store: {store.storage.count_facts()} facts, {links} entity links")
    limits = [args.limit] + ([10**9] if args.all else [])
    for limit in limits:
        index_s, index_cpu, index = timed(store, "index", limit, args.repeat)  # index first: no warm-cache bonus
        scan_s, scan_cpu, scan = timed(store, "scan", limit, args.repeat)
        same = [(p["fact_a"]["fact_id"], p["fact_b"]["fact_id"], p["contradiction_score"]) for p in scan.results] == \
               [(p["fact_a"]["fact_id"], p["fact_b"]["fact_id"], p["contradiction_score"]) for p in index.results]
        shown = "all" if limit >= 10**9 else str(limit)
        print(f"limit {shown}: scan {scan_s:.3f} s wall, {scan_cpu:.3f} s CPU ({scan.rows} rows, "
              f"{scan.comparisons} comparisons) | index {index_s:.3f} s wall, {index_cpu:.3f} s CPU "
              f"({index.rows} rows, {index.comparisons} comparisons) | ratio scan/index "
              f"{scan_s / index_s:.2f}x wall, {scan_cpu / index_cpu:.2f}x CPU | {len(index.results)} pairs, "
              f"identical: {same}")
        if not same:
            return 1
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
