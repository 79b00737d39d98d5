"""Entity extraction: single names, quotes, aka aliases, CJK, no apostrophe junk."""

from __future__ import annotations

from hermes_store.facts.entities import extract_entities


def names(text):
    return [e.name for e in extract_entities(text)]


def test_single_capitalised_names():
    assert names("Alice lives in Paris") == ["Alice", "Paris"]
    assert "McKellar" in names("I met McKellar yesterday")


def test_multi_word_names_and_connectors():
    assert names("She moved to New York") == ["New York"]
    assert names("He banks with Bank of America") == ["Bank of America"]


def test_apostrophes_do_not_create_junk():
    assert names("Alice's cat and Bob's dog") == ["Alice", "Bob"]
    assert names("I'm sure it's fine, don't worry") == []


def test_quoted_terms():
    assert names('The project is called "hermes store"') == ["hermes store"]
    assert names("We use 'uv' for packaging") == ["uv"]


def test_aka_becomes_alias_not_entity():
    found = extract_entities("Robert aka Bob works at Acme Corp")
    assert [e.name for e in found] == ["Robert", "Acme Corp"]
    assert found[0].aliases == ["Bob"]
    found = extract_entities("Alice Smith (also known as Ally) plays chess")
    assert found[0].name == "Alice Smith" and found[0].aliases == ["Ally"]


def test_cjk_names():
    assert names("王伟住在北京") == ["王伟"]
    assert "田中" in names("田中さんは東京に住んでいます")
    assert "アリス" in names("アリスはパンが好き")


def test_other_scripts_and_noise():
    assert "Дмитрий" in names("Дмитрий живёт здесь")
    assert names("run it with --verbose on 10.0.0.1") == []


def test_sentence_starters_are_not_names():
    assert names("Running the tests is slow. Honestly, Alice agreed.") == ["Alice"]
    assert names("東京の田中さんに会った") == ["田中"]


def test_aka_needs_a_word_boundary():
    found = extract_entities("Taka Betadu likes ramen")
    assert [(e.name, e.aliases) for e in found] == [("Taka Betadu", [])]


def test_secrets_do_not_link_facts_through_an_entity_redacted(home, engine):
    """A fact holding a secret is stored with the secret as ``[REDACTED:kind:digest]``, and the
    marker became an entity "REDACTED": every fact that ever held a secret was linked to every
    other one (``related`` of Alice's fact listed Bob's). The marker names nothing now, on both
    engines; the fact's real names are still its entities."""
    import json

    from hermes_store.tools import handle_tool_call

    def call(args):
        return json.loads(handle_tool_call("fact_store", args, home=home))

    call({"action": "add", "content": "Alice's deploy key is ghp_abcdefghijklmnopqrstuvwxyz0123456789"})
    call({"action": "add", "content": "Bob set OPENAI_API_KEY=sk-proj-AAAAbbbbCCCCddddEEEEffffGGGGhhhh1234"})
    listed = call({"action": "list"})["facts"]
    assert all("[REDACTED:" in f["content"] for f in listed), listed
    entities = {e for f in listed for e in f["entities"]}
    assert {"Alice", "Bob"} <= entities and not any("REDACTED" in e.upper() for e in entities), entities
    related = call({"action": "related", "entity": "Alice"})["results"]
    assert [f["content"][:5] for f in related] == ["Alice"], related
