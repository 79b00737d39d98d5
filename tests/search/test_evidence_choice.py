"""Which matching messages of a session a discover result shows (:mod:`hermes_store.sessions.evidence`):
further anchors the full result's slice does not already show, and the user's own turns
first when the question is about the user."""

from __future__ import annotations

import json

from hermes_store.home import Home
from hermes_store.sessions.evidence import about_the_user, further_anchors, with_nearest
from hermes_store.sessions.storage import Hit
from hermes_store.tools import handle_tool_call
from tests.search.conftest import DAY, T0, add_session


def call(home: Home, args: dict) -> dict:
    return json.loads(handle_tool_call("session_search", args, home=home))


def filler(n: int, start: int = 0) -> list[tuple[str, str]]:
    return [("user" if i % 2 == 0 else "assistant", f"small talk number {start + i}") for i in range(n)]


def test_full_result_further_anchors_are_all_outside_its_slice(home, db):
    # the two best matches sit together: the second is inside the anchor's slice, so it must
    # not take one of the three further-anchor places
    messages = ([("user", "the heron heron heron heron nest"), ("assistant", "ok"),
                 ("user", "the heron heron heron nest again")] + filler(17)
                + [("user", "a heron flew by")] + filler(9, 20)
                + [("user", "heron photos are ready")] + filler(9, 40)
                + [("user", "one more heron here")] + filler(8, 60))
    ids = add_session(db, "birds", messages, start=T0)
    out = call(home, {"query": "heron"})
    (result,) = out["results"]
    assert result["detail"] == "full"
    further = {m["id"] for m in result["messages"] if m.get("anchor")}
    assert {ids[20], ids[30], ids[40]} <= further
    assert result["messages_before"] <= 5 and result["messages_after"] <= 5


def test_question_about_the_user_shows_the_users_own_turn(home, db):
    # long assistant replies all about kayaks, next to each other (context smoothing lifts
    # them); the user's own statement is one short turn far from them
    advice = ("for a kayak trip pack a paddle, a spray skirt, dry bags, water, snacks, a map "
              "and a small kayak repair kit")
    messages = [("user", "help me pick gear please"), ("assistant", advice), ("user", "go on"),
                ("assistant", advice + " again"), ("user", "and"), ("assistant", advice + " more"),
                ("user", "more"), ("assistant", advice + " still")] + filler(14)
    messages += [("user", "I finally bought a sea kayak, a bright red one")] + filler(10, 14)
    ids = add_session(db, "gear", messages, start=T0)
    add_session(db, "shop", [("user", "kayak colour chart: every kayak colour we sell")], start=T0 + DAY)
    out = call(home, {"query": "what colour is the kayak I have now", "limit": 2})
    assert [r["session_id"] for r in out["results"]] == ["shop", "gear"]
    gear = out["results"][1]
    assert gear["detail"] == "compact"  # the anchor and three further anchors, no slice
    assert ids[22] in {m["id"] for m in gear["messages"]}


def test_first_person_questions_are_about_the_user():
    assert about_the_user("What did I say about my trip?")
    assert about_the_user("where's the thing i'm looking for")
    assert not about_the_user("What did Caroline say about the trip?")


def _hit(mid: int, sid: str = "s") -> Hit:
    return Hit(mid, sid, mid, "user", None, "cli", None, 1.0, None)


def test_messages_nearest_by_meaning_come_after_the_three_further_anchors():
    group = [_hit(1), _hit(2), _hit(3), _hit(4), _hit(5)]
    nearest = [_hit(3), _hit(9), _hit(8, "other"), _hit(7)]
    ordered, added = with_nearest(group, nearest, 1)
    assert [h.message_id for h in ordered] == [1, 2, 3, 4, 9, 5] and added == 1  # 3 is there already
    ordered, added = with_nearest(group, nearest, 2)
    assert [h.message_id for h in ordered] == [1, 2, 3, 4, 9, 7, 5] and added == 2  # never another session's
    assert with_nearest(group, nearest, 0) == (group, 0)
    assert with_nearest([], nearest, 2) == ([], 0)
    assert further_anchors([2, 3, 4, 9, 5], (2, 3), 3 + 1) == (4, 9, 5)
    # a match the group holds beyond its three further anchors is not shown: it moves up
    ordered, added = with_nearest(group + [_hit(6)], [_hit(6), _hit(2)], 2)
    assert [h.message_id for h in ordered] == [1, 2, 3, 4, 6, 5] and added == 1
