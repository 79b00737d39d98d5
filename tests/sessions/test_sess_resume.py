"""Crash safety: kill the indexer mid-import, run it again, and every count is exact."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from sess_helpers import index_json, write_jsonl

from hermes_store.db import Database

FILES = 8  # the kill lands at file 2 of 8: room for it on a loaded machine, with a faster loader
PER_FILE = 15_000
TOTAL = FILES * PER_FILE


def _corpus(root):
    for f in range(FILES):
        path = root / "sessions" / f"20260301_0000{f:02d}_abc{f:03d}.jsonl"
        write_jsonl(path, [{"role": "session_meta", "model": "m", "platform": "cli"}] + [
            {"role": "user" if i % 2 == 0 else "assistant",
             "content": f"message {i} of file {f} about topic{i % 97} and word{i % 13}",
             "timestamp": 1767000000 + i}
            for i in range(PER_FILE)])
    return root / "sessions"


def _default_sigint() -> None:
    """In the child before exec: SIGINT as a terminal delivers it (a test worker may hand its
    children SIGINT ignored or blocked, and Python then never raises KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _child(home, corpus) -> subprocess.Popen:
    code = "from hermes_store.cli import main; main()"
    return subprocess.Popen(
        [sys.executable, "-c", code, "--home", str(home.root), "sessions", "index",
         "--batch-size", "300", "--fts-mode", "batch", str(corpus)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_default_sigint)


def _wait_for_progress(home, child) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if home.db_path.exists():
            try:
                with Database(home.db_path, migrate=False) as db:
                    if db.table_exists("messages"):
                        count = db.scalar("SELECT COUNT(*) FROM messages")
                        if count >= PER_FILE + 1000:  # one file done, the next one half-way
                            return int(count)
            except Exception:
                pass
        if child.poll() is not None:
            break
        time.sleep(0.01)
    raise AssertionError("the child finished or stalled before it could be interrupted")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_kill_mid_import_then_resume(home, tmp_path, run, sig):
    corpus = _corpus(tmp_path)
    child = _child(home, corpus)
    seen = _wait_for_progress(home, child)
    child.send_signal(sig)
    child.wait(timeout=30)
    if sig == signal.SIGINT:
        err = child.stderr.read()
        if child.returncode != 130:  # say which: the run ended before the signal, or it was lost
            with Database(home.db_path) as db:
                done = db.scalar("SELECT COUNT(*) FROM messages")
            raise AssertionError(f"exit {child.returncode} after SIGINT at {seen} of {TOTAL} messages; "
                                 f"{done} committed; stderr: {err[-2000:]!r}")
        assert b"resume" in err
    with Database(home.db_path) as db:
        partial = db.scalar("SELECT COUNT(*) FROM messages")
    assert seen <= partial < TOTAL, "the kill must land mid-import"

    code, summary = index_json(run, corpus)
    assert code == 0 and summary["errors"] == []
    assert summary["messages_added"] == TOTAL - partial
    assert summary["skipped"] == partial
    with Database(home.db_path) as db:
        assert db.scalar("SELECT COUNT(*) FROM messages") == TOTAL
        assert db.scalar("SELECT COUNT(*) FROM sessions") == FILES
        for row in db.query("SELECT s.id, s.message_count, COUNT(m.id) AS n, MIN(m.seq) AS lo,"
                            " MAX(m.seq) AS hi FROM sessions s JOIN messages m ON m.session_id = s.id"
                            " GROUP BY s.id"):
            assert row["message_count"] == row["n"] == PER_FILE
            assert (row["lo"], row["hi"]) == (0, PER_FILE - 1)
        assert db.scalar("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'topic5'") \
            == FILES * len(range(5, PER_FILE, 97))
        db.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
        # the bulk path restored its trigger
        assert db.scalar("SELECT COUNT(*) FROM sqlite_schema WHERE name='messages_fts_ai'") == 1
    code, again = index_json(run, corpus)
    assert again["messages_added"] == 0 and again["skipped"] == TOTAL


def test_two_concurrent_runs_add_everything_once(home, tmp_path):
    corpus = _corpus(tmp_path)
    code = "from hermes_store.cli import main; main()"
    args = [sys.executable, "-c", code, "--home", str(home.root), "sessions", "index", "--json",
            str(corpus)]
    children = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for _ in range(2)]
    outputs = [child.communicate(timeout=300) for child in children]
    assert [child.returncode for child in children] == [0, 0], [err for _, err in outputs]
    summaries = [json.loads(out) for out, _ in outputs]
    assert sum(s["messages_added"] for s in summaries) == TOTAL
    assert sorted(s["skipped"] for s in summaries) == [0, TOTAL]
    with Database(home.db_path) as db:
        assert db.scalar("SELECT COUNT(*) FROM messages") == TOTAL
        assert db.scalar("SELECT SUM(message_count) FROM sessions") == TOTAL
