"""Issue 14 point 9: contradict finds candidates through the entity index, within a budget.

The index path (``conflicts.index_candidates``: pages of entities from the ``fact_entities``
index, each entity's most recent facts) must give exactly the pairs of the reference full
scan (``conflicts.scan_candidates``), in the same order, on both engines; its reads grow
with the entities that have candidates, not with the store; and a call stops at its time or
work budget with a note instead of running on.
"""

from __future__ import annotations

import random

import pytest

from hermes_store.budget import query_budget
from hermes_store.facts import FactStore, conflicts
from hermes_store.facts.fact_tools import run_fact_store

FIRST = ["Ana", "Bruno", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas",
         "Kenji", "Lena", "Marco", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tariq"]
LAST = ["Abel", "Borg", "Costa", "Dahl", "Engel", "Fox", "Gray", "Holm", "Ito", "Jensen"]
PLACES = ["Paris", "Lisbon", "Oslo", "Kyoto", "Lima", "Dakar", "Quito", "Hanoi"]
JOBS = ["nurse", "pilot", "baker", "teacher", "plumber", "chemist", "lawyer", "farmer"]
DRINKS = ["tea", "coffee", "cocoa", "juice"]
TEMPLATES = [
    "{p} lives in {place}", "{p} moved to {place}", "{p} works as a {job}", "{p} is employed as a {job}",
    "{p} likes {drink}", "{p} does not like {drink}", "{p} is {age} years old", "{p}'s favourite drink is {drink}",
    "{p} works with {q}", "{p} borrowed a book from {q}", "{p} visited {place} with {q}",
    "{place} is the capital of {country}", "{p} and {q} live in {place}", "The office of {p} is in {place}",
]
COUNTRIES = ["France", "Italy", "Peru", "Japan"]


def fill(store: FactStore, count: int, seed: int) -> None:
    """``count`` random facts (several categories, aliases, updates) about a small cast."""
    rng = random.Random(seed)
    people = [f"{f} {last}" for f in FIRST for last in LAST[:3]]
    added: list[int] = []
    for i in range(count):
        template = rng.choice(TEMPLATES)
        p, q = rng.sample(people, 2)
        text = template.format(p=p, q=q, place=rng.choice(PLACES), job=rng.choice(JOBS),
                               drink=rng.choice(DRINKS), age=rng.randint(20, 60), country=rng.choice(COUNTRIES))
        reply = store.add_fact(text, category=rng.choice(["general", "general", "people", "places"]))
        if reply["status"] == "added":
            added.append(reply["fact_id"])
        if i % 97 == 0 and added:
            store.update_fact(rng.choice(added), trust_delta=0.05)
        if i % 211 == 0:
            store.add_alias(p, p.split()[0])


def pairs(report: conflicts.ContradictReport) -> list[tuple[int, int, float]]:
    return [(p["fact_a"]["fact_id"], p["fact_b"]["fact_id"], p["contradiction_score"]) for p in report.results]


@pytest.fixture
def facts(engine, home):
    store = FactStore(home, hrr_dim=64)
    yield store
    store.close()


def test_index_candidates_give_the_full_scans_pairs_in_the_same_order(facts, monkeypatch):
    fill(facts, 2500, seed=14)
    monkeypatch.setattr(conflicts, "ENTITY_PAGE", 37)            # many pages
    monkeypatch.setattr(conflicts, "MAX_FACTS_PER_ENTITY", 40)   # the per-entity cap bites
    checked = 0
    for category in (None, "people", "places"):
        for threshold in (0.5, 0.4):
            for limit in (10, 10**6):
                args = {"category": category, "threshold": threshold, "limit": limit, "seconds": 0}
                scan = conflicts.contradict_report(facts, source="scan", **args)
                index = conflicts.contradict_report(facts, source="index", **args)
                assert scan.note is None and index.note is None
                assert pairs(index) == pairs(scan), (category, threshold, limit)
                assert index.comparisons == scan.comparisons
                checked += len(index.results)
    assert checked > 100  # the comparison is not vacuous
    assert [p["contradiction_score"] for p in facts.contradict(limit=10**6)] == \
        [s for _, _, s in pairs(conflicts.contradict_report(facts, source="scan", limit=10**6, seconds=0))]


def test_index_reads_grow_with_candidates_not_with_the_store(facts):
    with facts.storage.transaction():
        for i in range(1500):  # facts whose entities no other fact mentions
            facts.add_fact(f"Item{i:04d}x was catalogued", entities=[f"Item{i:04d}x"])
    facts.add_fact("Marta Quist lives in Lisbon")
    facts.add_fact("Marta Quist lives in Oslo")
    scan = conflicts.contradict_report(facts, source="scan", seconds=0)
    index = conflicts.contradict_report(facts, source="index", seconds=0)
    assert pairs(index) == pairs(scan) and len(index.results) == 1
    assert scan.rows >= 1500
    assert index.rows < 20, index.rows


def test_contradict_stops_at_its_time_budget_with_a_note(facts):
    fill(facts, 300, seed=3)
    full = conflicts.contradict_report(facts, limit=10**6, seconds=0)
    assert full.note is None and full.results
    with query_budget(1e-9):  # the tool/CLI budget applies when no seconds are given
        cut = facts.contradict_report(limit=10**6)
    assert cut.note and "time budget" in cut.note and "partial" in cut.note
    assert len(cut.results) < len(full.results)
    with query_budget(1e-9):
        reply = run_fact_store({"action": "contradict", "limit": 50}, facts)
    assert reply["success"] is True and "time budget" in reply["query_note"]


def test_contradict_stops_at_its_work_budget_with_a_note(facts):
    fill(facts, 300, seed=4)
    full = conflicts.contradict_report(facts, limit=10**6, seconds=0)
    cut = conflicts.contradict_report(facts, limit=10**6, seconds=0, max_work=full.rows // 3)
    assert cut.note and "work budget" in cut.note
    assert cut.rows + cut.comparisons <= full.rows + full.comparisons
    assert set(pairs(cut)) < set(pairs(full))
    assert run_fact_store({"action": "contradict"}, facts).get("query_note") is None
