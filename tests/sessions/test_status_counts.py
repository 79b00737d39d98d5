"""``status`` shows how many sessions, messages and facts the store holds (issue 22), both engines."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_home" / "sessions"


def test_status_counts_sessions_messages_and_facts(engine, home):
    runner = CliRunner()
    before = json.loads(runner.invoke(cli, ["status", "--json"]).output)["database"]["counts"]
    assert before == {"sessions": 0, "messages": 0, "facts": 0}
    assert runner.invoke(cli, ["sessions", "index", str(SAMPLE)]).exit_code == 0
    assert runner.invoke(cli, ["facts", "add", "Ana prefers PostgreSQL"]).exit_code == 0
    shown = runner.invoke(cli, ["status"])
    assert shown.exit_code == 0
    assert "Sessions:   4" in shown.output
    assert "Messages:   23" in shown.output
    assert "Facts:      1" in shown.output
    counts = json.loads(runner.invoke(cli, ["status", "--json"]).output)["database"]["counts"]
    assert counts == {"sessions": 4, "messages": 23, "facts": 1}
