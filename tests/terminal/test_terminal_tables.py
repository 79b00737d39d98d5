"""Tables on a terminal of any width (found walking the docs in tmux at 40, 100 and 200 columns):
`sessions list` and `sessions sources` printed rows wider than the window, so every row wrapped
into the next and no column lined up (at 100 columns, every row of `sessions sources`; in `sessions
list`, every row once a subagent's 74-character id was listed). On a terminal a row now fits the
window (a long title cut with "…", or the row laid out over two lines); in a pipe each row stays one
line, as before."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from hermes_store.tokens import display_width
from tests.terminal.test_terminal_screen import run_in_pipe, run_in_pty

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "tests" / "sessions" / "fixtures" / "claude-code"
SUBAGENT = "5e6f7a8b-0c1d-4e2f-8a3b-4c5d6e7f8091:agent-a7c91e2"
SESSIONS = 11  # the sample home's four and the Claude Code fixture's seven


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tables_home")
    shutil.copytree(ROOT / "examples" / "sample_home", root, dirs_exist_ok=True)
    for source in (root / "sessions", CLAUDE):
        done = run_in_pipe(["--home", str(root), "sessions", "index", str(source)])
        assert done.returncode == 0, done.stderr
    for fact in ("The nightly backup job writes to s3://ana-backups with restic every night at two",
                 "Ana Ruiz prefers PostgreSQL over MySQL for every new service she starts"):
        assert run_in_pipe(["--home", str(root), "facts", "add", fact]).returncode == 0
    assert run_in_pipe(["--home", str(root), "memory", "add", "Backups run from cron at two and keep fourteen "
                        "days"]).returncode == 0  # an event for `memory history`
    return root


def _lines(shown: bytes) -> list[str]:
    return shown.decode("utf-8").replace("\r\n", "\n").rstrip("\n").split("\n")


@pytest.mark.parametrize("columns", [40, 100, 200])
def test_sessions_list_fits_the_terminal(home: Path, columns: int) -> None:
    code, shown = run_in_pty(["--home", str(home), "sessions", "list"], columns=columns)
    assert code == 0
    lines = _lines(shown)
    ids = [line for line in lines if not line.startswith(" ")]
    for line in lines:  # an id longer than the window is the one thing the terminal may wrap
        assert display_width(line) <= columns or " " not in line, line
    if columns == 40:  # too narrow for the ids: each id, then source, start, messages, title below
        assert len(lines) == 2 * len(ids) == 2 * SESSIONS
        assert lines[lines.index(SUBAGENT) + 1].split()[:2] == ["claude-code", "2026-02-19"]
    else:  # one aligned row per session
        assert len(ids) == len(lines) == SESSIONS
        assert len({line.index("  20") for line in lines}) == 1, lines
        assert any(line.startswith(SUBAGENT + " ") for line in lines)


def test_a_long_title_is_cut_on_a_terminal_and_kept_in_a_pipe(home: Path) -> None:
    code, shown = run_in_pty(["--home", str(home), "sessions", "list"], columns=100)
    assert code == 0
    titled = [line for line in _lines(shown) if "Terraform" in line]
    assert len(titled) == 1 and titled[0].endswith("…") and display_width(titled[0]) == 100
    piped = run_in_pipe(["--home", str(home), "sessions", "list"])
    assert piped.returncode == 0
    rows = piped.stdout.decode().splitlines()
    assert len(rows) == SESSIONS and any(SUBAGENT in row and "claude-code" in row for row in rows)
    assert any(row.endswith("Terraform wants to replace the assets bucket") for row in rows)


@pytest.mark.parametrize("columns", [40, 100])
def test_sessions_sources_fits_the_terminal(home: Path, columns: int) -> None:
    user = home.parent / f"user{columns}"  # a user's home without any agent's folders
    user.mkdir(exist_ok=True)
    code, shown = run_in_pty(["--home", str(home), "sessions", "sources"], columns=columns, HOME=str(user))
    assert code == 0
    text = shown.decode("utf-8")
    assert "{hermes_home}" not in text and f"{home}/state.db" in text.replace("\r\n", "\n")
    for line in _lines(shown):
        pattern = re.match(r"    [~/.]", line)  # a location's path: one name, never split
        assert display_width(line) <= columns or pattern, line
    piped = run_in_pipe(["--home", str(home), "sessions", "sources"], HOME=str(user))
    first = piped.stdout.decode().splitlines()[0]
    assert first.startswith("Hermes Agent (state.db)") and first.endswith("not found") and "state.db " in first


SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("argv", [["sessions", "search", "backup cron", "--limit", "3"],
                                  ["recall", "backup", "--limit", "4"], ["facts", "search", "backup"],
                                  ["facts", "list"], ["memory", "show"], ["status"],
                                  ["sessions", "show", "20260312_091500_3fa2c1#5", "--context", "1"], ["doctor"],
                                  ["sessions", "index", str(CLAUDE)], ["memory", "history"], ["memory", "cost"],
                                  ["provider", "list"], ["sessions", "formats"]],
                         ids=["search", "recall", "facts-search", "facts-list", "memory-show", "status",
                              "sessions-show", "doctor", "sessions-index", "memory-history", "memory-cost",
                              "provider-list", "sessions-formats"])
def test_results_wrap_at_words_on_a_narrow_terminal(home: Path, argv: list[str]) -> None:
    """At 40 columns the terminal split snippets, notes and reasons mid-word ("bac" / "kup.sh");
    each line is now wrapped at a space with its indent kept, nothing lost: the same words as in
    a pipe, in the same order. (`memory history`, `memory cost`, `provider list` and `sessions
    formats` were still split mid-word at 60 columns: "'Backups ru" / "n from cron".)"""
    code, shown = run_in_pty(["--home", str(home), *argv], columns=40)
    assert code == 0
    # what stays on screen: a progress line redrawn with \r and cleared with ESC[K leaves nothing
    lines = [SGR.sub("", line.replace("\x1b[K", "")).split("\r")[-1] for line in _lines(shown)]
    for line in lines:
        assert display_width(line) <= 40 or " " not in line.strip(), line
    assert any(line.startswith("  ") for line in lines)  # wrapped lines keep an indent
    piped = run_in_pipe(["--home", str(home), *argv])
    assert piped.returncode == 0
    assert " ".join(lines).split() == (piped.stderr + piped.stdout).decode().split()


def test_formats_stack_on_a_narrow_terminal(tmp_path: Path) -> None:
    """``sessions formats`` at 40 columns kept its 23-column name column: each agent and path had
    17 columns, so paths broke across lines at column 0 (``{hermes_home}/ses`` / ``sions/*.jsonl``).
    On a narrow terminal each name now has a line of its own, its agent and places indented below;
    at 100 columns the table is as before."""
    code, shown = run_in_pty(["--home", str(tmp_path / "h"), "sessions", "formats"], columns=40)
    lines = shown.decode().splitlines()
    assert code == 0, shown
    at = lines.index("hermes-jsonl")
    assert lines[at + 1:at + 3] == ["    Hermes Agent (session JSONL)", "    {hermes_home}/sessions/*.jsonl"], lines
    code, shown = run_in_pty(["--home", str(tmp_path / "h"), "sessions", "formats"], columns=100)
    assert "hermes-jsonl           Hermes Agent (session JSONL)" in shown.decode().splitlines(), shown
