"""probe / related / reason / contradict behaviour on a small hand-made store."""

from __future__ import annotations

import pytest


@pytest.fixture
def people(store):
    for text in [
        "Alice lives in Paris",
        "Alice works as a nurse",
        "Alice's favourite colour is blue",
        "Alice works with Bob at Acme",
        "Bob lives in Berlin",
        "Bob plays the guitar",
        "Carol teaches maths",
        "Carol is married to Dave",
    ]:
        store.add_fact(text)
    return store


def test_probe_returns_exactly_the_entity_facts(people):
    got = {r["content"] for r in people.probe("alice")}
    assert got == {"Alice lives in Paris", "Alice works as a nurse",
                   "Alice's favourite colour is blue", "Alice works with Bob at Acme"}


def test_related_puts_connections_first_then_neighbours(people):
    results = people.related("Alice")
    assert results[0]["content"] == "Alice works with Bob at Acme"
    assert results[0]["related_entities"] == ["Acme", "Bob"]
    contents = [r["content"] for r in results]
    assert "Bob lives in Berlin" in contents
    assert "Carol teaches maths" not in contents
    assert contents.index("Alice lives in Paris") < contents.index("Bob plays the guitar")


def test_reason_requires_co_occurrence(people):
    results = people.reason(["Alice", "Bob"])
    assert results[0]["content"] == "Alice works with Bob at Acme"
    assert all("Carol" not in r["content"] for r in results)


def test_reason_chains_through_shared_entity(people):
    results = people.reason(["Carol", "Dave"])
    assert [r["content"] for r in results] == ["Carol is married to Dave"]
    people.add_fact("Dave works at Acme")
    chain = people.reason(["Carol", "Acme"])
    assert chain and all(r.get("via") == "Dave" for r in chain)


def test_contradict_finds_value_conflicts_only(store):
    for text in ["Alice lives in Paris", "Alice lives in Berlin", "Alice was born in Paris",
                 "Bob lives in Paris", "Alice likes tea", "Alice does not like tea",
                 "Alice likes green tea with honey"]:
        store.add_fact(text)
    pairs = {(p["fact_a"]["content"], p["fact_b"]["content"]) for p in store.contradict(limit=50)}
    assert ("Alice lives in Paris", "Alice lives in Berlin") in pairs
    assert ("Alice likes tea", "Alice does not like tea") in pairs
    assert ("Alice lives in Paris", "Alice was born in Paris") not in pairs
    assert ("Alice lives in Paris", "Bob lives in Paris") not in pairs
    assert not any("honey" in a or "honey" in b for a, b in pairs)
    item = store.contradict(limit=1)[0]
    assert set(item) == {"fact_a", "fact_b", "entity_overlap", "content_similarity",
                         "contradiction_score", "shared_entities"}


def test_search_finds_entity_facts_without_word_match(people):
    results = people.search("what do we know about alice")
    assert {r["content"] for r in results[:4]} >= {"Alice lives in Paris", "Alice works as a nurse"}
    assert all("fts_rank" in r and "score" in r for r in results)


def test_contradict_skips_multi_valued_and_agent_relations(store):
    for text in ["Alice speaks French", "Alice speaks German", "Alice works with Bob",
                 "Alice works with Carol", "Bob plays chess", "Carol plays golf",
                 "Alice borrowed a pen from Bob", "Alice borrowed a pen from Carol",
                 "Alice works as a nurse", "Alice works at Acme"]:
        store.add_fact(text)
    assert store.contradict(limit=50) == []
    low = store.contradict(limit=50, threshold=0.4)
    assert [(p["fact_a"]["content"], p["fact_b"]["content"]) for p in low] == [
        ("Alice borrowed a pen from Bob", "Alice borrowed a pen from Carol")]


def test_contradict_paraphrase_numbers_and_aliases(store):
    for text in ["Robert aka Bob lives in Oslo", "Bob moved to Bergen",
                 "Dana is 31 years old", "Dana is 32 years old"]:
        store.add_fact(text)
    pairs = {(p["fact_a"]["content"], p["fact_b"]["content"]) for p in store.contradict(limit=10)}
    assert pairs == {("Robert aka Bob lives in Oslo", "Bob moved to Bergen"),
                     ("Dana is 31 years old", "Dana is 32 years old")}


def test_contradict_work_is_bounded_by_a_popular_entity(store, monkeypatch):
    """1,200 facts that only mention one entity ("… lives in Paris", each about another
    person) cost no comparisons; a contradiction planted among them is still found."""
    from hermes_store.facts import conflicts

    syllables = ["ka", "lo", "mi", "ra", "vo", "shi", "bel", "dor", "tu", "ne"]
    names = [f"{a}{b}{c}".capitalize() for a in syllables for b in syllables for c in syllables][:1200]
    for name in names:
        store.add_fact(f"{name} lives in Paris")
    store.add_fact("Paris is the capital of France")
    store.add_fact("Paris is the capital of Italy")
    calls = []
    original = conflicts.compare

    def counting(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(conflicts, "compare", counting)
    pairs = {(p["fact_a"]["content"], p["fact_b"]["content"]) for p in store.contradict(limit=50)}
    assert ("Paris is the capital of France", "Paris is the capital of Italy") in pairs
    # before: every pair of the entity's 300 most recent facts (44,850 comparisons)
    assert len(calls) < 50


def test_contradict_word_stemming_to_a_negation_is_not_a_negation(store):
    # "note" stems to "not": it must not read as the negation of the other fact
    store.add_fact("Alice likes the project note")
    store.add_fact("Alice does not like the project note")
    pairs = {(p["fact_a"]["content"], p["fact_b"]["content"]) for p in store.contradict(limit=10)}
    assert {frozenset(p) for p in pairs} == {
        frozenset({"Alice likes the project note", "Alice does not like the project note"})}
