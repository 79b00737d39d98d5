"""Issue 14 point 4: stored ESC sequences never reach the terminal raw; --json keeps exact data."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.cli.common import terminal_safe
from hermes_store.facts.store import FactStore
from hermes_store.sessions import SessionIndex

CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;owned\x07"
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"
C1_CSI = "\x9b31m"
EVIL = f"{CLEAR}{TITLE}{CLIPBOARD}{C1_CSI}\r\x08\x00"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture
def evil_home(home):
    with SessionIndex(home) as index:
        sid = index.create_session(f"sid{TITLE}", source="cli", title=f"quokka {EVIL} title")
        index.append_message(sid, "user", f"quokka habitat {EVIL} notes")
    with FactStore(home) as store:
        store.db.execute("INSERT INTO facts (content, category, tags, trust_score) VALUES (?, 'general', ?, 0.9)",
                         (f"quokka fact {EVIL}", f"tag{CLEAR}"))
    (home.memories_dir / "MEMORY.md").write_text(f"quokka memory {EVIL}\n", encoding="utf-8")
    return home, sid


COMMANDS = [["sessions", "list"], ["sessions", "search", "quokka"], ["sessions", "show", "SID"],
            ["facts", "list"], ["facts", "search", "quokka"], ["recall", "quokka"], ["memory", "show"],
            ["sessions", "show", f"nope{TITLE}"], ["status"]]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_human_output_escapes_control_characters(evil_home, argv):
    home, sid = evil_home
    argv = [sid if a == "SID" else a for a in argv]
    result = CliRunner().invoke(cli, ["--home", str(home.root), *argv])
    assert "Traceback" not in result.output
    assert not RAW.search(result.output), repr(result.output)
    if "quokka" in " ".join(argv) or argv[:2] in (["facts", "list"], ["sessions", "list"], ["memory", "show"]):
        assert "quokka" in result.output and "\\u001b" in result.output


@pytest.mark.parametrize("argv", [["sessions", "list", "--json"], ["facts", "list", "--json"],
                                  ["recall", "quokka", "--json"], ["sessions", "search", "quokka", "--json"]])
def test_json_output_keeps_exact_data(evil_home, argv):
    home, _ = evil_home
    result = CliRunner().invoke(cli, ["--home", str(home.root), *argv])
    assert result.exit_code == 0 and not RAW.search(result.output)
    text = json.dumps(json.loads(result.output), ensure_ascii=False)
    assert "\x1b]52;c;ZXZpbA==\x07" in text or "\\u001b]52" in json.dumps(json.loads(result.output))


def test_json_fields_round_trip_exactly(evil_home):
    home, sid = evil_home
    listed = json.loads(CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "list", "--json"]).output)
    row = listed[0] if isinstance(listed, list) else listed["sessions"][0]
    assert row["id"] == sid and row["title"] == f"quokka {EVIL} title".replace("\x00", "")  # NUL dropped on store
    facts = json.loads(CliRunner().invoke(cli, ["--home", str(home.root), "facts", "list", "--json"]).output)
    assert facts["facts"][0]["content"] == f"quokka fact {EVIL}"


def test_real_console_script_escapes_too(evil_home):
    home, _ = evil_home
    exe = os.path.join(os.path.dirname(sys.executable), "hermes-store")
    out = subprocess.run([exe, "--home", str(home.root), "sessions", "list"], capture_output=True, timeout=60)
    assert out.returncode == 0 and b"quokka" in out.stdout
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", out.stdout + out.stderr)


def test_terminal_safe_keeps_newlines_tabs_and_text():
    assert terminal_safe("a\tb\nc 日本 é") == "a\tb\nc 日本 é"
    assert terminal_safe("\x1b[2J") == "\\u001b[2J"
    assert json.loads(f'"{terminal_safe(chr(0x9b))}"') == "\x9b"


def test_bidi_marks_and_invisible_characters_are_shown_not_obeyed(home):
    """A right-to-left mark (U+200F) in a title moved the text beside it on the terminal, and a
    zero-width space (U+200B) in a session id showed an id that a copy of it does not find:
    both printed raw. They are shown as \\u<4 hex> now; a joiner inside an emoji stays."""
    with SessionIndex(home) as index:
        sid = index.create_session("ab\u200bc", source="cli", title="invoice \u200f(final)\u200e \ufeffdraft")
        index.append_message(sid, "user", "wombat family \U0001f468\u200d\U0001f469\u200d\U0001f467 \u061cok")
    listed = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "list"])
    assert listed.exit_code == 0, listed.output
    assert "ab\\u200bc" in listed.output and "\\u200f(final)\\u200e \\ufeffdraft" in listed.output
    assert not set("\u200b\u200e\u200f\ufeff") & set(listed.output)
    shown = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "show", "ab\u200bc"])
    assert shown.exit_code == 0, shown.output
    assert "\U0001f468\u200d\U0001f469\u200d\U0001f467" in shown.output and "\\u061cok" in shown.output
