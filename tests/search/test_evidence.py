"""session_search returns the evidence: each session's further best-matching messages, and
questions that hold "a quoted title" or (an aside) read as questions, not as search syntax."""

from __future__ import annotations

import json

from hermes_store.home import Home
from hermes_store.query import AllOf, compile_query
from hermes_store.tools import handle_tool_call
from tests.search.conftest import DAY, T0, add_session


def call(home: Home, args: dict) -> dict:
    return json.loads(handle_tool_call("session_search", args, home=home))


def filler(n: int, start: int = 0) -> list[tuple[str, str]]:
    return [("user" if i % 2 == 0 else "assistant", f"small talk number {start + i}") for i in range(n)]


def test_compact_results_show_the_sessions_other_matches(home, db):
    add_session(db, "top", [("user", "the zebrafish tank pump broke, zebrafish moved")], start=T0 + 2 * DAY)
    spread = ([("user", "my zebrafish colony is at the lab")] + filler(12)
              + [("user", "zebrafish feeding schedule changed")] + filler(12, 12)
              + [("user", "the zebrafish lab moved to building 4")])
    ids = add_session(db, "spread", spread, start=T0 + DAY)
    out = call(home, {"query": "zebrafish", "limit": 3, "sort": "newest"})  # "top" first: full
    compact = next(r for r in out["results"] if r["session_id"] == "spread")
    assert compact["detail"] == "compact"
    shown = {m["id"] for m in compact["messages"]}
    assert {ids[0], ids[13], ids[26]} <= shown
    assert all(m.get("anchor") for m in compact["messages"])


def test_full_result_adds_matches_outside_its_window(home, db):
    spread = ([("user", "we chose pgbouncer for pooling")] + filler(20)
              + [("user", "pgbouncer config reloaded after the change")])
    ids = add_session(db, "only", spread, start=T0)
    out = call(home, {"query": "pgbouncer", "detail": "full"})
    (result,) = out["results"]
    shown = [m["id"] for m in result["messages"]]
    assert ids[0] in shown and ids[21] in shown
    assert shown == sorted(shown)  # conversation order kept
    assert result["messages_before"] <= 5 and result["messages_after"] <= 5  # Hermes' slice counts


def test_question_quoting_a_title_finds_it(home, db):
    add_session(db, "paper", [("user", "my submission 'To Adapt or Not to Adapt? Real-Time Adaptation' "
                                       "reports the HAMT agent improving framerate by 8 percent")], start=T0)
    add_session(db, "other", [("user", "what is the weather like today")], start=T0 + DAY)
    question = ("Can you remind me what was the average improvement in framerate when using the "
                "Hardware-Aware Modular Training (HAMT) agent in the \"To Adapt or Not to Adapt? "
                "Real-Time Adaptation for Semantic Segmentation\" submission?")
    out = call(home, {"query": question})
    assert out["results"] and out["results"][0]["session_id"] == "paper"
    assert "read as a question" in out.get("query_note", "")


def test_question_with_parentheses_finds_it(home, db):
    add_session(db, "moma", [("user", "I visited the Museum of Modern Art on Friday")], start=T0)
    add_session(db, "met", [("user", "the Ancient Civilizations exhibit at the Metropolitan was great")],
                start=T0 + DAY)
    out = call(home, {"query": "How many days passed between my visit to the Museum of Modern Art "
                               "(MoMA) and the 'Ancient Civilizations' exhibit?"})
    assert {r["session_id"] for r in out["results"]} == {"moma", "met"}


def test_search_syntax_is_still_syntax():
    assert compile_query('"exact phrase" deploy').relaxed_match is None  # short: stays strict
    assert compile_query("deploy OR rollback of the service today please").note is None
    prose = compile_query('what did we decide about "blue green" deploys for the api?')
    assert prose.relaxed_match is not None and isinstance(prose.strict_match, AllOf)
    assert prose.strict_match.parts[0] == compile_query('"blue green"').strict_match
