"""SIGTERM (``kill``, a service manager, a closing terminal multiplexer) ends a command as an exit
does: the progress bar gives the cursor back, the exit status is 143, and what was indexed stays."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

CLI = [sys.executable, "-c", "from hermes_store.cli import main; main()"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "HERMES_STORE_DEBUG")}
    env.update({"TERM": "xterm-256color", "COLUMNS": "120"})
    return env


def _read_until(master: int, wanted: bytes | None, deadline: float) -> bytes:
    chunks: list[bytes] = []
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the writer closed its side
            break
        if not data:
            break
        chunks.append(data)
        if wanted is not None and wanted in b"".join(chunks):
            break
    return b"".join(chunks)


def test_sigterm_during_index_shows_the_cursor_and_exits_143(tmp_path: Path) -> None:
    """``kill PID`` during ``sessions index`` on a terminal left the cursor hidden (the bar's
    ``ESC[?25l`` never undone: the default action killed the process before any clean-up) and
    reported -15; Ctrl-C already restored it."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for i in range(2500):
        (folder / f"20260401_{i:06d}_abcdef.jsonl").write_text(
            json.dumps({"role": "session_meta", "platform": "cli", "timestamp": 1775044800 + i}) + "\n"
            + json.dumps({"role": "user", "content": f"note number {i} about otters", "timestamp": 1775044810 + i})
            + "\n", encoding="utf-8")
    home = tmp_path / "home"
    master, slave = os.openpty()
    proc = subprocess.Popen([*CLI, "--home", str(home), "sessions", "index", str(folder)], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env=_env(), close_fds=True)
    os.close(slave)
    shown = _read_until(master, b"Indexing", time.monotonic() + 120)
    assert b"Indexing" in shown and proc.poll() is None, shown  # the bar is drawn, the run goes on
    proc.send_signal(signal.SIGTERM)
    shown += _read_until(master, None, time.monotonic() + 60)
    os.close(master)
    code = proc.wait(timeout=60)
    assert code == 143, (code, shown[-400:])
    assert b"Traceback" not in shown, shown[-2000:]
    assert shown.rfind(b"\x1b[?25h") > shown.rfind(b"\x1b[?25l"), shown[-400:]  # the cursor is back
    again = subprocess.run([*CLI, "--home", str(home), "sessions", "index", str(folder)], capture_output=True,
                           env=_env(), timeout=600)
    assert again.returncode == 0, again.stderr
    assert b"problems" in again.stdout and b" 0 problems" in again.stdout, again.stdout
