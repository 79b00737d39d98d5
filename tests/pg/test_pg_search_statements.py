"""How many statements a PostgreSQL search runs: not one more per hit, nothing read twice."""

from __future__ import annotations

import json

import pytest
from statement_spy import spy_statements

from hermes_store.pgdb import PgDatabase
from hermes_store.sessions.search import search_messages
from hermes_store.sessions.storage import open_session_storage

CALL_ONLY = 12  # messages that name the word only in their tool calls


def _call(path: str) -> str:
    return json.dumps([{"id": "c1", "type": "function",
                        "function": {"name": "Read", "arguments": json.dumps({"file_path": path})}}])


@pytest.fixture(scope="module")
def db(pg_server):
    """One session: messages naming ``zebrafrob`` in their tool calls only, others in their
    text, and messages for a question no message answers with every word."""
    db = PgDatabase(pg_server.create_database("search_statements"))
    storage = open_session_storage(db)
    storage.add_session("s1", origin_format="live", source="cli", title=None, model=None, workspace=None,
                        started_at=1.0, parent_session_id=None, meta={})
    for n in range(CALL_ONLY):
        storage.append_message("s1", role="assistant", content=f"reading file number {n}", tool_name=None,
                               tool_calls=_call(f"/srv/zebrafrob/part{n}.txt"), tool_call_id=None,
                               timestamp=10.0 + n, cjk=None)
    for n in range(5):
        storage.append_message("s1", role="user", content=f"the quokka ledger {n} is late", tool_name=None,
                               tool_calls=None, tool_call_id=None, timestamp=100.0 + n, cjk=None)
        storage.append_message("s1", role="user", content=f"the wombat invoice {n} arrived", tool_name=None,
                               tool_calls=None, tool_call_id=None, timestamp=200.0 + n, cjk=None)
    db.execute("ANALYZE messages")
    yield db
    db.close()
    pg_server.drop_database("search_statements")


def _search(db, monkeypatch, text: str, limit: int):
    search_messages(db, text, limit=limit)  # the corpus statistics, kept for a minute, read first
    statements = spy_statements(db, monkeypatch)
    result = search_messages(db, text, limit=limit)
    monkeypatch.undo()
    return result, statements


def test_hits_found_by_their_tool_calls_cost_no_statement_each(db, monkeypatch):
    few, few_statements = _search(db, monkeypatch, "zebrafrob", 3)
    many, many_statements = _search(db, monkeypatch, "zebrafrob", CALL_ONLY)
    assert len(few.results) == 3 and len(many.results) == CALL_ONLY
    assert all(r["snippet"].startswith("[tool call]") and ">>>zebrafrob<<<" in r["snippet"]
               for r in many.results)
    assert len(many_statements) == len(few_statements)
    assert sum("coalesce(calls, '')" in s for s in many_statements) == 1  # one batch for all


def test_messages_without_tool_calls_are_read_once(db, monkeypatch):
    result, statements = _search(db, monkeypatch, "quokka", 10)
    assert len(result.results) == 5 and all(">>>quokka<<<" in r["snippet"] for r in result.results)
    assert not any("coalesce(calls, '')" in s for s in statements)  # no tool-call excerpt asked for
    assert not any(s.startswith("SELECT id, content FROM messages") for s in statements)  # contents handed on


def test_a_question_relaxes_without_compiling_again(db, monkeypatch):
    result, statements = _search(db, monkeypatch, "when did the quokka invoice arrive?", 10)
    assert result.mode == "relaxed" and len(result.results) == 10
    assert sum("::text AS q0" in s for s in statements) == 1  # strict and relaxed forms, one round trip
    assert not any("min(id) AS lo, max(id) AS hi FROM messages" in s for s in statements)
    either = search_messages(db, "quokka OR invoice", limit=10).results
    assert {r["message_id"] for r in result.results} == {r["message_id"] for r in either}


def test_nothing_a_search_kept_outlives_it(db):
    """The same storage object sees a message written after its last search, and reads
    contents afresh outside a search."""
    storage = open_session_storage(db)
    before = search_messages(storage, "when did the wombat ledger arrive?", limit=50)
    new_id = storage.append_message("s1", role="user", content="a wombat ledger arrived today", tool_name=None,
                                    tool_calls=None, tool_call_id=None, timestamp=999.0, cjk=None)
    after = search_messages(storage, "when did the wombat ledger arrive?", limit=50)
    assert new_id not in {r["message_id"] for r in before.results}
    assert after.results[0]["message_id"] == new_id  # the one message holding every word
    db.execute("UPDATE messages SET content = 'a wombat ledger came today' WHERE id = %s", (new_id,))
    assert storage.message_contents([new_id]) == {new_id: "a wombat ledger came today"}
    db.execute("DELETE FROM messages WHERE id = %s", (new_id,))
