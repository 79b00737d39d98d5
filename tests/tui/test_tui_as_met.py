"""``hermes-store tui`` as a person meets it in a real terminal (tmux), at the sizes and speeds
people use: a 40x15 window, keys that arrive together, a session whose messages are long.

Each test reads the screen tmux renders (``capture-pane``), never the widgets.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("textual")

from tests.tui.conftest import run_cli, write_jsonl  # noqa: E402
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


def test_facts_view_entries_keep_their_indent_at_40_columns(tui_home: Path) -> None:
    """ctrl+g at 40 columns: an entry's first line was indented by four spaces and the lines it
    wrapped onto started at the left edge, under the entry's heading line, so an entry and the
    next one's heading ran together. Every line of an entry is indented now."""
    run_cli(tui_home, "facts", "add", "Zebrafish embryos need incubators kept at a steady "
                                      "twenty eight degrees through every night shift of the week")
    tmux = Tmux(tui(tui_home, "-q", "zebrafish"), width=40, height=24)
    try:
        settled(tmux, " ms)")
        tmux.keys("C-g")
        lines = settled(tmux, "helpful")  # a fact's heading: the entries are on screen
    finally:
        tmux.close()
    assert "Facts" in lines, "\n".join(lines)
    body = lines[lines.index("Facts") + 1:-1]  # from the facts' kind title to the footer
    entry = [line for line in body if line.strip() and not re.match(r"#\d+ ", line)]
    assert any("steady" in line for line in entry) and any("night" in line for line in entry), lines
    assert len(entry) >= 3, lines  # the long fact wraps at 40 columns
    for line in entry:
        assert line.startswith("    ") and line[4] != " ", "\n".join(lines)


def test_the_main_screen_fits_a_40x15_terminal(tui_home: Path) -> None:
    """At 40x15 the opening screen (its help line wraps to four lines) was taller than the
    window: the preview pane slid under the footer, out of sight, and the screen grew a scrollbar
    of its own. The results and the preview now share what is left, both on screen."""
    tmux = Tmux(tui(tui_home), width=40, height=15)
    try:
        lines = settled(tmux, "Type to search")
        assert "─" * 40 in lines, "\n".join(lines)  # the preview's top border, above the footer
        assert "Quit" in lines[-1], "\n".join(lines)
        tmux.keys("zebrafish")
        lines = settled(tmux, "1 result")
        border = lines.index("─" * 40)
        assert any("zebrafish" in line.lower() for line in lines[border + 1:-1]), "\n".join(lines)
    finally:
        tmux.close()


@pytest.fixture
def long_messages_home(tmp_path: Path) -> Path:
    """One Hermes session: twelve long messages, the hit (``quokka``) and thirty after it."""
    words = " ".join(f"word{i} alpha beta gamma delta epsilon" for i in range(60))
    lines: list[dict] = [{"role": "session_meta", "platform": "cli", "model": "m", "timestamp": 1768900000.0,
                          "title": "Long messages about the quokka enclosure"}]
    for i in range(43):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append({"role": role, "content": "the quokka is here" if i == 12 else f"{i}: {words}",
                      "timestamp": 1768900000.0 + i})
    home = tmp_path / "home"
    source = write_jsonl(tmp_path / "src" / "20260120_101500_ab12cd.jsonl", lines)
    run_cli(home, "sessions", "index", "--format", "hermes-jsonl", str(source))
    return home


def test_a_session_opens_with_its_hit_at_the_top(long_messages_home: Path) -> None:
    """Enter laid the session out at the full width, scrolled to the hit, then grew its scrollbar:
    the long messages above the hit wrapped onto more lines and pushed it down, so the screen
    opened on the end of an earlier message with the hit below it (or off screen)."""
    tmux = Tmux(tui(long_messages_home, "-q", "quokka"))
    try:
        settled(tmux, "1 result")
        tmux.keys("Enter")
        lines = settled(tmux, "hit: 20260120_101500_ab12cd#12")
    finally:
        tmux.close()
    border = next(i for i, line in enumerate(lines) if line.startswith("─" * 40))
    assert "▶ [12] USER" in lines[border + 1], "\n".join(lines)
    assert "the quokka is here" in lines[border + 2], "\n".join(lines)


def test_editing_keys_sent_with_text_act_in_order(tui_home: Path) -> None:
    """ctrl+u or backspace followed at once by more letters (typed fast, a burst over SSH, one
    tmux send-keys): the letters went in first and the editing key acted after them, so ctrl+u
    then ``canary`` left an empty box and backspace then ``x`` deleted the ``x``."""
    tmux = Tmux(tui(tui_home))
    try:
        settled(tmux, "Type to search")
        tmux.keys("zebrafish")
        settled(tmux, "1 result")
        tmux.keys("C-u", "canary")
        lines = settled(tmux, "1 result")
        assert re.match(r"▊\s+canary\s+▎$", lines[1]), "\n".join(lines)
        tmux.keys("BSpace", "x")
        lines = settled(tmux, "No matching messages")
        assert re.match(r"▊\s+canarx\s+▎$", lines[1]), "\n".join(lines)
    finally:
        tmux.close()


def test_resizing_keeps_the_hit_in_view(long_messages_home: Path) -> None:
    """A resize rewraps the long messages above the hit onto more or fewer lines while the scroll
    offset stayed: the preview then showed an earlier message's text instead of the hit, and the
    session screen (opened at the hit) the middle of a message far above it. Both keep their
    place now: the preview its hit, the session the message at its top."""
    tmux = Tmux(tui(long_messages_home, "-q", "quokka"))
    try:
        settled(tmux, "▶ [12] USER")
        for width, height in ((40, 15), (100, 30)):
            tmux.run("resize-window", "-t", "tui", "-x", str(width), "-y", str(height))
            time.sleep(1)
            lines = settled(tmux, "1 result")
            assert any("▶ [12] USER" in line for line in lines), "\n".join(lines)
        tmux.keys("Enter")
        lines = settled(tmux, "hit: 20260120_101500_ab12cd#12")
        for width, height in ((40, 20), (80, 24)):
            tmux.run("resize-window", "-t", "tui", "-x", str(width), "-y", str(height))
            time.sleep(1)
            lines = settled(tmux, "hit: 20260120_101500_ab12cd#12")
            border = next(i for i, line in enumerate(lines) if line.startswith("─" * 40))
            assert "▶ [12] USER" in lines[border + 1], "\n".join(lines)
    finally:
        tmux.close()


def test_a_narrowed_session_header_keeps_no_blank_line(long_messages_home: Path) -> None:
    """The session header cuts its title line to the window's width; on a resize it was cut for
    the old width, wrapped onto two lines at the new one, and the header kept that height once
    cut again: a blank line between the resume command and the messages."""
    tmux = Tmux(tui(long_messages_home, "-q", "quokka"))
    try:
        settled(tmux, "1 result")
        tmux.keys("Enter")
        settled(tmux, "hit: 20260120_101500_ab12cd#12")
        tmux.run("resize-window", "-t", "tui", "-x", "40", "-y", "20")
        time.sleep(1)
        lines = settled(tmux, "hit: 20260120_101500_ab12cd#12")
    finally:
        tmux.close()
    border = next(i for i, line in enumerate(lines) if line.startswith("─" * 40))
    header = lines[:border]
    assert header[0].startswith(" cli  Long messages about") and header[0].endswith("…"), "\n".join(lines)
    assert all(line.strip() for line in header), "\n".join(lines)


def test_a_bad_filter_is_named_on_screen_in_a_short_window(tui_home: Path) -> None:
    """At 40x15 the filter form is taller than the window and its error line is its last: an
    unknown role and Enter wrote the error below the edge, so Enter seemed to do nothing. The
    form scrolls to the error now, and a good value then applies."""
    tmux = Tmux(tui(tui_home, "-q", "zebrafish"), width=40, height=15)
    try:
        settled(tmux, "1 result")
        tmux.keys("C-t")
        settled(tmux, "Agent/source")
        tmux.keys("Tab")
        time.sleep(0.3)
        tmux.keys("bogus", "Enter")
        screen = "\n".join(settled(tmux, "Invalid filter"))
        assert "unknown role" in screen and "bogus" in screen, screen
        tmux.keys("C-u", "user", "Enter")
        screen = "\n".join(settled(tmux, "role=user"))
        assert "1 result" in screen, screen
    finally:
        tmux.close()
