"""A question that names a calendar date or month (with its year) ranks the sessions of that
date first (:mod:`hermes_store.sessions.dated`), on both engines."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from hermes_store.sessions.dated import named_window
from hermes_store.tools import handle_tool_call
from tests.search.conftest import add_session


def _utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(("question", "first", "end"), [
    ("What did Nate do for Joanna on 25 May, 2022?", "2022-05-24", "2022-05-27"),
    ("what happened on May 25th 2022", "2022-05-24", "2022-05-27"),
    ("the deploy of 2022-05-25 broke", "2022-05-24", "2022-05-27"),
    ("What setback did Melanie face in October 2023?", "2023-10-01", "2023-11-01"),
    ("plans for Dec 2022", "2022-12-01", "2023-01-01"),
    ("Sept. 3rd, 2021 and October 2023", "2021-09-02", "2021-09-05"),
])
def test_a_named_date_or_month_is_read_with_its_year(question, first, end):
    assert named_window(question) == (_utc(first), _utc(end))


@pytest.mark.parametrize("question", [
    "on 25 May", "31 February 2022", "May the 4th be with you", "31 February 2022, two weeks ago",
    "version 2022-13-45", "",
])
def test_no_window_without_a_whole_date(question):
    assert named_window(question) is None


def test_the_session_of_the_named_day_comes_first(home, db):
    # the same words in three sessions; the strongest match is not on the day named
    add_session(db, "march", [("user", "the pottery class was great, pottery pottery")],
                start=_utc("2022-03-02T10:00:00"))
    add_session(db, "may", [("user", "after work I went to a class about pottery, then we had a long "
                                       "dinner with friends at the new place downtown")],
                start=_utc("2022-05-25T18:00:00"))
    add_session(db, "june", [("user", "pottery again, the pottery class")], start=_utc("2022-06-30T09:00:00"))
    ask = {"query": "pottery class", "limit": 3}
    plain = json.loads(handle_tool_call("session_search", ask, home=home))
    assert plain["results"][0]["session_id"] != "may"
    dated = json.loads(handle_tool_call(
        "session_search", {**ask, "query": "what pottery class on 25 May, 2022"}, home=home))
    order = [r["session_id"] for r in dated["results"]]
    assert order[0] == "may" and order[1:] == [s for s in (r["session_id"] for r in plain["results"]) if s != "may"]
    by_time = json.loads(handle_tool_call(
        "session_search", {**ask, "query": "pottery class on 25 May, 2022", "sort": "newest"}, home=home))
    assert [r["session_id"] for r in by_time["results"]][0] == "june"  # a time sort stays a time sort


def test_a_message_search_puts_the_named_days_messages_first(home, db):
    """``hermes-store sessions search`` and ``recall`` read :func:`search_messages`: its
    messages of the named day come first too, the rest in relevance order after them."""
    from hermes_store.sessions.search import search_messages

    add_session(db, "march", [("user", "pottery pottery class, pottery all day")],
                start=_utc("2022-03-02T10:00:00"))
    add_session(db, "may", [("user", "after work I went to a class about pottery, then we had a long "
                                     "dinner with friends at the new place downtown")],
                start=_utc("2022-05-25T18:00:00"))
    plain = [r["session_id"] for r in search_messages(db, "pottery class", limit=5).results]
    dated = [r["session_id"] for r in search_messages(db, "pottery class on 25 May, 2022", limit=5).results]
    assert plain[0] == "march" and dated == ["may", "march"]
    assert [r["session_id"] for r in search_messages(db, "pottery class on 25 May, 2022", limit=1).results] == ["may"]


@pytest.mark.parametrize(("question", "first", "end"), [
    ("What gardening-related activity did I do two weeks ago?", "2023-05-13", "2023-05-19"),
    ("I mentioned cooking something a couple of days ago", "2023-05-27", "2023-05-29"),
    ("what did we decide yesterday", "2023-05-28", "2023-05-30"),
    ("the plan from last week", "2023-05-16", "2023-05-30"),
    ("the bug I fixed 3 days ago", "2023-05-26", "2023-05-28"),
    # from that far back (and an eighth more) until now, with a day's slack after it
    ("How many dinner parties have I attended in the past month?", "2023-04-27", "2023-05-31"),
    ("what did I buy over the past week", "2023-05-22", "2023-05-31"),
    ("How many pieces of jewelry did I acquire in the last two months?", "2023-03-24", "2023-05-31"),
    ("How many MCU films did I watch in the last 3 months?", "2023-02-18", "2023-05-31"),
    ("the cuisines I tried in the past few months", "2023-02-18", "2023-05-31"),
    ("the past couple of days", "2023-05-27", "2023-05-31"),
])
def test_a_relative_date_is_read_from_the_clock(monkeypatch, question, first, end):
    from hermes_store.sessions import dated

    monkeypatch.setattr(dated, "clock", lambda: _utc("2023-05-30T00:00:00"))
    assert named_window(question) == (_utc(first), _utc(end))
    assert named_window("How many months ago did I go?") is None  # no count: nothing to read
    assert named_window("the last time we met, my past experience") is None
