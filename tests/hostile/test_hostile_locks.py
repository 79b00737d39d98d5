"""Issue 14 point 10: bounded lock waits, truthful provenance when the DB is busy, clean CLI errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

HOLD_LOCK = """
import sys, time
from filelock import FileLock
lock = FileLock(sys.argv[1]); lock.acquire()
print("held", flush=True); time.sleep(float(sys.argv[2]))
"""
HOLD_DB = """
import sys, time, apsw
conn = apsw.Connection(sys.argv[1]); conn.set_busy_timeout(5000)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True); time.sleep(float(sys.argv[2])); conn.execute("ROLLBACK")
"""


def _hold(script: str, target: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", script, str(target), str(seconds)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _cli(home, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    exe = os.path.join(os.path.dirname(sys.executable), "hermes-store")
    return subprocess.run([exe, "--home", str(home.root), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def test_memory_lock_wait_is_bounded_and_names_the_lock(home):
    (home.memories_dir / "MEMORY.md").write_text("first note\n", encoding="utf-8")
    lock = home.memories_dir / "MEMORY.md.lock"
    holder = _hold(HOLD_LOCK, lock, 30)
    try:
        env = {"HERMES_STORE_LOCK_TIMEOUT": "1"}
        started = time.monotonic()
        added = _cli(home, "memory", "add", "second note", env=env)
        add_seconds = time.monotonic() - started
        started = time.monotonic()
        shown = _cli(home, "memory", "show", env=env)
        show_seconds = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    reply = json.loads(added.stdout)
    assert reply["success"] is False and str(lock) in reply["error"] and "Nothing was changed" in reply["error"]
    assert add_seconds < 8 and show_seconds < 8, (add_seconds, show_seconds)
    assert shown.returncode == 0 and "first note" in shown.stdout
    assert (home.memories_dir / "MEMORY.md").read_text() == "first note\n"


def test_busy_database_queues_provenance_so_history_never_lies(home):
    from hermes_store.builtin.store import MemoryStore

    MemoryStore(home).load_from_disk()  # create the database
    holder = _hold(HOLD_DB, home.db_path, 4)
    try:
        added = _cli(home, "memory", "add", "deploy with make release", "--session-id", "s-busy",
                     env={"HERMES_STORE_BUSY_TIMEOUT": "1"})
    finally:
        holder.wait(timeout=30)
    assert json.loads(added.stdout)["success"] is True
    assert (home.memories_dir / "provenance.pending.jsonl").exists()
    history = json.loads(_cli(home, "memory", "history", "--json").stdout)
    events = history if isinstance(history, list) else history.get("events", history)
    added_events = [e for e in events if e.get("new_text") == "deploy with make release"]
    assert added_events and added_events[0]["origin"] == "cli" and added_events[0]["session_id"] == "s-busy"
    assert not any(e.get("origin") == "hand_edit" for e in events)
    assert not (home.memories_dir / "provenance.pending.jsonl").exists()


@pytest.mark.parametrize("argv", [["facts", "add", "the broker runs on port 9092"],
                                  ["sessions", "delete", "nope"], ["memory", "restore", "1"]])
def test_cli_reports_a_busy_database_without_a_traceback(home, argv):
    from hermes_store.facts.store import FactStore

    FactStore(home).close()
    holder = _hold(HOLD_DB, home.db_path, 20)
    try:
        started = time.monotonic()
        result = _cli(home, *argv, env={"HERMES_STORE_BUSY_TIMEOUT": "1", "HERMES_STORE_LOCK_TIMEOUT": "1"})
        seconds = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert "Traceback" not in result.stderr + result.stdout
    assert seconds < 15
    if argv[0] == "facts":
        assert result.returncode != 0 and str(home.db_path) in result.stderr and "busy" in result.stderr
