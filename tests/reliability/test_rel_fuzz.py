"""Hypothesis fuzz of every query entry point: no exception, no engine syntax error surfaced.

Targets: ``sessions search`` (the library, :func:`search_messages`), :func:`recall`,
``fact_store search`` and the ``session_search`` tool. Queries mix FTS5 syntax
(quotes, ``*``, ``^``, ``:``, ``NEAR``, ``AND/OR/NOT``, parentheses, column
filters), punctuation Hermes choked on (``'`` ``/`` ``@`` ``#`` ``%`` ``C:\\``),
CJK, emoji, control characters, NUL and lone surrogates.

Case counts: the default run does 2,000 + 300 + 300 + 300; under ``-m slow``
7,000 + 1,000 + 1,000 + 1,000 = 10,000 (``HERMES_REL_FUZZ_SCALE`` multiplies both).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rel_helpers import knob

from hermes_store.builtin.store import MemoryStore
from hermes_store.facts.store import FactStore
from hermes_store.home import Home
from hermes_store.recall import recall
from hermes_store.sessions import SessionIndex
from hermes_store.sessions.search import search_messages
from hermes_store.sessions.session_search_schema import NO_MATCH_MESSAGE
from hermes_store.tooling import ToolContext
from hermes_store.tools import call_tool

ENGINE_TEXT = ("fts5", "no such column", "unterminated", "unknown special query",
               "search engine rejected", "sqlite", "malformed match", "syntax error")
TOKENS = [
    '"', "'", "*", "^", ":", "(", ")", "-", "+", "NEAR", "NEAR(", "AND", "OR", "NOT", "and", "or",
    "content:", "title:", "role:", "{", "}", "[", "]", "/", "\\", "@", "#", "%", ",", "?", "!",
    "C:\\Users", "TODO: fix", "chat-send", "wrong-book", "scripts/deploy.sh", "don't", "it's",
    "修改youer服务端", "广西 OR 桂林", "部署", "😀", "\x00", "\ud800", "\udfff", "\t", "\n", "\x1b[31m",
    "deploy", "postgres", "kafka", "rollback", "AND NOT", "OR OR", "(((", ")))", '""', "''", "* *",
    "NEAR/3", "^deploy", "deploy*", "-deploy", "a" * 300, "0", "-1", "1e9", "NULL", "'; DROP TABLE x; --",
]
WORDS = st.one_of(st.sampled_from(TOKENS), st.text(max_size=12),
                  st.text(st.characters(codec="utf-8"), max_size=8))
QUERIES = st.lists(WORDS, max_size=8).map(" ".join)


def _examples(default: int, slow: int, is_slow: bool) -> int:
    return (slow if is_slow else default) * knob("FUZZ_SCALE", 1)


def _no_engine_text(*texts) -> None:
    """No engine error leaks into a reply (Hermes' own no-match text names FTS5: allowed)."""
    for text in texts:
        if text:
            lowered = str(text).replace(NO_MATCH_MESSAGE, "").lower()
            assert not any(marker in lowered for marker in ENGINE_TEXT), text


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A home with sessions (tricky text included), facts and memory entries."""
    home = Home(tmp_path_factory.mktemp("fuzz") / "home").ensure()
    store = MemoryStore(home, memory_char_limit=10**6, user_char_limit=10**6)
    for text in ("Deploy with scripts/deploy.sh on Fridays", "User prefers postgres over mysql",
                 "The chat-send endpoint is flaky", "修改youer服务端 before release"):
        store.add("memory", text)
    store.close()
    with FactStore(home) as facts:
        for text in ("Kafka runs on node-3", "Postgres backups happen at 02:00",
                     "The deploy script lives in scripts/deploy.sh", "广西 office uses 桂林 servers"):
            facts.add_fact(text, "project")
    with SessionIndex(home) as index:
        for n in range(20):
            sid = index.create_session(f"20260101_0000{n:02d}_abcdef", source="cli", title=f"session {n}")
            for m, text in enumerate(["how do I deploy to staging?", "run scripts/deploy.sh --env=staging",
                                      "C:\\Users\\ana\\notes.txt mentions TODO: fix", "wrong-book OR chat-send",
                                      f"kafka lag {n} on 修改youer服务端", "rollback if it's broken 😀"]):
                index.append_message(sid, "user" if m % 2 == 0 else "assistant", text)
    yield home


def _fuzz(examples: int):
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _search_library(corpus, examples: int) -> int:
    db = corpus.open_db()
    count = 0

    @_fuzz(examples)
    @given(query=QUERIES, sort=st.sampled_from(["relevance", "newest", "oldest"]))
    def check(query, sort):
        nonlocal count
        count += 1
        result = search_messages(db, query, limit=5, sort=sort)
        _no_engine_text(result.note)
        json.dumps(result.to_json())

    try:
        check()
    finally:
        db.close()
    return count


def _recall(corpus, examples: int) -> int:
    db = corpus.open_db()
    count = 0

    @_fuzz(examples)
    @given(query=QUERIES)
    def check(query):
        nonlocal count
        count += 1
        result = recall(query, home=corpus, db=db, limit=5, budget_tokens=200)
        assert not result.errors, result.errors
        _no_engine_text(*result.notes.values())

    try:
        check()
    finally:
        db.close()
    return count


def _tool(corpus, examples: int, tool: str, build) -> int:
    ctx = ToolContext(corpus)
    count = 0

    @_fuzz(examples)
    @given(query=QUERIES)
    def check(query):
        nonlocal count
        count += 1
        reply = call_tool(tool, build(query), ctx)
        if not query.strip():
            return
        assert reply.get("success") is True, reply
        _no_engine_text(reply.get("query_note"), reply.get("note"), reply.get("message"))

    try:
        check()
    finally:
        ctx.close()
    return count


def _all(corpus, is_slow: bool) -> dict[str, int]:
    return {
        "sessions search": _search_library(corpus, _examples(2000, 7000, is_slow)),
        "recall": _recall(corpus, _examples(300, 1000, is_slow)),
        "fact_store search": _tool(corpus, _examples(300, 1000, is_slow), "fact_store",
                                   lambda q: {"action": "search", "query": q}),
        "session_search tool": _tool(corpus, _examples(300, 1000, is_slow), "session_search",
                                     lambda q: {"query": q}),
    }


def test_query_fuzz_quick(corpus):
    counts = _all(corpus, False)
    assert all(n > 0 for n in counts.values())


@pytest.mark.slow
def test_query_fuzz_10000(corpus):
    counts = _all(corpus, True)
    total = sum(counts.values())
    assert total >= 10_000 * knob("FUZZ_SCALE", 1) * 0.95, counts
    print(f"\nRELIABILITY query fuzz: {total:,} cases, 0 exceptions, 0 engine errors surfaced {counts}")
