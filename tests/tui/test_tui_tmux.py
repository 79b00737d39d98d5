"""``hermes-store --home H tui`` in a real 80x24 terminal (tmux): type, see a hit, open it, quit."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("textual")

from tests.tui.conftest import CLAUDE_ID, HERMES_ID  # noqa: E402

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the real-terminal TUI test "
                                                      "CANNOT run here (install tmux)")


class Tmux:
    """One private tmux server (its own socket) holding one session, 80x24 unless told."""

    def __init__(self, command: str, width: int = 80, height: int = 24) -> None:
        self.socket = f"hs-tui-{uuid.uuid4().hex[:8]}"
        self.run("new-session", "-d", "-s", "tui", "-x", str(width), "-y", str(height), command)

    def run(self, *args: str) -> str:
        return subprocess.run([TMUX, "-L", self.socket, *args], check=True, capture_output=True,
                              text=True, timeout=20).stdout

    def screen(self, *flags: str) -> str:
        return self.run("capture-pane", "-p", *flags, "-t", "tui")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "tui", *keys)

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen shows:\n{screen}")
            time.sleep(0.1)

    def alive(self) -> bool:
        return subprocess.run([TMUX, "-L", self.socket, "has-session", "-t", "tui"],
                              capture_output=True, timeout=20).returncode == 0

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=20)


def test_tui_in_tmux(tui_home: Path, tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("hermes-store")
    done = tmp_path / "exit-status"
    command = f"env TERM=xterm-256color {exe} --home {tui_home} tui; echo $? > {done}; sleep 30"
    tmux = Tmux(command)
    try:
        tmux.wait_for("Type to search")
        tmux.keys("zebrafish")
        screen = tmux.wait_for("1 result")
        assert "claude-code" in screen and "Why did the zebrafish experiment fail?" in screen
        screen = tmux.wait_for("tool call Read")  # the preview (loaded after the results), tool calls shown
        assert "▶ [0] USER" in screen
        styled = tmux.screen("-e")
        assert "\x1b[7m" in styled or "\x1b[1;7m" in styled or ";7m" in styled  # the hit in reverse video
        tmux.keys("Enter")
        screen = tmux.wait_for(f"hit: {CLAUDE_ID}#0")
        assert "The incubator got too cold overnight." in screen
        tmux.keys("Escape")
        tmux.wait_for("1 result")
        tmux.keys("C-c")
        deadline = time.monotonic() + 20
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done.read_text().strip() == "0"
    finally:
        tmux.close()


def test_enter_typed_with_the_query_opens_its_first_result(tui_home: Path, tmp_path: Path) -> None:
    # a person types the words and Enter in one go (one send-keys: faster than the pause the
    # search waits for); before, Enter found the previous (blank) query's results: "No result
    # to open", and the session never opened
    exe = Path(sys.executable).with_name("hermes-store")
    tmux = Tmux(f"env TERM=xterm-256color {exe} --home {tui_home} tui; sleep 30")
    try:
        tmux.wait_for("Type to search")
        tmux.keys("zebrafish", "Enter")
        screen = tmux.wait_for(f"hit: {CLAUDE_ID}#0")
        assert "The incubator got too cold overnight." in screen
        assert "No result to open" not in screen
    finally:
        tmux.close()


def test_q_quits_from_the_result_list(tui_home: Path, tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("hermes-store")
    done = tmp_path / "exit-status"
    tmux = Tmux(f"env TERM=xterm-256color {exe} --home {tui_home} tui -q canary; echo $? > {done}; sleep 30")
    try:
        tmux.wait_for("1 result")
        tmux.keys("Escape")  # focus to the result list (a pause: ESC then q would read as alt+q)
        time.sleep(0.5)
        tmux.keys("q")
        deadline = time.monotonic() + 20
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done.read_text().strip() == "0"
    finally:
        tmux.close()


def test_no_store_in_tmux(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("hermes-store")
    home = tmp_path / "none"
    tmux = Tmux(f"env TERM=xterm-256color {exe} --home {home} tui -q zebrafish; sleep 30")
    try:
        screen = tmux.wait_for("No store at")
        assert "sessions index" in screen
        tmux.keys("C-c")
    finally:
        tmux.close()
    assert not (home / "hermes_store.db").exists()


def test_bad_store_url_in_config_fails_before_the_screen_opens(tmp_path: Path) -> None:
    """A bad ``store.database_url`` in config.yaml used to open a blank TUI (no status line, no
    results, exit 0 on ctrl+c); now it fails as every command does: one line, exit 1."""
    exe = Path(sys.executable).with_name("hermes-store")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("store:\n  database_url: mysql://u:pw@h/d\n", encoding="utf-8")
    done = tmp_path / "exit-status"
    tmux = Tmux(f"env TERM=xterm-256color {exe} --home {home} tui; echo $? > {done}; sleep 30")
    try:
        deadline = time.monotonic() + 20
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        screen = tmux.screen("-J")  # wrapped lines joined
        assert done.exists(), f"the TUI did not exit; the screen shows:\n{screen}"
        assert done.read_text().strip() == "1"
        assert f"Error: {home / 'config.yaml'}:2: store.database_url: unsupported scheme in 'mysql:'" in screen
        assert "pw" not in screen
    finally:
        tmux.close()
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


@pytest.mark.parametrize("kind", ["postgresql-down", "damaged-sqlite"])
def test_a_store_that_cannot_be_opened_fails_before_the_screen_opens(tmp_path: Path, kind: str) -> None:
    """A store named by --database-url that cannot be opened (no PostgreSQL server on that socket,
    a file that is no database) used to open the full screen with the error in the status line,
    and ctrl+c then exited 0; now it fails as `sessions search` does: one line, exit 1."""
    exe = Path(sys.executable).with_name("hermes-store")
    if kind == "postgresql-down":
        url, named = f"postgresql://postgres@/x?host={tmp_path}&port=1", "PostgreSQL server not reachable"
    else:
        (tmp_path / "bad.db").write_bytes(b"this is not a database" * 100)
        url, named = f"sqlite:///{tmp_path / 'bad.db'}", f"{tmp_path / 'bad.db'}: not a SQLite database"
    done = tmp_path / "exit-status"
    tmux = Tmux(f"env TERM=xterm-256color {exe} --home {tmp_path / 'home'} --database-url '{url}' tui -q zebra; "
                f"echo $? > {done}; sleep 30")
    try:
        deadline = time.monotonic() + 20
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        screen = tmux.screen("-J")
        assert done.exists(), f"the TUI did not exit; the screen shows:\n{screen}"
        assert done.read_text().strip() == "1"
        lines = [line for line in screen.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error: ") and named in lines[0], screen
        assert "Traceback" not in screen
    finally:
        tmux.close()


def test_keys_typed_with_the_query_act_on_it(tui_home: Path) -> None:
    """The words and ctrl+g (or ctrl+r, ctrl+o) in one go (a paste, keys batched over SSH): ctrl+g
    used to show "Facts and memory entries for:" with no query ("Type a query first"), and ctrl+r
    "No result selected", since the app had not yet seen the words the box already held."""
    exe = Path(sys.executable).with_name("hermes-store")
    tmux = Tmux(f"env TERM=xterm-256color {exe} --home {tui_home} tui; sleep 30")
    try:
        tmux.wait_for("Type to search")
        tmux.keys("zebrafish", "C-g")
        screen = tmux.wait_for("Zebrafish embryos need 28C incubators.")
        assert "Facts and memory entries for: zebrafish" in screen and "Type a query first" not in screen
        tmux.keys("Escape")
        tmux.wait_for("1 result")
        tmux.keys("C-u")
        tmux.wait_for("Type to search")
        tmux.keys("canary", "C-r")
        screen = tmux.wait_for("copied message reference:")
        assert f"copied message reference: {HERMES_ID}#30" in screen and "No result selected" not in screen
        tmux.keys("C-u")
        tmux.wait_for("Type to search")
        tmux.keys("zebrafish", "C-o")
        screen = tmux.wait_for("copied resume command:")
        assert f"copied resume command: claude --resume {CLAUDE_ID}" in screen
    finally:
        tmux.close()
