"""One way to name a message (issue 22): ``SESSION_ID#N`` printed everywhere and accepted back."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.sessions.refs import MessageRef, parse_ref

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_home" / "sessions"
REF = re.compile(r"(\d{8}_\d{6}_[0-9a-f]+#\d+)")


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_parse_ref_forms():
    assert parse_ref("abc#3") == MessageRef("abc", seq=3)
    assert parse_ref("@session:abc") == MessageRef("abc")
    assert parse_ref("@session:abc #27") == MessageRef("abc", message_id=27)
    assert parse_ref(" abc ") == MessageRef("abc")


def test_search_recall_show_and_session_search_agree(engine, home, tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "s")
    assert _run("sessions", "index", str(tmp_path / "s")).exit_code == 0
    searched = _run("sessions", "search", "crontab", "--limit", "1").stdout
    ref = REF.search(searched).group(1)
    recalled = _run("recall", "crontab", "--kinds", "sessions", "--limit", "1").stdout
    assert ref in recalled  # recall prints the same name for the same message
    data = json.loads(_run("recall", "crontab", "--kinds", "sessions", "--limit", "1", "--json").stdout)
    assert data["results"][0]["ref"] == ref if "ref" in data["results"][0] else \
        data["results"][0]["provenance"]["ref"] == ref
    shown = _run("sessions", "show", ref, "--context", "1").stdout
    assert f"> {ref}" in shown and shown.count("\n> ") == 1
    reply = json.loads(_run("tool", "session_search", json.dumps({"session_id": ref, "window": 1})).stdout)
    assert reply["success"] and reply["mode"] == "scroll"
    anchor = [m for m in reply["messages"] if m.get("anchor")]
    assert [m["ref"] for m in anchor] == [ref]
    # Hermes' own form keeps its meaning: around_message_id is the row id
    again = json.loads(_run("tool", "session_search", json.dumps(
        {"session_id": ref.split("#")[0], "around_message_id": anchor[0]["id"], "window": 1})).stdout)
    assert [m["ref"] for m in again["messages"] if m.get("anchor")] == [ref]
    # the old recall label @session:ID #ROWID names the same message
    old = _run("sessions", "show", f"@session:{ref.split('#')[0]} #{anchor[0]['id']}", "--context", "0").stdout
    assert f"> {ref}" in old
    missing = _run("sessions", "show", ref.split("#")[0] + "#999")
    assert missing.exit_code == 1 and "#999" in missing.stderr
