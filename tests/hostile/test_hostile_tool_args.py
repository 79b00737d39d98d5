"""NUL bytes and oversized list items in tool arguments, on both engines.

On PostgreSQL a NUL in ``fact_store`` content, tags, an entity name or a search made the call
fail with ``fact_store failed: DataError: PostgreSQL text fields cannot contain NUL (0x00)
bytes``, and a ``memory`` write put the entry in MEMORY.md while its provenance was refused and
queued for ever; on SQLite the same NUL was stored. Now every text the store keeps (facts,
memory provenance and index) and every fact lookup drops it, as transcripts always did, on both
engines.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.facts.store import FactStore
from hermes_store.tools import handle_tool_call


def call(home, name: str, args: dict) -> dict:
    return json.loads(handle_tool_call(name, args, home=home))


@pytest.mark.parametrize("args", [
    {"action": "add", "content": "okapi\x00 runs the build"},
    {"action": "add", "content": "okapi trains", "tags": "ci\x00,build"},
    {"action": "search", "query": "okapi\x00"},
    {"action": "probe", "entity": "Ok\x00api"},
    {"action": "related", "entity": "Ok\x00api"},
    {"action": "reason", "entities": ["Ok\x00api", "build\x00"]},
])
def test_fact_store_with_nul_answers_on_both_engines(engine, home, args) -> None:
    assert call(home, "fact_store", {"action": "add", "content": "Okapi owns the build"})["success"]
    out = call(home, "fact_store", args)
    assert out.get("success") is not False, out


def test_fact_text_is_stored_without_nul(engine, home) -> None:
    fact = call(home, "fact_store", {"action": "add", "content": "okapi\x00 deploys", "tags": "a\x00b"})
    assert fact["success"], fact
    assert call(home, "fact_store", {"action": "update", "fact_id": fact["fact_id"],
                                     "content": "okapi\x00 deploys twice"})["success"]
    with FactStore(home) as store:
        row = store.list_facts()[0]
    assert row["content"] == "okapi deploys twice" and row["tags"] == "ab"


def test_memory_write_with_nul_keeps_provenance(engine, home, capsys) -> None:
    out = call(home, "memory", {"action": "add", "target": "memory", "content": "okapi\x00 likes tea"})
    assert out["success"], out
    assert not (home.root / "memories" / "provenance.pending.jsonl").exists()
    assert "provenance unavailable" not in capsys.readouterr().err
    history = json.loads(CliRunner().invoke(cli, ["--home", str(home.root), "memory", "history", "--json"]).output)
    assert "okapi likes tea" in json.dumps(history)
    assert call(home, "memory", {"action": "remove", "target": "memory", "old_text": "okapi\x00"})["success"]


@pytest.mark.parametrize(("tool", "args"), [
    ("fact_store", {"action": "reason", "entities": ["okapi", "x" * 20_000_000]}),
    ("fact_store", {"action": "add", "content": "okapi", "entities": ["y" * 2_000_000]}),
    ("recall", {"query": "okapi", "kinds": "facts," + "z" * 2_000_000}),
])
def test_list_items_are_bounded_like_string_arguments(home, tool, args) -> None:
    """A list item had no size limit (a 20 MB entity made ``reason`` work for seconds) while
    a string argument over 1,000,000 characters is refused."""
    out = call(home, tool, args)
    assert out["success"] is False and "too long" in out["error"] and "limit 1,000,000" in out["error"]


@pytest.mark.parametrize("args", [
    ("forget", "--matching", "okapi\udcff"),
    ("sessions", "show", "okapi\udcff"),
    ("sessions", "list", "--source", "s\udcff"),
])
def test_cli_argument_that_is_not_utf8_is_named(engine, home, args) -> None:
    """Bytes that are not UTF-8 on the command line reach Python as lone surrogates; a lookup
    with one failed with "Error: 'utf-8' codec can't encode character '\\udcff' in position 5:
    surrogates not allowed", naming neither the value nor what to do."""
    result = CliRunner().invoke(cli, ["--home", str(home.root), *args])
    assert result.exit_code == 1
    assert f"Error: {args[-1]!r} holds bytes that are not valid UTF-8" in result.output


@pytest.mark.parametrize(("name", "value"), [("since", "-5d"), ("until", "last tuesday"), ("after", "garbage")])
def test_a_bad_recall_date_is_one_line_naming_the_argument_once(home, name, value) -> None:
    """Found driving hermes-store mcp: ``since: "-5d"`` answered "'since': since: not a date: ..."."""
    error = call(home, "recall", {"query": "okapi", name: value})["error"]
    assert error.startswith(f"'{name}': ") and error.count(name) == 1 and "\n" not in error, error


@pytest.mark.parametrize(("name", "text"), [
    ("recall", '{"query": "okapi", "kinds": ' + "[" * 200_000 + "]" * 200_000 + "}"),
    ("memory", '{"action": "add", "operations": [' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "]}"),
])
def test_arguments_nested_too_deeply_are_named_as_such(home, name, text) -> None:
    """Before: 'recall failed: RecursionError: maximum recursion depth exceeded while decoding a
    JSON array from a unicode string', a failure of the tool rather than of its arguments."""
    out = json.loads(handle_tool_call(name, text, home=home))
    assert out["success"] is False
    assert out["error"].startswith("arguments are nested too deeply to read (JSON nested over "), out
