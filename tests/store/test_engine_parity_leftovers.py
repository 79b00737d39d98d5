"""Parity leftovers of the engine audit, as a user meets them on the same store on SQLite and on
PostgreSQL:

- ``restore`` refused an changed store in two wordings (backup.py: one now);
- ``facts probe istanbul`` did not find the entity "İstanbul" that ``facts search istanbul``
  finds: entity keys folded case but not the dot of İ as the index does (facts/rows.py).
"""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.facts.rows import legacy_entity_key
from hermes_store.facts.store import FactStore


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_restore_refusal_reads_the_same_on_both_engines(home, engine, tmp_path):
    with FactStore(home) as facts:
        facts.add_fact("the deploy runs on fridays")
    code, out = _cli("backup", str(tmp_path), "--json")
    assert code == 0, out
    taken = json.loads(out)["backup"]
    time.sleep(0.05)  # SQLite tells a change by the file's time
    with FactStore(home) as facts:
        facts.add_fact("a fact written after the backup")
    code, out = _cli("restore", taken)
    assert code == 1
    assert (f"refusing to overwrite it: it holds rows that are not those of the backup {taken} "
            "(it changed after the backup was taken, or is another store) "
            "(pass --force to restore anyway)") in " ".join(out.split()), out
    with FactStore(home) as facts:  # nothing lost by the refusal
        assert len(facts.list_facts(limit=10)) == 2


def test_probe_finds_a_name_typed_plainly(home, engine):
    with FactStore(home) as facts:
        fact_id = facts.add_fact("We flew to İstanbul last spring", "general", "")["fact_id"]
        assert [r["fact_id"] for r in facts.search("istanbul")] == [fact_id]
        for typed in ("istanbul", "ISTANBUL", "İstanbul", "i̇stanbul"):
            found = facts.resolve_entity(typed)
            assert found is not None and found["name"] == "İstanbul", typed
            assert [r["fact_id"] for r in facts.probe(typed)] == [fact_id], typed
    code, out = _cli("facts", "probe", "istanbul", "--json")
    assert code == 0 and fact_id in [r["fact_id"] for r in json.loads(out)["results"]], out


def test_entities_stored_under_the_keys_written_before_are_still_found(home, engine):
    with FactStore(home) as facts:
        # an entity and an alias as a store written before the change holds them
        old = facts.storage.insert_entity("İzmir", legacy_entity_key("İzmir"))
        assert facts.storage.add_alias(old, "Smyrna Café", legacy_entity_key("Smyrna Café"))
        assert facts.resolve_entity("İzmir")["entity_id"] == old
        assert facts.resolve_entity("smyrna café")["entity_id"] == old
        # a new fact naming it links the same entity, and its alias is not given away again
        fact_id = facts.add_fact("The ferry to İzmir leaves at nine", "general", "")["fact_id"]
        assert [r["fact_id"] for r in facts.probe("İzmir")] == [fact_id]
        assert [e["name"] for e in facts.list_entities()].count("İzmir") == 1
        assert not facts.add_alias("Ankara", "Smyrna Café")
