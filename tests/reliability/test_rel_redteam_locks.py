"""Red team (issue 14 point 10): lock holders that never release.

A child process takes ``MEMORY.md.lock`` (or a write transaction on the database) and
sleeps for an hour. Every write door must give up within its configured bound with a
clear error (the lock file named, no traceback), reads must go on, and nothing changes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from hermes_store.home import Home

HOLD_LOCK = textwrap.dedent("""
    import sys, time
    from filelock import FileLock
    lock = FileLock(sys.argv[1]); lock.acquire()
    print("held", flush=True); time.sleep(3600)
""")
HOLD_DB = textwrap.dedent("""
    import sys, time, apsw
    con = apsw.Connection(sys.argv[1]); con.execute("BEGIN IMMEDIATE")
    print("held", flush=True); time.sleep(3600)
""")
CLI = [sys.executable, "-c", "from hermes_store.cli import main; main()"]


def _hold(script: str, target: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", script, target], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"held"
    return proc


def _release(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait(timeout=10)


def _cli(home: Home, *argv: str) -> tuple[subprocess.CompletedProcess[bytes], float]:
    env = {**os.environ, "HERMES_HOME": str(home.root), "HERMES_STORE_LOCK_TIMEOUT": "1",
           "HERMES_STORE_BUSY_TIMEOUT": "1"}
    start = time.monotonic()
    proc = subprocess.run([*CLI, "--home", str(home.root), *argv], capture_output=True, timeout=30, env=env)
    return proc, time.monotonic() - start


@pytest.fixture
def store(tmp_path) -> Home:
    home = Home(tmp_path / "home").ensure()
    proc, _ = _cli(home, "memory", "add", "first entry kept")
    assert proc.returncode == 0, proc.stderr
    proc, _ = _cli(home, "facts", "add", "The kiwi service runs on port 8080")
    assert proc.returncode == 0, proc.stderr
    return home


def test_a_memory_lock_that_never_releases(store):
    holder = _hold(HOLD_LOCK, str(store.memories_dir / "MEMORY.md.lock"))
    try:
        for argv in (["memory", "add", "second entry"], ["tool", "memory",
                     '{"action": "add", "target": "memory", "content": "third entry"}'],
                     ["memory", "remove", "first entry"]):
            proc, seconds = _cli(store, *argv)
            err = (proc.stdout + proc.stderr).decode(errors="replace")
            assert seconds < 15, (argv, seconds)
            assert "Traceback" not in err, err
            assert "MEMORY.md.lock" in err, (argv, err)
        proc, seconds = _cli(store, "memory", "show")
        assert b"first entry kept" in proc.stdout and seconds < 15, proc.stderr
    finally:
        _release(holder)
    text = (store.memories_dir / "MEMORY.md").read_text(encoding="utf-8")
    assert "first entry kept" in text and "second entry" not in text and "third entry" not in text


def test_a_database_writer_that_never_commits(store):
    holder = _hold(HOLD_DB, str(store.db_path))
    try:
        for argv in (["facts", "add", "The kiwi cache is redis"], ["tool", "fact_store",
                     '{"action": "add", "content": "The kiwi queue is rabbit"}'],
                     ["facts", "feedback", "1", "helpful"]):
            proc, seconds = _cli(store, *argv)
            err = (proc.stdout + proc.stderr).decode(errors="replace")
            assert seconds < 20, (argv, seconds)
            assert "Traceback" not in err, err
            assert proc.returncode != 0 or '"success": false' in err, (argv, err)
        for argv in (["facts", "list"], ["recall", "kiwi"], ["tool", "recall", '{"query": "kiwi"}']):
            proc, seconds = _cli(store, *argv)
            assert b"8080" in proc.stdout and seconds < 20, (argv, proc.stderr)
    finally:
        _release(holder)
