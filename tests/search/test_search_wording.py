"""Counts a person reads are worded for the count (found walking the docs' commands in a
terminal): "1 result(s) matched every word", "forgot 1 message; ... bring them back"."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_home"


def _run(home, *argv: str):
    return CliRunner().invoke(cli, ["--home", str(home.root), *argv])


def test_a_relaxed_search_note_has_no_result_s(home):
    """``sessions search "backup cron" --limit 3`` (README) printed "note: 1 result(s) matched
    every word; added 2 matching some of the words"."""
    shutil.copytree(SAMPLE / "sessions", home.root / "sessions")
    assert _run(home, "sessions", "index", str(home.root / "sessions")).exit_code == 0
    result = _run(home, "sessions", "search", "backup cron", "--limit", "3")
    assert result.exit_code == 0, result.output
    assert result.stderr == "note: only 1 matched every word; added 2 matching some of the words\n"
    tool = _run(home, "sessions", "search", "backup cron", "--limit", "3", "--json")
    assert "(s)" not in tool.stdout


def test_a_relaxed_search_with_no_full_match_says_none(home):
    """``sessions search 'what bread did I bake'`` on the sample printed "note: only 0 matched
    every word; added 2 ..." (found in a terminal, 2026-12-07): "only 0" reads as a slip."""
    shutil.copytree(SAMPLE / "sessions", home.root / "sessions")
    assert _run(home, "sessions", "index", str(home.root / "sessions")).exit_code == 0
    result = _run(home, "sessions", "search", "what bread did I bake", "--limit", "3")
    assert result.exit_code == 0, result.output
    assert result.stderr == "note: none matched every word; found 2 matching some of the words\n"


def test_forget_says_it_for_one_message_and_names_one_whole_session(home):
    shutil.copytree(SAMPLE / "sessions", home.root / "sessions")
    assert _run(home, "sessions", "index", str(home.root / "sessions")).exit_code == 0
    one = _run(home, "forget", "20260312_091500_3fa2c1#5")
    assert one.exit_code == 0, one.output
    assert one.stdout == "forgot 1 message; re-indexing will not bring it back\n"
    whole = _run(home, "forget", "--session", "20260322_070000_5a5a5a")
    assert whole.exit_code == 0, whole.output
    assert whole.stdout == ("forgot 4 messages (1 whole session: 20260322_070000_5a5a5a); "
                            "re-indexing will not bring them back\n")
