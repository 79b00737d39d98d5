"""``sessions watch`` as a real subprocess: appends, new files, rotation and Hermes state.db."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sess_helpers import FIXTURES

from hermes_store.db import Database
from hermes_store.sessions.search import search_messages

CODEX = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
LATENCY = 3.0  # seconds from a write to the message being searchable (about 1 s on a quiet machine;
# the suite runs this beside other tests on 2 cores, where a truncation took 2.4 s once)


def _cc_line(uuid: str, text: str, role: str = "user") -> str:
    return json.dumps({"type": role, "sessionId": "watch-cc", "uuid": uuid,
                       "timestamp": "2026-11-02T09:00:00Z", "cwd": "/srv",
                       "message": {"role": role, "content": text}}) + "\n"


def _codex_line(text: str) -> str:
    return json.dumps({"timestamp": "2025-10-29T01:00:00.000Z", "type": "response_item",
                       "payload": {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]}}) + "\n"


def _found(home, word: str) -> bool:
    db = home.open_db()
    try:
        return bool(search_messages(db, word).results)
    finally:
        db.close()


def _wait_found(home, word: str, limit: float = LATENCY) -> float:
    started = time.monotonic()
    while time.monotonic() - started < limit + 5:  # measured below; the extra keeps the failure informative
        if _found(home, word):
            return time.monotonic() - started
        time.sleep(0.05)
    return float("inf")


@pytest.fixture
def sources(tmp_path, state_db):
    root = tmp_path / "agents"
    (root / "claude").mkdir(parents=True)
    (root / "codex").mkdir()
    cc = root / "claude" / "watch-cc.jsonl"
    cc.write_text(_cc_line("u1", "first line about kestrel"))
    codex = root / "codex" / CODEX.name
    shutil.copy(CODEX, codex)
    hermes = root / "hermes"
    shutil.copytree(state_db.parent, hermes)
    return {"root": root, "cc": cc, "codex": codex, "state": hermes / "state.db"}


def _start(home, *args: str) -> subprocess.Popen:
    env = {**os.environ, "HERMES_HOME": str(home.root)}
    env.pop("HERMES_STORE_DATABASE_URL", None)
    return subprocess.Popen([sys.executable, "-c", "from hermes_store.cli import main; main()",
                             "sessions", "watch", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ready(home, proc, word: str) -> None:
    if _wait_found(home, word, 15) == float("inf"):
        proc.kill()
        pytest.fail("watch never indexed the initial files: " + proc.communicate()[1])


@pytest.mark.parametrize("mode", ["events", "polling"])
def test_appends_new_files_rotation_and_state_db_are_indexed_within_the_bound(home, sources, mode):
    proc = _start(home, str(sources["root"]), *(["--poll", "--interval", "0.2"] if mode == "polling" else []))
    try:
        _ready(home, proc, "kestrel")
        with sources["cc"].open("a") as handle:  # Claude Code appends a line
            handle.write(_cc_line("u2", "second line about ptarmigan", "user"))
        assert _wait_found(home, "ptarmigan") <= LATENCY
        with sources["codex"].open("a") as handle:  # a Codex rollout grows
            handle.write(_codex_line("now rename the wombat module"))
        assert _wait_found(home, "wombat") <= LATENCY
        db = Database(sources["state"], migrate=False)  # Hermes writes its state.db (WAL or not)
        session_id = db.scalar("SELECT id FROM sessions LIMIT 1")
        db.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                   (session_id, "user", "what about the quokka cache", time.time()))
        db.close()
        assert _wait_found(home, "quokka") <= LATENCY
        new = sources["root"] / "claude" / "watch-new.jsonl"  # a new transcript appears
        new.write_text(_cc_line("n1", "a brand new narwhal session").replace("watch-cc", "watch-new"))
        assert _wait_found(home, "narwhal") <= LATENCY
        # rotation: the file is replaced by a shorter one with other content (prefix hash differs)
        rotated = sources["cc"].with_suffix(".tmp")
        rotated.write_text(_cc_line("r1", "after rotation the ocelot"))
        os.replace(rotated, sources["cc"])
        assert _wait_found(home, "ocelot") <= LATENCY
        # truncation in place, then new content
        sources["codex"].write_text(CODEX.read_text().replace("count the lines", "count the axolotl lines"))
        assert _wait_found(home, "axolotl") <= LATENCY
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode in (0, 130), err
    assert "Traceback" not in err


def test_sigterm_exits_cleanly_and_the_store_is_whole(home, sources):
    proc = _start(home, str(sources["root"]))
    _ready(home, proc, "kestrel")
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    db = home.open_db()
    try:
        assert db.scalar("PRAGMA integrity_check") == "ok"
        assert db.scalar("SELECT count(*) FROM messages") > 0
    finally:
        db.close()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _idle_cpu(home, sources, seconds: float) -> float:
    proc = _start(home, str(sources["root"]))
    try:
        _ready(home, proc, "kestrel")
        time.sleep(0.5)
        before = _cpu_seconds(proc.pid)
        time.sleep(seconds)
        return (_cpu_seconds(proc.pid) - before) / seconds
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU time from /proc")
def test_idle_cpu_is_near_zero(home, sources):
    assert _idle_cpu(home, sources, 3.0) < 0.02  # under 2 % of one core while nothing changes


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU time from /proc")
def test_idle_cpu_over_10s(home, sources):
    share = _idle_cpu(home, sources, 10.0)
    print(f"idle CPU over 10 s: {share * 100:.2f} % of one core")
    assert share < 0.01


def test_the_catch_up_line_counts_the_files_read_not_the_paths_watched(home, tmp_path):
    """Watching one folder of four transcripts printed "indexed 23 messages (4 new sessions) from
    1 file" (the folder counted as the file); it is the four files read."""
    folder = tmp_path / "transcripts"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "sample_home" / "sessions", folder)
    proc = _start(home, str(folder))
    try:
        _ready(home, proc, "crontab")
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "indexed 23 messages (4 new sessions) from 4 files" in err, err
