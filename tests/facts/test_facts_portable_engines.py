"""``facts export`` / ``facts import`` between engines: a file exported from either engine
imports into either with every id, field and link kept, and exports again byte for byte."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.facts import FactStore
from hermes_store.home import Home


def _fill(home: Home) -> None:
    with FactStore(home) as store:
        for text, category in (("Alice Smith lives in Paris", "user_pref"), ("Bob Jones prefers tea", "general"),
                               ("temporary note", "general"), ("Robert aka Bob uses vim", "tools"),
                               ("王伟住在北京", "general")):
            store.add_fact(text, category, "home,pets")
        store.remove_fact(3)
        store.record_feedback(1, "helpful")
        store.record_feedback(2, "unhelpful")
        store.mark_retrieved([2, 2])


def _export(home: Home, url: str | None, dest) -> list[dict]:
    args = ["--home", str(home.root)] + (["--database-url", url] if url else [])
    result = CliRunner().invoke(cli, [*args, "facts", "export", str(dest)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in dest.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(("source", "target"), [("sqlite", "postgresql"), ("postgresql", "sqlite")])
def test_export_from_one_engine_imports_into_the_other(tmp_path, pg_store_url, monkeypatch, source, target):
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    urls = {"sqlite": None, "postgresql": pg_store_url}
    origin = Home(tmp_path / "origin", database_url=urls[source]).ensure()
    copy = Home(tmp_path / "copy", database_url=urls[target]).ensure()
    _fill(origin)
    first = _export(origin, urls[source], tmp_path / "first.jsonl")
    assert first[0]["kind"] == "hermes_store.facts" and first[0]["facts"] == 4
    args = ["--home", str(copy.root)] + (["--database-url", urls[target]] if urls[target] else [])
    result = CliRunner().invoke(cli, [*args, "facts", "import", str(tmp_path / "first.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["imported"] == 4
    again = _export(copy, urls[target], tmp_path / "again.jsonl")
    assert again == first  # ids (1, 2, 4, 5), trust, counters, timestamps, entities, aliases, links
    with FactStore(copy) as store:
        assert [f["fact_id"] for f in store.probe("Bob")] and store.resolve_entity("bob")["name"] == "Robert"
        assert store.search("北京")[0]["fact_id"] == 5


def test_an_entity_with_a_bad_created_at_is_named_by_line(tmp_path, monkeypatch):
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    home = Home(tmp_path / "home").ensure()
    dump = tmp_path / "facts.jsonl"
    dump.write_text('{"kind": "hermes_store.facts", "version": 1}\n'
                    '{"kind": "entity", "entity_id": 3, "name": "Alice", "created_at": 5}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(home.root), "facts", "import", str(dump)])
    assert result.exit_code == 1 and f"{dump}:2: 'created_at' must be a string" in result.output
