"""No command creates a database it was not asked to (issue 21): every read-only command run
on a home with only MEMORY.md leaves no store file behind, and still answers from the file.

The same with ``--database-url sqlite:///...`` naming a file that does not exist: it is not
created either. A write (``memory add``) is what creates the store.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli

ENTRIES = ("The kettle is blue", "Deploy on Fridays never")

# (argv, text the output must hold): every command that only reads
READS = [
    (["memory", "show"], "The kettle is blue"),
    (["memory", "show", "--json"], "Deploy on Fridays never"),
    (["memory", "history"], "No history yet."),
    (["memory", "prompt"], "The kettle is blue"),
    (["memory", "cost"], "MEMORY.md"),
    (["memory", "pending"], ""),
    (["status"], "not created yet"),
    (["status", "--json"], '"exists": false'),
    (["recall", "kettle"], "The kettle is blue"),
    (["sessions", "search", "kettle"], "No matching messages."),
    (["sessions", "list"], "No sessions indexed."),
    (["facts", "list"], "No facts found."),
    (["facts", "search", "kettle"], "No facts found."),
    (["facts", "export"], '"facts": 0'),
    (["doctor"], "yet"),
    (["tool", "session_search", json.dumps({"query": "kettle"})], '"success": true'),
    (["tool", "recall", json.dumps({"query": "kettle"})], "The kettle is blue"),
]


@pytest.fixture
def memory_only_home(home):
    """A home holding MEMORY.md and nothing else (no store file)."""
    home.memory_file.write_text("\n§\n".join(ENTRIES), encoding="utf-8")
    assert not home.db_path.exists()
    return home


def _run(home, argv, *, url=None):
    head = ["--home", str(home.root)] + (["--database-url", url] if url else [])
    result = CliRunner().invoke(cli, [*head, *argv])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        argv,
        result.exception,
    )
    assert "Traceback" not in result.output, (argv, result.output)
    return result


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize(("argv", "expected"), READS, ids=[" ".join(a[:2]) for a, _ in READS])
def test_a_read_command_creates_no_store(memory_only_home, argv, expected):
    home = memory_only_home
    before = _files(home.root)
    result = _run(home, argv)
    assert result.exit_code == 0, (argv, result.output)
    assert expected in result.output, (argv, result.output)
    assert not home.db_path.exists(), f"{argv} created {home.db_path}"
    assert _files(home.root) == before, f"{argv} left files behind"


@pytest.mark.parametrize(("argv", "expected"), READS, ids=[" ".join(a[:2]) for a, _ in READS])
def test_a_read_command_does_not_create_the_file_a_url_names(
    memory_only_home, tmp_path, argv, expected
):
    home = memory_only_home
    other = tmp_path / "x" / "other.db"
    result = _run(home, argv, url=f"sqlite:///{other}")
    if argv[0] == "doctor":  # its folder is missing too: no write would work, doctor fails naming it
        assert result.exit_code == 1 and f"no directory {other.parent}" in result.output, result.output
    else:
        assert result.exit_code == 0, (argv, result.output)
    if argv[0] != "status" and argv[0] != "doctor":  # those name the other file instead
        assert expected in result.output, (argv, result.output)
    assert not other.exists() and not other.parent.exists(), f"{argv} created {other}"
    assert not home.db_path.exists()


def test_the_first_write_creates_the_store_and_records_the_file(memory_only_home):
    home = memory_only_home
    assert _run(home, ["memory", "add", "Lunch at noon"]).exit_code == 0
    assert home.db_path.exists()
    shown = json.loads(_run(home, ["memory", "show", "--json"]).output)
    origins = {row["text"]: row["created_origin"] for row in shown["memory"]["entries"]}
    assert origins == {ENTRIES[0]: "import", ENTRIES[1]: "import", "Lunch at noon": "cli"}


@pytest.mark.parametrize(("argv", "expected"), READS, ids=[" ".join(a[:2]) for a, _ in READS])
def test_a_read_command_creates_nothing_in_an_empty_postgresql_database(memory_only_home, pg_url, argv, expected):
    """The same reads against a PostgreSQL database holding no store: nothing is created there
    (no table, no migration) nor in the home (`facts export` migrated the whole store)."""
    from hermes_store.pgdb import SCHEMA_HOLDS_ANYTHING, PgDatabase

    home = memory_only_home
    before = _files(home.root)
    result = _run(home, argv, url=pg_url)
    assert result.exit_code == 0, (argv, result.output)
    if argv[0] not in ("status", "doctor"):  # those name the server's store instead
        assert expected in result.output, (argv, result.output)
    with PgDatabase(pg_url, migrate=False) as db:
        assert db.scalar(SCHEMA_HOLDS_ANYTHING) is False, f"{argv} created tables in the database"
    assert _files(home.root) == before, f"{argv} left files behind"


# (argv, exit code): commands that change or remove what is stored; with no store there is
# nothing to change, and they said so after creating a whole store (an empty PostgreSQL
# database was migrated: 66 objects, even by a failing `sessions delete x`)
NOTHING_TO_CHANGE = [
    (["sessions", "delete", "x"], 1),
    (["sessions", "delete", "x", "--forget"], 1),
    (["sessions", "prune", "--older-than", "90d", "--dry-run"], 0),
    (["sessions", "prune", "--older-than", "90d"], 0),
    (["forget", "--session", "x"], 1),
    (["forget", "--matching", "kettle"], 0),
    (["redact", "--dry-run"], 0),
    (["redact"], 0),
    (["facts", "remove", "1"], 1),
    (["facts", "update", "1", "--content", "x"], 1),
    (["facts", "feedback", "helpful", "1"], 1),
]


@pytest.mark.parametrize(("argv", "code"), NOTHING_TO_CHANGE, ids=[" ".join(a) for a, _ in NOTHING_TO_CHANGE])
@pytest.mark.parametrize("engine_name", ["sqlite", "postgresql"])
def test_a_change_with_no_store_creates_none(memory_only_home, request, engine_name, argv, code):
    from hermes_store.pgdb import SCHEMA_HOLDS_ANYTHING, PgDatabase

    home = memory_only_home
    url = request.getfixturevalue("pg_url") if engine_name == "postgresql" else None
    before = _files(home.root)
    result = _run(home, argv, url=url)
    assert result.exit_code == code, (argv, result.output)
    assert _files(home.root) == before, f"{argv} left files behind"
    if url:
        with PgDatabase(url, migrate=False) as db:
            assert db.scalar(SCHEMA_HOLDS_ANYTHING) is False, f"{argv} created a store in the database"


TOOL_CHANGES = [
    ("fact_store", {"action": "remove", "fact_id": 1}),
    ("fact_store", {"action": "update", "fact_id": 1, "content": "x"}),
    ("fact_feedback", {"action": "helpful", "fact_id": 1}),
]


@pytest.mark.parametrize(("tool", "args"), TOOL_CHANGES, ids=[a["action"] for _, a in TOOL_CHANGES])
def test_a_fact_tool_change_with_no_store_creates_none(memory_only_home, pg_url, tool, args):
    """The agent's `fact_store` remove/update on an empty PostgreSQL database answered
    'removed: false' after migrating a whole store into it."""
    from hermes_store.pgdb import SCHEMA_HOLDS_ANYTHING, PgDatabase

    result = _run(memory_only_home, ["tool", tool, json.dumps(args)], url=pg_url)
    assert result.exit_code == 0, result.output
    reply = json.loads(result.output)
    assert reply.get("removed") is False or reply.get("updated") is False or "not found" in reply.get("error", "")
    with PgDatabase(pg_url, migrate=False) as db:
        assert db.scalar(SCHEMA_HOLDS_ANYTHING) is False
