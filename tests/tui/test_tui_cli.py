"""``hermes-store tui`` outside a terminal: a clear refusal, exit 1, no store created."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_tui_in_a_pipe_refuses(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("hermes-store")
    home = tmp_path / "home"
    done = subprocess.run([str(exe), "--home", str(home), "tui"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "needs a terminal" in done.stderr and "sessions search" in done.stderr
    assert done.stdout == ""
    assert not home.exists()


def test_tui_is_listed_in_help() -> None:
    exe = Path(sys.executable).with_name("hermes-store")
    done = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "tui" in done.stdout


def test_tui_without_textual_names_the_extra(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['textual'] = None; from hermes_store.cli import main; "
            f"sys.argv = ['hermes-store', '--home', {str(tmp_path / 'h')!r}, 'tui']; main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert "the TUI needs Textual, the tui extra: pip install -e '.[tui]'" in done.stderr
