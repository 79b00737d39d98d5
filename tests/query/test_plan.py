"""QueryPlan: a query is compiled once into engine-neutral matches that carry their terms."""

from __future__ import annotations

import pytest

import hermes_store.query as query_mod
from hermes_store.excerpts import highlight_excerpt
from hermes_store.query import (
    AllOf,
    AnyOf,
    QueryPlan,
    Term,
    Without,
    compile_query,
    run_plan,
    to_fts5,
)
from hermes_store.sessions.search import search_messages
from tests.search.conftest import add_session


def test_plain_words_compile_to_terms_and_fts5():
    plan = compile_query("deploy scripts/deploy.sh")
    assert plan.strict_match == AllOf((Term(("deploy",)), Term(("scripts", "deploy", "sh"))))
    assert plan.strict == '"deploy" AND "scripts deploy sh"'
    assert plan.relaxed_match == AnyOf(plan.strict_match.parts)
    assert plan.terms == ["deploy", "scripts", "deploy", "sh"]


def test_operators_compile_to_nodes():
    plan = compile_query('(quick OR "brown fox"*) NOT lazy')
    assert plan.strict_match == Without(
        AnyOf((Term(("quick",)), Term(("brown", "fox"), prefix=True))), Term(("lazy",)))
    assert to_fts5(plan.strict_match) == '(("quick" OR "brown fox"*) NOT "lazy")'
    assert [t.tokens for t in plan.strict_match.terms()] == [("quick",), ("brown", "fox"), ("lazy",)]
    assert plan.terms == ["quick", "brown", "fox", "lazy"]  # operator words are not terms


def test_cjk_terms_are_marked():
    match = compile_query("数据库").strict_match
    assert match == Term(("数据", "据库"), cjk=True)
    mixed = compile_query("用Python写").strict_match
    assert mixed == AllOf((Term(("用",), cjk=True), Term(("Python",)), Term(("写",), cjk=True)))


def test_a_plan_is_compiled_once_and_reused():
    plan = compile_query("fox")
    assert compile_query(plan) is plan
    assert highlight_excerpt("The Fox ran", plan) == "The >>>Fox<<< ran"


def test_run_plan_hands_matches_to_fetch():
    seen = []

    def fetch(match, limit):
        seen.append(match)
        return [(1,)] if isinstance(match, AnyOf) else []

    outcome = run_plan(fetch, compile_query("what about the cat and dog"), 5)
    assert outcome.mode == "relaxed" and outcome.rows == [(1,)]
    assert seen == [AllOf((Term(("cat",)), Term(("dog",)))), AnyOf((Term(("cat",)), Term(("dog",))))]


def test_rejected_match_is_retried_literally():
    def fetch(match, limit):
        if isinstance(match, Without):
            raise query_mod.QueryRejected("engine says no")
        return [(7,)]

    outcome = run_plan(fetch, compile_query("fox NOT dog"), 5)
    assert outcome.mode == "literal" and outcome.rows == [(7,)] and "engine says no" in outcome.note


@pytest.mark.parametrize("entry", ["search_messages", "discover"])
def test_session_search_compiles_the_query_once(home, monkeypatch, entry):
    """Title matching, ranking and snippets read one plan (the text is lexed once)."""
    from hermes_store.sessions import SessionIndex
    from hermes_store.sessions.search import search_messages
    from hermes_store.sessions.session_search import handle_session_search
    from hermes_store.tooling import ToolContext

    with SessionIndex(home) as index:
        sid = index.create_session(title="fox notes")
        index.append_message(sid, "user", "the quick brown fox")
        index.append_message(sid, "assistant", "a lazy dog")
        index.end_session(sid)
    calls = []
    real = query_mod._lex
    monkeypatch.setattr(query_mod, "_lex", lambda text: calls.append(text) or real(text))
    if entry == "search_messages":
        db = home.open_db()
        try:
            result = search_messages(db, "quick fox", limit=5)
        finally:
            db.close()
        assert result.results and ">>>" in result.results[0]["snippet"]
    else:
        out = handle_session_search({"query": "quick fox"}, ToolContext(home=home))
        assert out["count"] == 1
    assert calls == ["quick fox"]
    assert isinstance(compile_query("quick fox"), QueryPlan)


def test_one_plan_serves_several_indexes(home):
    """A plan compiled once can be handed to session search and to run_match-based indexes."""
    from hermes_store.sessions import SessionIndex
    from hermes_store.sessions.search import search_messages

    with SessionIndex(home) as index:
        sid = index.create_session()
        index.append_message(sid, "user", "restic backup to s3 failed")
    plan = compile_query("restic backup")
    db = home.open_db()
    try:
        by_plan = search_messages(db, plan, limit=3).to_json()
        by_text = search_messages(db, "restic backup", limit=3).to_json()
    finally:
        db.close()
    assert by_plan == by_text and by_plan["query"] == "restic backup" and by_plan["count"] == 1
    outcome = query_mod.run_match(lambda expr, n: [(expr,)], plan, 3)
    assert outcome.plan is plan and outcome.rows == [(plan.strict,), (plan.relaxed,)]


@pytest.mark.parametrize("question", ["What was grandma's gift to Caroline?",
                                      "What was grandma\u2019s gift to Caroline?"])
def test_a_possessive_matches_the_bare_name(question):
    """The index splits "grandma's" into grandma + s: the question's possessive is read as the
    name alone, so "a gift from my grandma" matches (the phrase "grandma s" would not)."""
    plan = compile_query(question)
    assert plan.relaxed_match is not None
    assert to_fts5(plan.relaxed_match) == '"grandma" OR "gift" OR "Caroline"'


def test_a_possessive_finds_the_message_without_one(home):
    db = home.open_db()
    ids = add_session(db, "s", [("user", "This necklace is a gift from my grandma in Sweden."),
                                ("user", "The weather is fine today.")])
    found = search_messages(db, "Caroline's grandma's necklace", limit=5)
    db.close()
    assert [r["message_id"] for r in found.results] == [ids[0]]
