"""Hostile stored text (escape sequences, control characters, tabs) as a person sees it: in a
real terminal (tmux) of a given width, and with the output piped to a file.

A line the CLI lays out must fit the terminal as the text is *shown* (a control character as its
six-column ``\\u<4 hex>``, a tab up to its tab stop): one that does not is broken by the terminal
inside a word. Piped output must show the same stored text as the terminal, escapes included.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from hermes_store.tokens import display_width
from tests.terminal.test_terminal_screen import run_in_pipe

TMUX = shutil.which("tmux")
CLI = [sys.executable, "-m", "hermes_store.cli"]
ANSI = ("wombat \x1b[31mRED\x1b[0m \x1b]8;;http://evil.example/\x07click me\x1b]8;;\x07 then "
        "\x1b]52;c;cm0gLXJmIH4K\x07 clip \x1b[2J\x1b[H cleared")
CONTROLS = "wombat answer with\rcarriage overwrite and back\x08\x08\x08space and bell\x07 and tab\there"
CJK = "wombat 桂林山水甲天下" + "日本語のテキスト" * 12 + "。 end"
# flagged on the way to a model: recall and search log a warning about it on stderr
BIDI = "wombat invoice\u202eexe.pdf and the rest of a sentence long enough to be wrapped"
TABS = "wombat\tcol1\tcol2\t\tcol4 and then a few more words to wrap\tat\tthe\tedge of the screen"


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose messages, fact and memory entry hold escapes, control characters and tabs."""
    root = tmp_path_factory.mktemp("hostile_text")
    source = root / "20260401_120000_ansi001.jsonl"
    lines = [{"role": "session_meta", "platform": "cli", "timestamp": 1775044800}]
    lines += [{"role": role, "content": text, "timestamp": 1775044810 + i}
              for i, (role, text) in enumerate((("user", ANSI), ("assistant", CONTROLS), ("user", TABS),
                                                       ("assistant", CJK), ("user", BIDI)))]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    home = root / "home"
    for args in (["sessions", "index", str(source)], ["facts", "add", "wombat fact \x1b[31mred\x1b[0m " * 4],
                 ["memory", "add", "wombat memory \x1b[2J esc and\ttab"]):
        done = run_in_pipe(["--home", str(home), *args])
        assert done.returncode == 0, done.stderr
    return home


def test_piped_output_shows_stored_escapes_as_the_terminal_does(hostile_home: Path) -> None:
    """``sessions show ID > file`` (even ``--raw``, "stored text exactly") and ``memory show |
    less`` dropped every stored ``ESC[…`` sequence (click strips them off a terminal before our
    filter saw them): ``wombat RED … clip  cleared`` in the file, ``wombat \\u001b[31mRED\\u001b[0m
    … \\u001b[2J\\u001b[H cleared`` on the screen. A pipe now shows the same neutralised text."""
    for args in (["sessions", "show", "20260401_120000_ansi001"],
                 ["sessions", "show", "20260401_120000_ansi001", "--raw"]):
        done = run_in_pipe(["--home", str(hostile_home), *args])
        assert done.returncode == 0, done.stderr
        assert b"wombat \\u001b[31mRED\\u001b[0m \\u001b]8;;" in done.stdout, done.stdout
        assert b"clip \\u001b[2J\\u001b[H cleared" in done.stdout, done.stdout
        assert b"\x1b" not in done.stdout
    memory = run_in_pipe(["--home", str(hostile_home), "memory", "show"])
    assert b"wombat memory \\u001b[2J esc and\ttab" in memory.stdout, memory.stdout
    facts = run_in_pipe(["--home", str(hostile_home), "facts", "list"])
    assert b"wombat fact \\u001b[31mred\\u001b[0m" in facts.stdout, facts.stdout


def _screen(home: Path, columns: int, *commands: list[str]) -> tuple[str, str]:
    """The commands' output in a tmux window ``columns`` wide: (the rows as shown, the lines as
    written: tmux joins a line the terminal wrapped)."""
    socket = f"hs-term-{uuid.uuid4().hex[:8]}"
    shell = " ; ".join(" ".join(f"'{part}'" for part in [*CLI, "--home", str(home), *args]) for args in commands)
    tmux = [TMUX or "tmux", "-L", socket]
    subprocess.run([*tmux, "new-session", "-d", "-x", str(columns), "-y", "50",
                    f"env TERM=xterm-256color {shell}; echo DONE; sleep 30"], check=True, timeout=20)
    try:
        deadline = time.monotonic() + 60
        while True:
            rows = subprocess.run([*tmux, "capture-pane", "-p", "-S", "-"], capture_output=True, text=True,
                                  timeout=20).stdout
            if "DONE" in rows or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        joined = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-S", "-"], capture_output=True, text=True,
                                timeout=20).stdout
        return rows, joined
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=20)


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the real-terminal test CANNOT run here")
@pytest.mark.parametrize("columns", [40, 100])
def test_escaped_and_tabbed_text_wraps_at_words_not_by_the_terminal(hostile_home: Path, columns: int) -> None:
    """The CLI measured stored text before it was escaped (``\\x08`` one column, shown as the six
    of ``\\u0008``; a tab one column): at 100 columns ``sessions show`` printed a 101-column line
    and the terminal broke it as ``tab h`` / ``ere`` (``\\u00`` / ``1b]52`` at 80; ``recall`` and
    ``facts list`` alike), and a library warning (Python's last-resort handler) was one raw line.
    Each line now fits as shown: the terminal wraps none of them."""
    rows, joined = _screen(hostile_home, columns, ["sessions", "show", "20260401_120000_ansi001"],
                           ["recall", "wombat"], ["facts", "list"], ["memory", "show"])
    assert "DONE" in rows and "\\u0008" in rows and "\\u001b[31m" in rows, rows
    assert "withheld from the model" in rows, rows  # the warning (stderr) is laid out as the rest
    # the terminal wrapped no line, except one holding a word wider than a line (a path; one
    # word of escapes at 40 columns), which gets a line of its own (docs/cli.md); Japanese,
    # written without spaces, is wrapped beside its characters
    for line in joined.splitlines():
        assert display_width(line.rstrip()) <= columns or any(
            len(word) > columns - 8 and display_width(word) == len(word) for word in line.split()), (line, rows)
    if columns == 100:
        assert "here" in rows.split() and "\\u001b]52;c;cm0gLXJmIH4K\\u0007" in rows.split(), rows


def test_a_warning_is_shown_once_a_command(tmp_path: Path) -> None:
    """``sessions search`` over a session whose title is flagged (a bidi override) printed
    "Recorded text from title of session … withheld from the model" on stderr once for every hit
    of that session; the same warning is now shown once."""
    export = tmp_path / "data-2026-02-02-10-00-00"
    export.mkdir()
    conversation = {
        "uuid": "bd000000-0001-4000-8000-000000000001", "name": "invoice\u202eexe.pdf",
        "created_at": "2026-02-01T09:00:00Z", "updated_at": "2026-02-01T09:10:00Z",
        "chat_messages": [{"uuid": f"bd-{n}", "sender": "human", "created_at": f"2026-02-01T09:00:1{n}Z",
                           "text": f"dugong count {n}", "attachments": [], "files": []} for n in range(3)]}
    (export / "conversations.json").write_text(json.dumps([conversation]), encoding="utf-8")
    home = tmp_path / "home"
    assert run_in_pipe(["--home", str(home), "sessions", "index", str(export)]).returncode == 0
    done = run_in_pipe(["--home", str(home), "sessions", "search", "dugong"])
    assert done.returncode == 0 and done.stdout.count(b"dugong") == 3, done
    warnings = [line for line in done.stderr.decode().splitlines() if "withheld from the model" in line]
    assert len(warnings) == 1, done.stderr


def test_an_error_is_one_line_the_terminal_wraps(tmp_path: Path) -> None:
    """``Error: …`` on a 40-column terminal is one line the terminal wraps, never broken by us:
    an error wrapped at words with indented later lines (tried on 2026-12-07) cut the text a
    screen reader joins from the terminal's soft wraps (``tmux capture-pane -J``) and a path
    copied from it. In a pipe it is one line too."""
    from tests.terminal.test_terminal_screen import run_in_pty

    missing = f"/tmp/hs-no-{uuid.uuid4().hex[:6]}"
    args = ["--home", str(tmp_path / "h"), "--database-url", f"sqlite:///{missing}/x.db", "facts", "add", "x"]
    code, shown = run_in_pty(args, columns=40)
    lines = [line for line in shown.decode().splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"Error: {missing}"), lines
    assert display_width(lines[0]) > 40, lines  # wider than the terminal: the terminal wraps it
    piped = run_in_pipe(args)
    assert piped.returncode == 1 and len(piped.stderr.decode().splitlines()) == 1, piped.stderr
