"""``hermes-store facts …`` commands and ``hermes-store tool fact_store``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


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
    assert result.exit_code == 1 and json.loads(result.stdout)["success"] is False and "Error: " in result.stderr


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


def test_import_hermes_store(home, tmp_path):
    script = (
        "import sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1])\n"
        "c.execute('CREATE TABLE facts (fact_id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL UNIQUE,"
        " category TEXT DEFAULT \\'general\\', tags TEXT DEFAULT \\'\\', trust_score REAL DEFAULT 0.5,"
        " retrieval_count INTEGER DEFAULT 0, helpful_count INTEGER DEFAULT 0,"
        " created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,"
        " hrr_vector BLOB)')\n"
        "c.execute(\"INSERT INTO facts (content, category, tags, trust_score, helpful_count, created_at)"
        " VALUES ('Alice lives in Paris', 'user_pref', 'home', 0.8, 3, '2025-01-02 03:04:05')\")\n"
        "c.execute(\"INSERT INTO facts (content, hrr_vector) VALUES ('Bob likes tea', x'00')\")\n"
        "c.commit()\n"
    )
    import subprocess
    import sys

    source = tmp_path / "memory_store.db"
    subprocess.run([sys.executable, "-c", script, str(source)], check=True)
    run(home, "facts", "add", "Bob likes tea")
    reply = json.loads(run(home, "facts", "import-hermes", str(source), "--json").output)
    assert reply == {"success": True, "imported": 1, "skipped": 1, "renumbered": 1, "entities": 0}
    fact = json.loads(run(home, "facts", "probe", "Alice", "--json").output)["results"][0]
    assert (fact["category"], fact["tags"], fact["trust_score"], fact["helpful_count"], fact["created_at"]) == (
        "user_pref", "home", 0.8, 3, "2025-01-02 03:04:05")
    minimal = tmp_path / "minimal.db"
    subprocess.run([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                    "c.execute('CREATE TABLE facts (content TEXT)'); "
                    "c.execute(\"INSERT INTO facts VALUES ('Carol rides a bike')\"); c.commit()",
                    str(minimal)], check=True)
    assert json.loads(run(home, "facts", "import-hermes", str(minimal), "--json").output)["imported"] == 1
    assert json.loads(run(home, "facts", "probe", "Carol", "--json").output)["results"][0]["trust_score"] == 0.5
    missing = run(home, "facts", "import-hermes", str(tmp_path / "nope.db"))
    assert missing.exit_code == 1 and "nope.db" in missing.output


def test_import_hermes_keeps_fact_and_entity_ids(home, tmp_path):
    from tests.facts.holographic_fixture import make_holographic_db

    source = make_holographic_db(
        tmp_path / "memory_store.db",
        facts=[{"content": "Alice Smith lives in Paris", "trust": 0.9, "helpful": 2, "retrievals": 5},
               {"content": "temporary note"},
               {"content": "Bob Jones prefers tea", "category": "user_pref", "tags": "drinks"}],
        entities=["Alice Smith", "Paris", "Bob Jones"],
        links=[("Alice Smith lives in Paris", 1), ("Alice Smith lives in Paris", 2),
               ("Bob Jones prefers tea", 3)],
        delete=["temporary note"])  # ids 1 and 3 remain, as in a store that saw a removal
    reply = json.loads(run(home, "facts", "import-hermes", str(source), "--json").output)
    assert reply == {"success": True, "imported": 2, "skipped": 0, "renumbered": 0, "entities": 3}
    listed = {f["fact_id"]: f for f in json.loads(run(home, "facts", "list", "--json").output)["facts"]}
    assert sorted(listed) == [1, 3]  # was 1, 2 before ids were kept
    assert listed[1]["content"] == "Alice Smith lives in Paris"
    assert (listed[1]["trust_score"], listed[1]["helpful_count"], listed[1]["retrieval_count"]) == (0.9, 2, 5)
    assert (listed[3]["category"], listed[3]["tags"]) == ("user_pref", "drinks")
    entities = {e["name"]: e["entity_id"] for e in
                json.loads(run(home, "facts", "entities", "--json").output)["entities"]}
    assert entities["Alice Smith"] == 1 and entities["Paris"] == 2 and entities["Bob Jones"] == 3
    probe = json.loads(run(home, "facts", "probe", "Paris", "--json").output)["results"]
    assert [f["fact_id"] for f in probe] == [1]  # holographic's link kept (our extractor skips "Paris")
    added = json.loads(run(home, "facts", "add", "a new fact", "--json").output)
    assert added["fact_id"] == 4  # new ids continue after the imported ones
    again = json.loads(run(home, "facts", "add", "Bob Jones prefers tea", "--json").output)
    assert (again["fact_id"], again["status"]) == (3, "exists")  # holographic would say "added"


@pytest.mark.parametrize("argv", [["facts", "remove", "999"], ["facts", "update", "999", "--content", "x"]])
def test_a_missing_fact_is_refused_with_json_too(home, argv):
    """`facts remove 999` exits 1 ('fact_id 999 not found'); with --json it printed
    `removed: false` and exited 0, as if it had done what was asked (docs/cli.md: 1 when refused,
    --json or not); then it exited 1 still saying `success: true` (the tool's reply). The
    command's JSON says `success: false` and the reason; the tool's reply keeps Hermes' shape."""
    assert CliRunner().invoke(cli, ["--home", str(home.root), "facts", "add", "a stored fact"]).exit_code == 0
    plain = CliRunner().invoke(cli, ["--home", str(home.root), *argv])
    as_json = CliRunner().invoke(cli, ["--home", str(home.root), *argv, "--json"])
    assert plain.exit_code == as_json.exit_code == 1, (plain.output, as_json.output)
    reply = json.loads(as_json.stdout)
    assert (reply["success"], reply["error"]) == (False, "fact_id 999 not found")
    assert as_json.stderr == "Error: fact_id 999 not found\n"
    tool = CliRunner().invoke(cli, ["--home", str(home.root), "tool", "fact_store",
                                    json.dumps({"action": argv[1], "fact_id": 999, "content": "x"})])
    assert tool.exit_code == 0 and json.loads(tool.stdout)["success"] is True  # Hermes' own reply
    assert plain.stderr == "Error: fact_id 999 not found\n"


@pytest.mark.parametrize("command", [["list"], ["search", "alice"], ["probe", "alice"], ["reason", "Alice"]])
def test_a_limit_past_the_tools_cap_is_refused_not_cut(home, command):
    """``facts list --limit 100000`` printed at most 100 facts and said nothing (the fact_store
    tool's cap): the option now names its range, and a value past it is a usage error."""
    result = run(home, "facts", *command, "--limit", "100000")
    assert result.exit_code == 2 and "100000 is not in the range 1<=x<=100" in result.output
    assert run(home, "facts", *command, "--limit", "100").exit_code == 0
