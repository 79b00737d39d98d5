"""Ctrl-C typed in a real terminal (tmux): the terminal echoes ``^C`` at the cursor, and our
"Interrupted." line was printed right after it ("^CInterrupted: committed batches are kept...").
The line now starts with a carriage return written straight to the terminal (through the
stored-text filter it would have shown as ``\\u000d``), so it replaces the ``^C``."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.tui.test_tui_tmux import Tmux

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _corpus(folder: Path, files: int = 1500) -> Path:
    folder.mkdir()
    words = "alpha beta gamma delta deploy backup cron server nginx postgres kafka redis docker".split()
    for n in range(files):
        lines = [{"role": "session_meta", "platform": "cli", "timestamp": 1770000000 + n * 100}]
        lines += [{"role": "user" if i % 2 == 0 else "assistant", "timestamp": 1770000000 + n * 100 + i,
                   "content": " ".join(words[(n + i + k) % len(words)] for k in range(60))} for i in range(20)]
        (folder / f"202601{n % 28 + 1:02d}_{n:06d}_abcdef.jsonl").write_text(
            "\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return folder


def test_ctrl_c_leaves_no_caret_c_before_the_message(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    command = (f"cd {ROOT} && TERM=xterm-256color {sys.executable} -m hermes_store.cli --color never "
               f"--home {tmp_path / 'home'} sessions index {corpus}; echo rc=$?; sleep 60")
    tmux = Tmux(command)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "home" / "hermes_store.db").exists():  # indexing has begun
            assert time.monotonic() < deadline, tmux.screen()
            time.sleep(0.05)
        time.sleep(0.3)
        tmux.keys("C-c")
        screen = tmux.wait_for("rc=", timeout=60)
    finally:
        tmux.close()
    assert "rc=130" in screen, screen
    lines = [line for line in screen.splitlines() if line.strip()]
    assert "Interrupted: committed batches are kept; run the same command to resume." in lines, screen
    assert "^C" not in screen and "\\u000d" not in screen, screen


def test_ctrl_c_under_the_progress_bar_clears_the_bar(tmp_path: Path) -> None:
    """With the progress bar shown (colour on), Ctrl-C left the bar on the screen ending in ``^``
    and "Interrupted: …" on the line below: the bar took every column but the cursor's, so the
    terminal's ``^C`` echo wrapped its ``C`` to the next line, and clearing the line cleared that
    one. The bar leaves room for the echo: after Ctrl-C no bar and no ``^`` is left."""
    corpus = _corpus(tmp_path / "corpus")
    command = (f"cd {ROOT} && TERM=xterm-256color {sys.executable} -m hermes_store.cli "
               f"--home {tmp_path / 'home'} sessions index {corpus}; echo rc=$?; sleep 60")
    tmux = Tmux(command)
    try:
        tmux.wait_for("%  00:", timeout=60)  # the bar at its widest: with its ETA
        tmux.keys("C-c")
        screen = tmux.wait_for("rc=", timeout=60)
    finally:
        tmux.close()
    assert "rc=130" in screen, screen
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[0] == "Interrupted: committed batches are kept; run the same command to resume.", screen
    assert "Indexing" not in screen and "^" not in screen, screen
