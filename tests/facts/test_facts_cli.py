"""``hermes-store facts …`` commands and ``hermes-store tool fact_store``."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hermes_store.cli import cli


def run(home, *args):
    return CliRunner().invoke(cli, ["--home", str(home.root), *args])


def test_facts_commands_json(home):
    assert json.loads(run(home, "facts", "add", "Alice lives in Paris", "--json").output)["status"] == "added"
    assert json.loads(run(home, "facts", "add", "Alice lives in Paris", "--json").output)["status"] == "exists"
    run(home, "facts", "add", "Alice lives in Berlin", "--tags", "move")
    assert json.loads(run(home, "facts", "search", "Berlin", "--json").output)["count"] == 1
    assert json.loads(run(home, "facts", "probe", "alice", "--json").output)["count"] == 2
    assert json.loads(run(home, "facts", "related", "alice", "--json").output)["count"] == 2
    assert json.loads(run(home, "facts", "reason", "Alice", "Paris", "--json").output)["count"] == 1
    assert json.loads(run(home, "facts", "contradict", "--json").output)["count"] == 1
    fb = json.loads(run(home, "facts", "feedback", "helpful", "1", "--json").output)
    assert fb["new_trust"] == 0.55
    assert json.loads(run(home, "facts", "update", "2", "--trust-delta", "0.1", "--json").output)["updated"]
    listed = json.loads(run(home, "facts", "list", "--json").output)
    assert [f["fact_id"] for f in listed["facts"]] == [2, 1]
    assert json.loads(run(home, "facts", "remove", "2", "--json").output)["removed"] is True


def test_facts_errors_exit_nonzero(home):
    result = run(home, "facts", "feedback", "helpful", "5")
    assert result.exit_code == 1 and "fact_id 5 not found" in result.output
    result = run(home, "facts", "remove", "5")
    assert result.exit_code == 1
    result = run(home, "facts", "feedback", "unhelpful", "5", "--json")
    assert result.exit_code == 1 and json.loads(result.output)["success"] is False


def test_human_output_and_tool_command(home):
    assert run(home, "facts", "add", "Bob plays chess").output.strip() == "#1 added"
    assert "Bob plays chess" in run(home, "facts", "probe", "Bob").output
    out = run(home, "tool", "fact_store", '{"action": "search", "query": "chess"}').output
    assert json.loads(out)["count"] == 1
    out = run(home, "tool", "fact_feedback", '{"action": "helpful", "fact_id": 1}').output
    assert json.loads(out)["helpful_count"] == 1


def test_entities_and_alias_commands(home):
    run(home, "facts", "add", "Robert fixed the boiler")
    assert run(home, "facts", "alias", "Robert", "Bob").output.strip() == "Robert aka Bob"
    assert run(home, "facts", "alias", "Robert", "bob").exit_code == 1
    listed = json.loads(run(home, "facts", "entities", "--json").output)
    assert listed["entities"][0]["name"] == "Robert" and listed["entities"][0]["aliases"] == ["Bob"]
    probe = json.loads(run(home, "facts", "probe", "bob", "--json").output)
    assert probe["results"][0]["content"] == "Robert fixed the boiler"
