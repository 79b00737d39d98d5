"""``hermes-store tui`` as a person meets it in a real terminal (tmux), at the sizes and speeds
people use: a 40x15 window, keys that arrive together, a session whose messages are long.

Each test reads the screen tmux renders (``capture-pane``), never the widgets.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("textual")

from tests.tui.test_tui_tmux import Tmux  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="tmux is not installed: the real-terminal TUI test CANNOT run here")

ROOT = Path(__file__).resolve().parents[2]


def tui(home: Path, *args: str, env: str = "", redirect: str = "") -> str:
    """The shell command running this worktree's ``hermes-store --home HOME tui ARGS``."""
    quoted = " ".join(json.dumps(a) for a in args)
    return (f"cd {ROOT} && env PYTHONPATH={ROOT} TERM=xterm-256color {env} {sys.executable} -m hermes_store.cli "
            f"--home {home} tui {quoted} {redirect}; sleep 30")


def settled(tmux: Tmux, text: str) -> list[str]:
    """The screen's lines once ``text`` shows and the screen has stopped changing."""
    tmux.wait_for(text)
    screen, deadline = tmux.screen(), time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.3)
        again = tmux.screen()
        if again == screen:
            break
        screen = again
    return screen.splitlines()

@pytest.mark.parametrize(("env", "redirect"), [("COLUMNS=80 LINES=24", ""), ("", "> /dev/null")],
                         ids=["stale-COLUMNS-LINES", "stdout-redirected"])
def test_the_screen_is_the_size_of_the_terminal(tui_home: Path, env: str, redirect: str) -> None:
    """In a 50x20 terminal with COLUMNS=80 LINES=24 in the environment (exported by a profile, or
    by the tmux server these tests start), or with stdout redirected, the TUI drew an 80x24 screen:
    the query box's right edge and the footer's keys past the window's edge, the preview under the
    footer, and a resize answered with the same wrong size. It is sized by its terminal now."""
    tmux = Tmux(tui(tui_home, env=env, redirect=redirect), width=50, height=20)
    try:
        lines = settled(tmux, "Type to search")
        assert lines[0].startswith("▊") and lines[0].endswith("▎") and len(lines[0]) == 50, "\n".join(lines)
        assert "─" * 50 in lines and "Quit" in lines[-1], "\n".join(lines)  # the preview's border
        tmux.run("resize-window", "-t", "tui", "-x", "60", "-y", "22")
        time.sleep(1)
        lines = settled(tmux, "Type to search")
        assert len(lines[0]) == 60 and lines[0].endswith("▎"), "\n".join(lines)
        assert "─" * 60 in lines and "Quit" in lines[-1], "\n".join(lines)
    finally:
        tmux.close()
