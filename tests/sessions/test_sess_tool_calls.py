"""Tool calls are searchable text; agent boilerplate is kept but not indexed (both engines)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from engine_helpers import execute, scalar

from hermes_store.cli import cli as main
from hermes_store.home import Home
from hermes_store.sessions.calltext import call_fields, call_text, strip_boilerplate, tool_names
from hermes_store.sessions.live import SessionIndex
from hermes_store.sessions.maintenance import backfill_calls
from hermes_store.sessions.search import search_messages

LINES = [
    {"type": "user", "sessionId": "cc-tools", "uuid": "u1", "timestamp": "2026-11-01T10:00:00Z",
     "cwd": "/srv", "message": {"role": "user", "content":
         "<system-reminder>injected zebraword notes</system-reminder>please check the pooler config"}},
    {"type": "assistant", "sessionId": "cc-tools", "uuid": "u2", "parentUuid": "u1",
     "timestamp": "2026-11-01T10:00:05Z", "message": {"role": "assistant", "content": [
         {"type": "text", "text": "Reading it."},
         {"type": "tool_use", "id": "t1", "name": "Read",
          "input": {"file_path": "/etc/pgbouncer/pgbouncer.ini"}},
         {"type": "tool_use", "id": "t2", "name": "Bash",
          "input": {"command": "tail -n 20 /var/log/syslog", "description": "last lines"}},
         {"type": "tool_use", "id": "t3", "name": "WebFetch",
          "input": {"url": "https://example.org/docs/pooling", "prompt": "summarise"}}]}},
    {"type": "user", "sessionId": "cc-tools", "uuid": "u3", "parentUuid": "u2",
     "timestamp": "2026-11-01T10:00:06Z", "message": {"role": "user", "content": [
         {"type": "tool_result", "tool_use_id": "t2", "content": "kernel: eth0 up"}]}},
]


def _index(home: Home, tmp_path) -> None:
    path = tmp_path / "cc.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    result = CliRunner().invoke(main, ["sessions", "index", str(path)])
    assert result.exit_code == 0, result.output


def _found(home: Home, query: str, **kw) -> list[tuple[str, int]]:
    db = home.open_db()
    try:
        return [(r["session_id"], r["seq"]) for r in search_messages(db, query, **kw).results]
    finally:
        db.close()


def test_calls_are_searchable_by_path_parts_command_and_url(engine, home, tmp_path):
    _index(home, tmp_path)
    assert _found(home, "pgbouncer.ini") == [("cc-tools", 1)]
    assert _found(home, "pgbouncer") == [("cc-tools", 1)]
    assert _found(home, '"tail -n 20"') == [("cc-tools", 1)]
    assert _found(home, "example.org") == [("cc-tools", 1)]
    assert _found(home, "WebFetch") == [("cc-tools", 1)]


def test_snippet_shows_the_matching_call(engine, home, tmp_path):
    _index(home, tmp_path)
    result = CliRunner().invoke(main, ["sessions", "search", "pgbouncer.ini", "--json"])
    assert result.exit_code == 0, result.output
    snippet = json.loads(result.output)["results"][0]["snippet"]
    assert "[tool call]" in snippet and "pgbouncer" in snippet


def test_search_per_tool(engine, home, tmp_path):
    _index(home, tmp_path)
    assert _found(home, "syslog", tools=["Bash"]) == [("cc-tools", 1)]
    assert _found(home, "syslog", tools=["bash"]) == [("cc-tools", 1)]  # names without case
    assert _found(home, "syslog", tools=["Edit"]) == []
    # a tool's result is that tool's too
    assert _found(home, "eth0", tools=["Bash"]) == [("cc-tools", 2)]
    result = CliRunner().invoke(main, ["sessions", "search", "eth0", "--tool", "Read", "--json"])
    assert json.loads(result.output)["results"] == []


def test_boilerplate_is_stored_but_not_indexed(engine, home, tmp_path):
    _index(home, tmp_path)
    assert _found(home, "zebraword") == []
    assert _found(home, "pooler") == [("cc-tools", 0)]
    with SessionIndex(home) as index:
        assert "<system-reminder>" in index.get_messages("cc-tools")[0]["content"]


def test_show_prints_calls_with_arguments(engine, home, tmp_path):
    _index(home, tmp_path)
    result = CliRunner().invoke(main, ["sessions", "show", "cc-tools"])
    assert result.exit_code == 0, result.output
    assert '[tool call] Read({"file_path": "/etc/pgbouncer/pgbouncer.ini"})' in result.output
    assert "tail -n 20 /var/log/syslog" in result.output


def test_live_append_indexes_calls(engine, home):
    with SessionIndex(home) as index:
        sid = index.create_session(source="cli")
        index.append_message(sid, "assistant", "", tool_calls=[
            {"id": "c1", "type": "function",
             "function": {"name": "terminal", "arguments": json.dumps({"command": "systemctl restart nginx"})}}])
    assert _found(home, "nginx") == [(sid, 0)]
    assert _found(home, "nginx", tools=["terminal"]) == [(sid, 0)]


def test_backfill_fills_rows_stored_before(engine, home, tmp_path):
    _index(home, tmp_path)
    db = home.open_db()
    try:
        execute(db, "UPDATE messages SET calls = NULL, tools = NULL, search_text = NULL")
        execute(db, "INSERT INTO store_meta(key, value) VALUES ('sessions_calls_backfill', 'calls')")
        db.close()
        assert _found(home, "pgbouncer") == []
        assert _found(home, "zebraword") == [("cc-tools", 0)]
        db = home.open_db()
        assert backfill_calls(db) == 3
        assert scalar(db, "SELECT count(*) FROM store_meta WHERE key = 'sessions_calls_backfill'") == 0
    finally:
        db.close()
    assert _found(home, "pgbouncer") == [("cc-tools", 1)]
    assert _found(home, "zebraword") == []


def test_calltext_helpers():
    calls = json.dumps([{"id": "1", "type": "function",
                         "function": {"name": "Grep", "arguments": '{"pattern": "max_client_conn", '
                                                                   '"path": "/etc", "-n": true}'}}])
    assert call_text(calls) == "Grep max_client_conn /etc"
    assert tool_names("Bash", calls) == "\nBash\nGrep\n"
    assert call_text("not json") is None
    assert strip_boilerplate("<user_query>\nfix the build\n</user_query>") == "fix the build"
    assert strip_boilerplate("<environment_context><cwd>/x</cwd></environment_context>") == ""
    assert strip_boilerplate("a < b and <div>") is None


def test_text_or_call_excerpt_decided_alike_for_and_or_not(engine, home, tmp_path):
    # "Reading it." holds neither word; the calls hold pgbouncer and syslog: the excerpt is the
    # call's unless the message's own text matches the whole query on its own
    _index(home, tmp_path)
    db = home.open_db()
    try:
        def snippet(query: str) -> str:
            results = search_messages(db, query).results
            return next(r["snippet"] for r in results if r["seq"] == 1)

        assert snippet("pgbouncer syslog").startswith("[tool call]")
        assert snippet("pgbouncer OR syslog").startswith("[tool call]")
        assert snippet("pgbouncer NOT zebraword").startswith("[tool call]")
        assert snippet("reading pgbouncer").startswith("[tool call]")  # text holds only one word
        assert not snippet("reading OR pgbouncer").startswith("[tool call]")  # text alone matches
    finally:
        db.close()


def test_sqlite_text_flags_answer_as_the_column_filtered_match(home, tmp_path):
    from hermes_store.query import compile_query, to_fts5
    from hermes_store.sessions.rank import ensure_text_phrases_function
    from hermes_store.sessions.storage_sqlite import _holds

    _index(home, tmp_path)
    db = home.open_db()
    try:
        from hermes_store.sessions.search import _storage

        storage = _storage(db)
        function = ensure_text_phrases_function(db)
        checked = 0
        for query in ("pgbouncer syslog", "pooler OR syslog", "check NOT syslog", "reading pgbouncer",
                      "(pooler OR pgbouncer) NOT zebraword", '"pooler config" OR tail', "kernel eth0"):
            plan = compile_query(query)
            for match in filter(None, (plan.strict_match, plan.relaxed_match)):
                rows = db.conn.execute(f"SELECT rowid, {function}(messages_fts) FROM messages_fts "
                                       "WHERE messages_fts MATCH ?", (to_fts5(match),)).fetchall()
                for rowid, flags in rows:
                    assert _holds(match, iter(flags)) == storage._text_matches(match, rowid), (query, rowid)
                    checked += 1
        assert checked >= 8
    finally:
        db.close()


CALL_SHAPES = [
    [{"id": "1", "type": "function", "function": {"name": "Grep", "arguments": '{"pattern": "a", "n": 3.5}'}}],
    {"name": "Read", "input": {"file_path": "/etc/hosts", "nested": [1, {"deep": "x"}, None, True]}},
    [{"name": "Bash", "args": "ls -la"}, "not a call", 7, {"type": "web_search", "arguments": "[1, 2]"}],
    [{"function": {"name": "Big", "arguments": json.dumps({"v": "y" * 9000, "w": "z" * 9000})}}],
    5, "just text", [],
]


def test_decoded_tool_calls_give_the_same_text_as_parsing_them():
    """The loader hands call_fields the importer's decoded tool_calls: same result as parsing."""
    for shape in CALL_SHAPES:
        text = json.dumps(shape, ensure_ascii=False)
        assert call_fields("Tool", text, json.loads(text)) == call_fields("Tool", text), shape


def test_hermes_record_carries_decoded_tool_calls(tmp_path):
    """openai-style importers keep the decoded value beside the JSON text they store."""
    from hermes_store.sessions.importers.base import MessageRecord, SourceState
    from hermes_store.sessions.importers.hermes_jsonl import HermesJsonlImporter

    path = tmp_path / "20260105_101500_a1b2c3.jsonl"
    lines = [{"role": "session_meta", "model": "m"},
             {"role": "assistant", "content": "", "tool_calls": CALL_SHAPES[0]},
             {"role": "assistant", "content": "", "tool_calls": json.dumps(CALL_SHAPES[1])},
             {"role": "user", "content": "plain"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    records = [e for e in HermesJsonlImporter(path, {}).read(SourceState()) if type(e) is MessageRecord]
    assert [r.tool_calls_value for r in records] == [CALL_SHAPES[0], None, None]
    assert json.loads(records[0].tool_calls) == CALL_SHAPES[0]
    assert records[1].tool_calls == json.dumps(CALL_SHAPES[1])  # text given as text: kept, not decoded
