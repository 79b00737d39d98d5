"""CJK ranking parity (issue 21): a CJK query ranks the same sessions in the same order on
SQLite (FTS5 over the bigram projection, bm25) and PostgreSQL (tsvector, bm25 in
:mod:`hermes_store.sessions.bm25`), over several sessions that mention the word with
different frequencies and lengths, beside distractors that share only one of its characters.
"""

from __future__ import annotations

import pytest
from sess_helpers import both_engines

from hermes_store.sessions import SessionIndex
from hermes_store.sessions.search import search_messages

FILLER = "今天天气很好，我们讨论了很多别的事情，比如工作、学习和生活中的各种安排。"
SESSIONS = {
    # three mentions in a short message: the best match
    "g-three": "桂林山水甲天下，明天去桂林，再从桂林坐船去阳朔。",
    # two mentions, short
    "g-two": "桂林米粉很好吃，桂林的米粉最地道。",
    # one mention in a very short message
    "g-one-short": "我想去桂林。",
    # one mention buried in a long message
    "g-one-long": FILLER * 6 + "顺便说一句，桂林也不错。" + FILLER * 6,
    # distractors: one of the two characters, or both apart / reversed
    "d-osmanthus": "桂花很香，桂花糕也好吃，桂花酒更香。",
    "d-forestry": "林业局今天开会，讨论林业和树林的保护。",
    "d-reversed": "林桂是一个人的名字，不是地名。",
    "d-apart": "桂树长在树林里。",
}
QUERIES = ("桂林", "桂林 米粉", '"桂林山水"')


def _fill(db) -> None:
    index = SessionIndex(db)
    for n, (sid, text) in enumerate(sorted(SESSIONS.items())):
        index.create_session(sid, source="cli", started_at=1000.0 + n)
        index.append_message(sid, "user", text, timestamp=1000.0 + n)


def _ranking(db, query: str) -> list[str]:
    return [hit["session_id"] for hit in search_messages(db, query, limit=10).results]


@pytest.fixture
def both(home, pg_url):
    with both_engines(home, pg_url, _fill) as pair:
        yield pair


@pytest.mark.parametrize("query", QUERIES)
def test_a_cjk_query_ranks_the_same_sessions_first_on_both_engines(both, query):
    sqlite, pg = both
    on_sqlite, on_pg = _ranking(sqlite, query), _ranking(pg, query)
    assert on_sqlite == on_pg
    assert not [sid for sid in on_sqlite if sid.startswith("d-")]  # no distractor matches


def test_the_cjk_ranking_follows_frequency_and_length(both):
    """More mentions rank higher, and one mention in a short message above one in a long one,
    on both engines (PostgreSQL used to score presence only: the shortest message came first)."""
    for db in both:
        assert _ranking(db, "桂林") == ["g-three", "g-two", "g-one-short", "g-one-long"]
        assert _ranking(db, "桂林 米粉")[0] == "g-two"  # the one message with both words first
        assert _ranking(db, '"桂林山水"')[0] == "g-three"
