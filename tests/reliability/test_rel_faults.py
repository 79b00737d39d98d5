"""SIGKILL at random points of every write path; the store is always consistent afterwards.

Each trial forks a child that performs the operation (in a loop, or once for
ingest and prune), kills it with SIGKILL after a random delay, then checks:

* the .md files decode, round-trip and equal one of the states the sequence of
  operations passes through (a complete old or new version, never a torn one);
* ``PRAGMA integrity_check`` and every FTS5 ``integrity-check`` pass;
* ingest: re-running it completes with exact session/message counts;
* prune: no orphan rows, recent/live sessions never touched, a re-run finishes the job;
* facts: every fact holds one complete version (content, vector, entity links).

``HERMES_REL_TRIALS`` sets the slow trial count (default 50); the default run does 3.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import time
from pathlib import Path

import pytest
from rel_helpers import db_problems, kill_at_random_point, knob, read_md, run_forked, tmp_leftovers

from hermes_store.builtin.store import MemoryStore
from hermes_store.db import Database
from hermes_store.facts.store import FactStore
from hermes_store.home import Home
from hermes_store.sessions import SessionIndex, index_paths, prune_sessions
from hermes_store.sessions.live import new_session_id

QUICK = 3
BIG = 10**6


def trials(slow: bool) -> int:
    return knob("TRIALS", 50) if slow else QUICK


def _report(name: str, consistent: int, total: int, killed: int) -> None:
    print(f"\nRELIABILITY SIGKILL {name}: {consistent}/{total} trials consistent "
          f"({killed} killed mid-operation)")


# --------------------------------------------------------------------------- memory write


def _memory_ops(trial: int, count: int) -> list[tuple[str, str]]:
    """add e_i, and from the 4th on remove e_{i-3}: adds and removes both hit the file."""
    ops = []
    for i in range(count):
        ops.append(("add", f"trial {trial} entry {i}"))
        if i >= 3:
            ops.append(("remove", f"trial {trial} entry {i - 3}"))
    return ops


def _states(start: list[str], ops: list[tuple[str, str]]) -> list[list[str]]:
    states, current = [list(start)], list(start)
    for action, text in ops:
        current = current + [text] if action == "add" else [e for e in current if e != text]
        states.append(list(current))
    return states


def _memory_write_trials(home: Home, count: int) -> tuple[int, int]:
    rng = random.Random(1234)
    consistent = killed = 0
    for trial in range(count):
        before = read_md(home.memory_file)
        ops = _memory_ops(trial, 400)

        def body(ops=ops):
            store = MemoryStore(home, memory_char_limit=BIG, user_char_limit=BIG)
            for action, text in ops:
                result = store.add("memory", text) if action == "add" else store.remove("memory", text)
                assert result["success"], result

        killed += kill_at_random_point(body, max_delay=0.25, rng=rng)
        after = read_md(home.memory_file)
        assert after in _states(before, ops), f"trial {trial}: not a state of the sequence"
        assert db_problems(home.db_path) == [], f"trial {trial}"
        consistent += 1
    # the store still works after all the kills (no stale lock), and the next session start
    # sweeps temp files the killed writers left behind (once they are old enough)
    store = MemoryStore(home, memory_char_limit=BIG, user_char_limit=BIG)
    assert store.add("memory", "after the storm")["success"]
    for leftover in home.memories_dir.glob("*.tmp"):
        os.utime(leftover, (time.time() - 7200, time.time() - 7200))
    store.load_from_disk()
    assert tmp_leftovers(home.memories_dir) == []
    store.close()
    return consistent, killed


# --------------------------------------------------------------------------- batch


def _batch_ops(k: int) -> list[dict]:
    ops = [{"action": "replace", "old_text": f"counter {k}", "content": f"counter {k + 1}"},
           {"action": "add", "content": f"item {k}"}]
    if k >= 3:
        ops.append({"action": "remove", "old_text": f"item {k - 3}"})
    return ops


def _batch_state(k: int) -> list[str]:
    return [f"counter {k}"] + [f"item {i}" for i in range(max(0, k - 3), k)]


def _batch_trials(home: Home, count: int) -> tuple[int, int]:
    rng = random.Random(99)
    store = MemoryStore(home, memory_char_limit=BIG, user_char_limit=BIG)
    assert store.add("user", "counter 0")["success"]
    store.close()
    consistent = killed = 0
    for trial in range(count):
        entries = read_md(home.user_file)
        k = int(entries[0].split()[1])
        assert entries == _batch_state(k), f"trial {trial}: {entries[:3]}"

        def body(k=k):
            store = MemoryStore(home, memory_char_limit=BIG, user_char_limit=BIG)
            for step in range(k, k + 10_000):
                result = store.apply_batch("user", _batch_ops(step))
                assert result["success"], result

        killed += kill_at_random_point(body, max_delay=0.25, rng=rng)
        entries = read_md(home.user_file)
        k2 = int(entries[0].split()[1])
        assert k2 >= k and entries == _batch_state(k2), f"trial {trial}: torn batch {entries[:4]}"
        assert db_problems(home.db_path) == [], f"trial {trial}"
        consistent += 1
    return consistent, killed


# --------------------------------------------------------------------------- ingest

FILES, PER_FILE = 30, 400


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory) -> Path:
    """30 Hermes JSONL transcripts x 400 messages (12,000 messages)."""
    root = tmp_path_factory.mktemp("transcripts") / "sessions"
    root.mkdir()
    for f in range(FILES):
        lines = [json.dumps({"role": "session_meta", "model": "m", "platform": "cli",
                             "timestamp": 1_760_000_000 + f})]
        for m in range(PER_FILE):
            lines.append(json.dumps({"role": "user" if m % 2 == 0 else "assistant",
                                     "content": f"file {f} message {m} about deploy and rollback "
                                                f"{'lorem ipsum ' * (m % 7)}",
                                     "timestamp": 1_760_000_000 + f * 1000 + m}))
        (root / f"20251001_0000{f:02d}_abc{f:03d}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _session_counts(home: Home) -> tuple[int, int, list]:
    db = Database(home.db_path)
    try:
        sessions = int(db.scalar("SELECT COUNT(*) FROM sessions"))
        messages = int(db.scalar("SELECT COUNT(*) FROM messages"))
        bad = db.query(
            "SELECT s.id, s.message_count, COUNT(m.id) AS n, COUNT(DISTINCT m.seq) AS seqs,"
            " MAX(m.seq) AS top FROM sessions s LEFT JOIN messages m ON m.session_id = s.id"
            " GROUP BY s.id HAVING s.message_count <> n OR seqs <> n OR (n > 0 AND top <> n - 1)")
        return sessions, messages, bad
    finally:
        db.close()


def _ingest_trials(tmp_path: Path, transcripts: Path, count: int) -> tuple[int, int]:
    rng = random.Random(7)
    calibrate = Home(tmp_path / "calibrate").ensure()
    started = time.perf_counter()
    run_forked(lambda: index_paths(calibrate, [transcripts], batch_messages=1000))
    duration = time.perf_counter() - started
    consistent = killed = 0
    for trial in range(count):
        home = Home(tmp_path / f"ingest{trial}").ensure()
        killed += kill_at_random_point(
            lambda home=home: index_paths(home, [transcripts], batch_messages=1000),
            max_delay=duration, rng=rng)
        assert db_problems(home.db_path) == [], f"trial {trial}"
        summary = index_paths(home, [transcripts], batch_messages=1000)
        assert summary["errors"] == []
        assert _session_counts(home) == (FILES, FILES * PER_FILE, []), f"trial {trial}"
        again = index_paths(home, [transcripts])
        assert again["messages_added"] == 0 and again["sessions_added"] == 0
        assert again["skipped"] == FILES * PER_FILE
        assert db_problems(home.db_path) == [], f"trial {trial}"
        shutil.rmtree(home.root)
        consistent += 1
    return consistent, killed


# --------------------------------------------------------------------------- prune

NOW = 1_780_000_000.0
DAY = 86_400.0
OLD_LINEAGES, RECENT, OPEN_OLD = 900, 60, 15


@pytest.fixture(scope="module")
def prune_template(tmp_path_factory) -> tuple[Path, set[str], set[str]]:
    """A store with 900 old lineages (1-3 sessions, 4 messages each), 60 recent sessions and
    15 old live sessions never ended. Returns (db file, ids to delete, ids to keep)."""
    home = Home(tmp_path_factory.mktemp("prune_template") / "home").ensure()
    rng = random.Random(5)
    doomed, kept = set(), set()
    with SessionIndex(home) as index, index.db.write():
        def session(started: float, parent: str | None, end: bool) -> str:
            sid = new_session_id(started) + f"{len(doomed) + len(kept):05d}"
            index.create_session(sid, source="cli", started_at=started, parent_session_id=parent)
            for m in range(4):
                index.append_message(sid, "user" if m % 2 == 0 else "assistant",
                                     f"prune fixture {sid} message {m} about kafka",
                                     timestamp=started + m)
            if end:
                index.end_session(sid, ended_at=started + 10)
            return sid

        for _ in range(OLD_LINEAGES):
            parent = None
            started = NOW - rng.uniform(40, 400) * DAY
            for _depth in range(rng.randint(1, 3)):
                parent = session(started, parent, True)
                doomed.add(parent)
                started += 60
        for _ in range(RECENT):
            kept.add(session(NOW - rng.uniform(0, 20) * DAY, None, True))
        for _ in range(OPEN_OLD):
            kept.add(session(NOW - 200 * DAY, None, False))
    return home.db_path, doomed, kept


def _prune_invariants(db: Database, kept: set[str]) -> None:
    present = {r["id"] for r in db.query("SELECT id FROM sessions")}
    assert kept <= present, "a recent or live session was pruned"
    assert db.scalar("SELECT COUNT(*) FROM messages WHERE session_id NOT IN (SELECT id FROM sessions)") == 0
    assert not db.query(
        "SELECT s.id FROM sessions s WHERE s.message_count <>"
        " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)")


def _prune_trials(tmp_path: Path, template, count: int) -> tuple[int, int]:
    db_file, doomed, kept = template
    rng = random.Random(11)
    durations = []  # the shortest of three runs: one slowed by a busy machine would put most
    for n in range(3):  # kill points after the prune had finished
        calibrate = tmp_path / f"calibrate{n}.db"
        shutil.copy(db_file, calibrate)
        started = time.perf_counter()
        run_forked(lambda calibrate=calibrate: prune_sessions(Database(calibrate), 30 * DAY, now=NOW))
        durations.append(time.perf_counter() - started)
    # three-quarters of it: the calibration's fork, open and exit are part of its time, and a
    # delay drawn from its last part often came after a trial had finished (24 of 50 killed)
    duration = 0.75 * min(durations)
    consistent = killed = 0
    for trial in range(count):
        home = Home(tmp_path / f"prune{trial}").ensure()
        shutil.copy(db_file, home.db_path)
        killed += kill_at_random_point(
            lambda home=home: prune_sessions(Database(home.db_path), 30 * DAY, now=NOW),
            max_delay=duration, rng=rng)
        assert db_problems(home.db_path) == [], f"trial {trial}"
        db = Database(home.db_path)
        try:
            _prune_invariants(db, kept)
            prune_sessions(db, 30 * DAY, now=NOW)
            assert {r["id"] for r in db.query("SELECT id FROM sessions")} == kept
            _prune_invariants(db, kept)
        finally:
            db.close()
        assert db_problems(home.db_path) == [], f"trial {trial}"
        shutil.rmtree(home.root)
        consistent += 1
    assert doomed and not doomed & kept
    return consistent, killed


# --------------------------------------------------------------------------- fact update

FACTS = 20
_VERSION = re.compile(r"^Fact (\d+) version (\d+): the (\w+) service runs on (\w+) in region (\w+)$")
_WORDS = ("kafka", "postgres", "redis", "nginx", "vault", "consul", "minio", "etcd")


def _fact_text(i: int, version: int) -> str:
    a, b, c = (_WORDS[(i + version + n) % len(_WORDS)] for n in range(3))
    return f"Fact {i} version {version}: the {a} service runs on {b} in region {c}"


def _links(db: Database, fact_id: int) -> set[str]:
    return {r["name"].lower() for r in db.query(
        "SELECT e.name FROM fact_entities fe JOIN entities e USING(entity_id) WHERE fe.fact_id=?",
        (fact_id,))}


def _expected_links(content: str) -> set[str]:
    """The entity links a fresh store makes for ``content`` (what a complete update leaves)."""
    with FactStore(Database(":memory:")) as scratch:
        fid = scratch.add_fact(content, "project")["fact_id"]
        return _links(scratch.db, fid)


def _fact_trials(home: Home, count: int) -> tuple[int, int]:
    rng = random.Random(3)
    with FactStore(home) as store:
        ids = [store.add_fact(_fact_text(i, 0), "project")["fact_id"] for i in range(FACTS)]
    consistent = killed = 0
    for trial in range(count):
        def body():
            with FactStore(home) as store:
                version = {}
                for step in range(100_000):
                    i = step % FACTS
                    current = store.get_fact(ids[i])["content"]
                    version[i] = int(_VERSION.match(current).group(2)) + 1
                    store.update_fact(ids[i], content=_fact_text(i, version[i]),
                                      trust_delta=0.01 if step % 2 else -0.01)

        killed += kill_at_random_point(body, max_delay=0.4, rng=rng)
        assert db_problems(home.db_path) == [], f"trial {trial}"
        with FactStore(home) as store:
            db = store.db
            for i, fid in enumerate(ids):
                row = db.query_one("SELECT content, hrr_vector, trust_score FROM facts WHERE fact_id=?",
                                   (fid,))
                match = _VERSION.match(row["content"])
                assert match and int(match.group(1)) == i, row["content"]
                assert row["content"] == _fact_text(i, int(match.group(2)))
                assert row["hrr_vector"] is not None and 0.0 <= row["trust_score"] <= 1.0
                assert _links(db, fid) == _expected_links(row["content"]), f"fact {fid} links"
            assert db.scalar("SELECT COUNT(*) FROM fact_entities WHERE fact_id NOT IN"
                             " (SELECT fact_id FROM facts)") == 0
            assert store.count() == FACTS
            assert store.search("service region", limit=5)
        consistent += 1
    return consistent, killed


# --------------------------------------------------------------------------- the trials

# write path -> runner(request, count) -> (consistent trials, trials killed mid-operation)
SIGKILL_RUNS = {
    "memory write": lambda req, n: _memory_write_trials(req.getfixturevalue("home"), n),
    "batch": lambda req, n: _batch_trials(req.getfixturevalue("home"), n),
    "ingest": lambda req, n: _ingest_trials(req.getfixturevalue("tmp_path"),
                                            req.getfixturevalue("transcripts"), n),
    "prune": lambda req, n: _prune_trials(req.getfixturevalue("tmp_path"),
                                          req.getfixturevalue("prune_template"), n),
    "fact update": lambda req, n: _fact_trials(req.getfixturevalue("home"), n),
}


@pytest.mark.parametrize("path", SIGKILL_RUNS)
def test_sigkill_quick(request, path):
    consistent, _ = SIGKILL_RUNS[path](request, trials(False))
    assert consistent == QUICK


@pytest.mark.slow
@pytest.mark.parametrize("path", SIGKILL_RUNS)
def test_sigkill(request, path):
    total = trials(True)
    consistent, killed = SIGKILL_RUNS[path](request, total)
    assert consistent == total and killed >= total // 2
    _report(path, consistent, total, killed)


def test_stale_temp_files_swept_fresh_ones_kept(home):
    """A temp file from a writer killed an hour ago is removed at load; a fresh one (a writer
    that may still be running) is left alone."""
    stale = home.memories_dir / ".mem_killed01.tmp"
    fresh = home.memories_dir / ".mem_running.tmp"
    for path in (stale, fresh):
        path.write_text("partial")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    store = MemoryStore(home)
    store.load_from_disk()
    store.close()
    assert not stale.exists() and fresh.exists()
