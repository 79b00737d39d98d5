"""Red team (issue 14 point 4): terminal escapes through every human command, in a real process.

Stored text (session ids, titles, workspaces, message text, tool names, facts, entity
names, memory entries) and a transcript file *name* carry C1 CSI (U+009B), OSC 8
hyperlinks, OSC 52 clipboard writes, BEL, backspace and carriage-return overwrites and
bidi overrides. Each command runs through the installed entry point (``main()``), its
stdout and stderr read as bytes: no raw control byte may reach the terminal, and
``--json`` must still give back the exact stored text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from hermes_store.builtin.entries import ENTRY_DELIMITER
from hermes_store.facts.store import FactStore
from hermes_store.home import Home
from hermes_store.sessions import SessionIndex

CSI_C1 = "\u009b2J"
OSC8 = "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\"
OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
BEL = "ding\x07"
BACKSPACE = "rm -rf /tmp/x\x08\x08\x08\x08\x08safe"
CR = "all good\rPWNED  "
BIDI = "invoice\u202eexe.pdf"
ALL = [CSI_C1, OSC8, OSC52, BEL, BACKSPACE, CR, BIDI]
HOSTILE = " ".join(ALL)
# Raw bytes (UTF-8) that must never reach the terminal.
FORBIDDEN = [b"\x1b", b"\xc2\x9b", b"\x07", b"\x08", b"\r", "\u202e".encode()]
SERVER = [sys.executable, "-c", "from hermes_store.cli import main; main()"]


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory) -> Home:
    home = Home(tmp_path_factory.mktemp("term") / "home").ensure()
    (home.memories_dir / "MEMORY.md").write_text(ENTRY_DELIMITER.join(f"kiwi memory {p}" for p in ALL),
                                                  encoding="utf-8")
    db = home.open_db()
    facts = FactStore(db)
    facts.add_fact("kiwi fact about billing", "project", "kiwi", entities=["Kiwi"])
    with db.write():
        db.execute("UPDATE facts SET content = ?, category = ?, tags = ?", (f"kiwi fact {HOSTILE}", f"c{OSC8}",
                                                                            f"kiwi,{CSI_C1}"))
        db.execute("UPDATE entities SET name = ?", (f"Kiwi{OSC52}",))
    index = SessionIndex(db)
    index.create_session(session_id=f"kiwi-{CSI_C1}", source="cli", title=f"kiwi title {HOSTILE}",
                         started_at=time.time() - 60)
    index.append_message(f"kiwi-{CSI_C1}", "user", f"kiwi question {HOSTILE}")
    index.append_message(f"kiwi-{CSI_C1}", "tool", f"kiwi result {CR}", tool_name=f"t{BEL}")
    with db.write():
        db.execute("UPDATE sessions SET workspace = ?", (f"/w/{OSC8}",))
    db.close()
    return home


def run(home: Home, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "HERMES_HOME": str(home.root), "COLUMNS": "200"}
    return subprocess.run([*SERVER, "--home", str(home.root), *argv], capture_output=True, timeout=timeout,
                          env=env)


def raw_controls(data: bytes) -> list[bytes]:
    return [b for b in FORBIDDEN if b in data]


HUMAN = [
    ["sessions", "list"],
    ["sessions", "search", "kiwi"],
    ["sessions", "show", "kiwi-"],
    ["facts", "list"],
    ["facts", "search", "kiwi"],
    ["facts", "probe", "Kiwi"],
    ["facts", "entities"],
    ["recall", "kiwi"],
    ["recall", "kiwi", "--budget", "2000"],
    ["memory", "show"],
    ["memory", "prompt"],
    ["status"],
    ["sessions", "stats"],
]


@pytest.mark.parametrize("argv", HUMAN, ids=[" ".join(a) for a in HUMAN])
def test_human_output_has_no_raw_control_bytes(hostile_home, argv):
    result = run(hostile_home, *argv)
    assert b"Traceback" not in result.stderr, result.stderr.decode(errors="replace")
    assert raw_controls(result.stdout) == [], result.stdout[:1500]
    assert raw_controls(result.stderr) == [], result.stderr[:1500]


JSONED = [
    (["sessions", "list", "--json"], f"kiwi title {HOSTILE}"),
    (["sessions", "show", "kiwi-", "--json"], f"kiwi question {HOSTILE}"),
    (["facts", "list", "--json"], f"kiwi fact {HOSTILE}"),
]


@pytest.mark.parametrize(("argv", "exact"), JSONED, ids=[" ".join(a) for a, _ in JSONED])
def test_json_output_is_exact_and_terminal_safe(hostile_home, argv, exact):
    result = run(hostile_home, *argv)
    assert result.returncode == 0, result.stderr
    assert raw_controls(result.stdout) == [], result.stdout[:1500]
    assert exact in _strings(json.loads(result.stdout)), result.stdout[:1500]


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_a_file_name_with_escapes_gives_a_safe_error(hostile_home, tmp_path):
    bad = tmp_path / f"evil{OSC52}{CSI_C1}name.jsonl"
    bad.write_bytes(b"\xff\xfe not json\n" * 3)
    missing = tmp_path / f"gone\x1b[2J{BIDI}.jsonl"
    for target in (bad, missing, tmp_path):
        result = run(hostile_home, "sessions", "index", str(target))
        assert b"Traceback" not in result.stderr, result.stderr.decode(errors="replace")
        assert raw_controls(result.stdout) == [], result.stdout
        assert raw_controls(result.stderr) == [], result.stderr


@pytest.mark.slow
def test_escapes_in_arguments_are_not_echoed_raw(hostile_home):
    for argv in (["sessions", "show", f"nope{OSC8}"], ["facts", "probe", f"x{CSI_C1}"],
                 ["facts", "remove", f"1{BEL}"], ["recall", "kiwi", "--kinds", f"bad{CR}"],
                 ["tool", f"no_such{OSC52}", "{}"], ["tool", "recall", f"{{bad json {CSI_C1}"]):
        result = run(hostile_home, *argv)
        assert b"Traceback" not in result.stderr, (argv, result.stderr.decode(errors="replace"))
        assert raw_controls(result.stdout) == [], (argv, result.stdout)
        assert raw_controls(result.stderr) == [], (argv, result.stderr)

