#!/usr/bin/env python3
"""Keystroke-to-results latency of ``hermes-store tui`` on a synthetic corpus.

Builds (or reuses) the corpus of ``scripts/bench_search.py`` (Hermes-style JSONL), indexes it
into a Hermes home, then measures two figures:

1. **search call**: for every prefix of each typed query (one per keystroke), the call the
   TUI's worker makes (``StoreView.search``) plus turning the rows into screen text
   (``render.result_text``), p50/p95/max in ms;
2. **keystroke to results on screen** (``--pilot``, the default): the real app, headless
   through Textual's pilot at 80x24, typing each query one key at a time; the time from the
   last keystroke until the status line shows the answer for the whole query (debounce,
   worker thread, putting the rows into the result list included; measured by the app
   itself, from the query box's change event to the end of the update).

Usage: .venv/bin/python scripts/bench_tui.py [--messages 100000] [--work DIR] [--repeat 3]
                                             [--no-pilot]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

from hermes_store.home import Home
from hermes_store.sessions.loader import BulkLoader
from hermes_store.tui.app import DEBOUNCE, SearchApp
from hermes_store.tui.backend import SearchRequest, StoreView
from hermes_store.tui.render import result_text

SCRIPTS = Path(__file__).resolve().parent
QUERIES = ["deploy error", "docker build", "database migration failed", '"config server"',
           "timeout OR latency", "python NOT rust", "release backup cluster", "cache*"]


def _bench_search():
    spec = importlib.util.spec_from_file_location("bench_search", SCRIPTS / "bench_search.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(work: Path, messages: int) -> Home:
    """The benchmark home with ``messages`` indexed messages (generated and indexed once)."""
    corpus, home = work / "corpus", Home(work / "home")
    if not corpus.exists():
        began = time.perf_counter()
        which = _bench_search().generate(corpus, messages, None)
        print(f"generated {messages:,} messages with {which} in {time.perf_counter() - began:.1f}s",
              file=sys.stderr)
    db = home.open_db()
    try:
        if not db.scalar("SELECT count(*) FROM messages"):
            began = time.perf_counter()
            BulkLoader(db).run([corpus])
            print(f"indexed in {time.perf_counter() - began:.1f}s", file=sys.stderr)
        total = db.scalar("SELECT count(*) FROM messages")
    finally:
        db.close()
    print(f"corpus: {total:,} messages")
    return home


def ms(samples: list[float]) -> str:
    """``p50 / p95 / max`` in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"{statistics.median(ordered) * 1000:.1f} / {p95 * 1000:.1f} / {ordered[-1] * 1000:.1f}"


def time_calls(home: Home, repeat: int) -> list[float]:
    """Per keystroke: the worker's search call plus rendering its rows, as the TUI makes it."""
    store = StoreView(home)
    samples: list[float] = []
    try:
        store.search(SearchRequest("warm"))
        for _ in range(repeat):
            for query in QUERIES:
                for end in range(1, len(query) + 1):
                    began = time.perf_counter()
                    outcome = store.search(SearchRequest(query[:end]))
                    for row in outcome.rows:
                        result_text(row)
                    samples.append(time.perf_counter() - began)
    finally:
        store.close()
    return samples


async def time_pilot(home: Home, repeat: int) -> list[float]:
    """Per query: last keystroke until the app shows the answer for the whole query."""
    app = SearchApp(home)
    samples: list[float] = []
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(repeat):
            for query in QUERIES:
                await pilot.press("ctrl+u")
                for key in query:
                    await pilot.press(key)
                while app.outcome is None or app.outcome.request.query != query:
                    await asyncio.sleep(0.001)
                samples.append(app.latency)
    return samples


def main(argv: list[str] | None = None) -> int:
    """Build the corpus, run both measurements, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000, help="corpus size in messages")
    parser.add_argument("--work", type=Path, default=Path("/tmp/hermes_store_bench_tui"))
    parser.add_argument("--repeat", type=int, default=3, help="rounds over the query set")
    parser.add_argument("--no-pilot", dest="pilot", action="store_false",
                        help="skip the headless app measurement")
    args = parser.parse_args(argv)
    home = build(args.work / str(args.messages), args.messages)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} at start")
    calls = time_calls(home, args.repeat)
    print(f"search call per keystroke ({len(calls)} keystrokes), p50 / p95 / max ms: {ms(calls)}")
    if args.pilot:
        shown = asyncio.run(time_pilot(home, args.repeat))
        print(f"keystroke to results on screen (debounce {DEBOUNCE * 1000:.0f} ms included, "
              f"{len(shown)} queries), p50 / p95 / max ms: {ms(shown)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
