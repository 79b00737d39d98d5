#!/usr/bin/env python3
"""Benchmark the provider's state.db sync when nothing is new (the per-turn cost inside Hermes).

1. Builds a Hermes-shaped ``state.db`` (WAL mode, Hermes' sessions/messages columns) with N
   messages in sessions of 50, and a hermes-store home beside it.
2. Runs the first sync (imports everything) and reports its time.
3. Times R syncs that find nothing new, two ways:
   * ``stat``      -- state.db and its WAL untouched since the last sync (every turn in which
                      Hermes wrote nothing);
   * ``signature`` -- the file was touched but holds no new message (e.g. a checkpoint): the
                      read-only max-id / sessions-aggregate query runs.
4. Appends one message and times the incremental sync that imports it.

Prints median and p95 in milliseconds. The target is <= 5 ms for a sync that finds nothing
new at 100k indexed messages.

Usage: scripts/bench_state_sync.py [--messages 100000] [--repeat 200] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermes_store.db import Database  # noqa: E402
from hermes_store.home import Home  # noqa: E402
from hermes_store.sessions.state_sync import StateDbSync  # noqa: E402

SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
  model_config TEXT, system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL,
  ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
  input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, title TEXT, cwd TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
  role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
  timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, active INTEGER DEFAULT 1,
  compacted INTEGER DEFAULT 0);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
"""
WORDS = ("deploy cluster kubernetes ingress certificate renew backup restore postgres index query "
         "migration rollback latency cache redis queue worker retry timeout budget review").split()


def build_state_db(path: Path, messages: int) -> None:
    db = Database(path, migrate=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(SCHEMA)
    per_session = 50
    start = 1_760_000_000.0
    with db.write():
        for s in range(0, messages, per_session):
            sid = f"20260101_{s:08d}"
            db.execute("INSERT INTO sessions (id, source, model, started_at, ended_at, title) VALUES "
                       "(?, 'cli', 'nous/hermes-4', ?, ?, ?)", (sid, start + s, start + s + 600, f"session {s}"))
            rows = []
            for i in range(min(per_session, messages - s)):
                text = " ".join(WORDS[(s + i + k) % len(WORDS)] for k in range(12))
                rows.append((sid, "user" if i % 2 == 0 else "assistant", text, start + s + i))
            db.executemany("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                           rows)
    db.close()


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    print(f"{name:<28} median {statistics.median(ordered):8.3f} ms   p95 {p95:8.3f} ms   (n={len(ordered)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-state-sync-"))
    workdir.mkdir(parents=True, exist_ok=True)
    state_db = workdir / "state.db"
    if state_db.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(str(state_db) + suffix).unlink(missing_ok=True)
    home = Home(workdir / "home")
    print(f"building a state.db with {args.messages:,} messages in {workdir} ...")
    build_state_db(state_db, args.messages)
    sync = StateDbSync(home, state_db)
    first = sync.sync()
    print(f"first sync: {first.status}, {first.messages_added:,} messages in {first.seconds:.2f} s")
    if first.status != "imported":
        print(f"error: {first.error}", file=sys.stderr)
        return 1

    def noop() -> None:
        assert sync.sync().status == "unchanged"

    report("nothing new (stat)", timed(noop, args.repeat))

    def touched() -> None:
        stamp = time.time()
        os.utime(state_db, (stamp, stamp))
        sync._fingerprint = None  # as after a checkpoint: the stat no longer matches
        assert sync.sync().status == "unchanged"

    report("nothing new (signature)", timed(touched, args.repeat))
    db = Database(state_db, migrate=False)
    db.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES "
               "('20260101_00000000', 'user', 'one more message', ?)", (time.time(),))
    db.close()
    one = sync.sync()
    print(f"one new message: {one.status}, {one.messages_added} added in {one.seconds * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
