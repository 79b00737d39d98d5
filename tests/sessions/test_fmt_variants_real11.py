"""Variants seen in real files, eleventh round: ChatGPT exports' GPT-5 browsing turns (a ``web.run``
result kept only in ``metadata.search_result_groups``, JSON tool-call arguments in ``code``
messages, Canvas documents, ``sonic_webpage`` pages), generic OpenAI JSONL in the legacy
``function_call`` shape and with ``reasoning_content``, and sessions named ``<file>#<line>`` opened by
their own id (fixtures reproduce the writers' structure, never real content)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from format_helpers import index, messages, session

from hermes_store.cli import cli


def _chatgpt_node(node_id: str, parent: str | None, children: list[str], message: dict | None) -> dict:
    return {"id": node_id, "parent": parent, "children": children, "message": message}


def _chatgpt_message(message_id: str, role: str, content: dict, *, recipient: str = "all",
                     name: str | None = None, meta: dict | None = None, stamp: float = 1762379320.0) -> dict:
    return {"id": message_id, "author": {"role": role, "name": name, "metadata": {}}, "content": content,
            "create_time": stamp, "update_time": None, "recipient": recipient, "channel": None,
            "metadata": meta or {}, "status": "finished_successfully", "weight": 1}


def test_chatgpt_gpt5_browsing_results_and_canvas_calls_are_kept(store, tmp_path):
    """GPT-5 conversations (exports of late 2025 on): the assistant calls ``web.run`` with a
    ``code`` message holding a JSON object (``{"open": [...]}``, ``{"search_query": [...]}``), and the
    ``web.run`` tool message holds an empty text part, the pages it found being in its
    ``metadata.search_result_groups`` (``[{domain, entries: [{title, url, snippet}]}]``); Canvas
    writes ``canmore.create_textdoc`` calls of ``{name, type, content}`` JSON; ``web.search`` pages come
    as ``sonic_webpage`` content (``title``, ``url``, ``text``). Before: the result was an empty tool row
    (what the search found lost) and every call's arguments were the JSON text under ``code``."""
    m = _chatgpt_message
    mapping = {
        "root": _chatgpt_node("root", None, ["u1"], None),
        "u1": _chatgpt_node("u1", "root", ["c1"], m("u1", "user", {"content_type": "text", "parts": [
            "Review the pool sizing notes in my repo"]})),
        "c1": _chatgpt_node("c1", "u1", ["t1"], m("c1", "assistant", {
            "content_type": "code", "language": "unknown", "response_format_name": None,
            "text": '{"open": [{"ref_id": "https://git.example/ana/pool"}], "response_length": "short"}'},
            recipient="web.run")),
        "t1": _chatgpt_node("t1", "c1", ["c2"], m("t1", "tool", {"content_type": "text", "parts": [""]},
                                                  name="web.run", meta={
            "reasoning_status": "is_reasoning",
            "search_result_groups": [{"type": "search_result_group", "domain": "git.example", "entries": [
                {"type": "search_result", "url": "https://git.example/ana/pool", "pub_date": None,
                 "title": "ana/pool: pgbouncer pool sizing notes", "snippet": "Total lines: 212\n",
                 "attribution": "git.example", "ref_id": {"turn_index": 0, "ref_type": "view", "ref_index": 0}},
            ]}]})),
        "c2": _chatgpt_node("c2", "t1", ["t2"], m("c2", "assistant", {
            "content_type": "code", "language": "json",
            "text": json.dumps({"name": "pool_review", "type": "document", "content": "# Pool review\n..."})},
            recipient="canmore.create_textdoc")),
        "t2": _chatgpt_node("t2", "c2", ["t3"], m("t2", "tool", {"content_type": "text", "parts": [
            "Successfully created text document 'Pool Review'"]}, name="canmore.create_textdoc")),
        "t3": _chatgpt_node("t3", "t2", ["a1"], m("t3", "tool", {
            "content_type": "sonic_webpage", "url": "https://docs.example/pgbouncer", "domain": "docs.example",
            "title": "PgBouncer configuration", "text": "default_pool_size: how many server connections",
            "snippet": "", "pub_timestamp": None}, name="web.search")),
        "a1": _chatgpt_node("a1", "t3", [], m("a1", "assistant", {"content_type": "text", "parts": [
            "The review is in the canvas."]})),
    }
    export = tmp_path / "chatgpt" / "conversations.json"
    export.parent.mkdir()
    export.write_text(json.dumps([{
        "id": "690bc613-6bac-8330-bb46-76dba866c309", "conversation_id": "690bc613-6bac-8330-bb46-76dba866c309",
        "title": "Pool review", "create_time": 1762379316.7, "update_time": 1762379330.0,
        "current_node": "a1", "default_model_slug": "gpt-5", "mapping": mapping}]), encoding="utf-8")
    summary = index(store, export)
    assert not summary["errors"], summary["errors"]
    rows = messages(store, "690bc613-6bac-8330-bb46-76dba866c309")
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant", "tool", "tool", "assistant"]
    assert rows[1]["calls"] == [("web.run", {"open": [{"ref_id": "https://git.example/ana/pool"}],
                                             "response_length": "short"}, "c1")]
    assert rows[2]["tool_call_id"] == "c1"
    assert rows[2]["content"] == ("ana/pool: pgbouncer pool sizing notes\nhttps://git.example/ana/pool\n"
                                  "Total lines: 212")
    assert rows[3]["calls"][0][:2] == ("canmore.create_textdoc", {"name": "pool_review", "type": "document",
                                                                  "content": "# Pool review\n..."})
    assert rows[4]["tool_call_id"] == "c2"
    assert rows[5]["content"] == ("PgBouncer configuration\nhttps://docs.example/pgbouncer\n"
                                  "default_pool_size: how many server connections")
    assert session(store, "690bc613-6bac-8330-bb46-76dba866c309")["title"] == "Pool review"


def _jsonl(path, lines: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_openai_jsonl_legacy_function_calls_and_reasoning_content(store, tmp_path):
    """OpenAI's function-calling fine-tuning data and Chat Completions logs from before tool calls:
    an assistant message ``{"function_call": {name, arguments}}`` (no ``tool_calls``, no id) and the
    answer ``{"role": "function", "name", "content"}``; DeepSeek-style logs and the datasets distilled
    from them keep the thinking in ``reasoning_content``. Before: the call was an empty assistant
    row with no tool call, the result a row of role ``function`` (left out by ``session_search``'s
    tool-output filter) answering nothing, and the thinking dropped."""
    data = tmp_path / "datasets" / "weather_functions.jsonl"
    _jsonl(data, [
        {"messages": [
            {"role": "user", "content": "What is the weather in Bergen?"},
            {"role": "assistant", "function_call": {"name": "get_current_weather",
                                                    "arguments": '{"location": "Bergen", "format": "celsius"}'}},
            {"role": "function", "name": "get_current_weather", "content": "9.5"},
            {"role": "assistant", "content": "It is 9.5 C in Bergen."}],
         "functions": [{"name": "get_current_weather", "parameters": {"type": "object"}}]},
        {"messages": [{"role": "user", "content": "Is 221 prime?"},
                      {"role": "assistant", "reasoning_content": "221 = 13 * 17.", "content": "No: 13 x 17."}]},
    ])
    summary = index(store, data)
    assert not summary["errors"], summary["errors"]
    rows = messages(store, "weather_functions#1")
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["calls"] == [("get_current_weather", {"location": "Bergen", "format": "celsius"},
                                 "function_call:1")]
    assert (rows[2]["tool_name"], rows[2]["tool_call_id"], rows[2]["content"]) == \
        ("get_current_weather", "function_call:1", "9.5")
    rows = messages(store, "weather_functions#2")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "Is 221 prime?"), ("reasoning", "221 = 13 * 17."), ("assistant", "No: 13 x 17.")]
    log = tmp_path / "logs" / "clock.jsonl"  # one message per line
    _jsonl(log, [{"role": "user", "content": "What time is it?"},
                 {"role": "assistant", "content": None, "function_call": {"name": "now", "arguments": "{}"}},
                 {"role": "function", "name": "now", "content": "12:00"},
                 {"role": "assistant", "content": "Noon."}])
    index(store, log)
    rows = messages(store, "clock")
    assert [(r["role"], r["tool_call_id"]) for r in rows] == [
        ("user", None), ("assistant", None), ("tool", "function_call:2"), ("assistant", None)]
    assert rows[1]["calls"] == [("now", {}, "function_call:2")]


def test_a_session_named_like_a_message_reference_opens_by_its_id(home, tmp_path):
    """A generic JSONL of one conversation per line names each ``<file>#<line>`` (it has no id of its
    own): ``sessions show data#2`` read that as message 2 of a session ``data`` -- "session id prefix
    'data' is ambiguous" -- and ``session_search`` as a scroll in no session, so such a session could
    not be opened at all. An exact session id now wins; ``data#2#1`` still names its message 1."""
    data = tmp_path / "data.jsonl"
    _jsonl(data, [{"messages": [{"role": "user", "content": "first conversation"},
                                {"role": "assistant", "content": "one"}]},
                  {"messages": [{"role": "user", "content": "second conversation"},
                                {"role": "assistant", "content": "two"}]}])
    runner = CliRunner()
    assert runner.invoke(cli, ["sessions", "index", str(data)]).exit_code == 0
    shown = runner.invoke(cli, ["sessions", "show", "--json", "data#2"])
    assert shown.exit_code == 0, shown.output
    body = json.loads(shown.stdout)
    assert body["session"]["id"] == "data#2"
    assert [m["content"] for m in body["messages"]] == ["second conversation", "two"]
    one = runner.invoke(cli, ["sessions", "show", "data#2#1", "--context", "0"])
    assert one.exit_code == 0 and "> data#2#1" in one.stdout and "second conversation" not in one.stdout
    reply = json.loads(runner.invoke(cli, ["tool", "session_search", json.dumps({"session_id": "data#2"})]).stdout)
    assert reply["success"], reply
    assert "second conversation" in json.dumps(reply) and "first conversation" not in json.dumps(reply)


def test_goose_tool_results_keep_what_the_model_was_given_once(store, tmp_path):
    """Goose's own tools answer with the output twice: ``Content::text(out).with_audience([Assistant])``
    and ``Content::text(out).with_audience([User]).with_priority(0.0)`` (the developer shell, screen
    capture's window list; the time tool's user item is a summary), and Goose gives the model only the
    items whose audience is absent or names the assistant. Before: every result of the shell was stored
    twice over, and a summary meant for the UI mixed into what the model read."""
    def result(call_id: str, items: list) -> dict:
        return {"type": "toolResponse", "id": call_id, "toolResult": {"status": "success", "value": items}}

    lines = [
        {"working_dir": "/home/ana/shop", "description": "Cart total", "message_count": 4, "total_tokens": 900},
        {"id": "m1", "role": "user", "created": 1740000000, "content": [{"type": "text", "text": "check cart.py"}]},
        {"id": "m2", "role": "assistant", "created": 1740000005, "content": [
            {"type": "toolRequest", "id": "toolu_1", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": "cat cart.py"}}}},
            {"type": "toolRequest", "id": "toolu_2", "toolCall": {"status": "success", "value": {
                "name": "clock__get_time", "arguments": {"timezone": "Europe/Oslo"}}}}]},
        {"id": "m3", "role": "user", "created": 1740000006, "content": [
            result("toolu_1", [
                {"type": "text", "text": "def total(c): return sum(c)\n", "annotations": {"audience": ["assistant"]}},
                {"type": "text", "text": "def total(c): return sum(c)\n",
                 "annotations": {"audience": ["user"], "priority": 0.0}}]),
            result("toolu_2", [
                {"type": "text", "text": '{"timezone": "Europe/Oslo", "datetime": "2025-02-19T22:20:06+01:00"}',
                 "annotations": {"audience": ["assistant"]}},
                {"type": "text", "text": "Current time in Europe/Oslo: 22:20", "annotations": {"audience": ["user"]}}]),
        ]},
        {"id": "m4", "role": "user", "created": 1740000009, "content": [
            result("toolu_3", [{"type": "text", "text": "only for the user", "annotations": {"audience": ["user"]}}])]},
    ]
    path = tmp_path / ".local" / "share" / "goose" / "sessions" / "20250220_101010.jsonl"
    _jsonl(path, lines)
    summary = index(store, path)
    assert not summary["errors"], summary["errors"]
    results = [r for r in messages(store, "20250220_101010") if r["role"] == "tool"]
    assert [(r["tool_name"], r["content"]) for r in results] == [
        ("developer__shell", "def total(c): return sum(c)\n"),
        ("clock__get_time", '{"timezone": "Europe/Oslo", "datetime": "2025-02-19T22:20:06+01:00"}'),
        (None, "only for the user")]  # nothing else there: kept


def _chatgpt_conversation(conversation_id: str, words: str) -> dict:
    m = _chatgpt_message
    return {"id": conversation_id, "title": words, "create_time": 1700000000.0, "update_time": 1700000001.0,
            "current_node": "a", "mapping": {
                "root": _chatgpt_node("root", None, ["u"], None),
                "u": _chatgpt_node("u", "root", ["a"], m("u", "user", {"content_type": "text", "parts": [words]})),
                "a": _chatgpt_node("a", "u", [], m("a", "assistant", {"content_type": "text",
                                                                      "parts": [f"about {words}"]}))}}


def test_a_cut_off_chatgpt_export_never_drops_the_conversations_stored_from_the_whole_one(
        store, tmp_path, monkeypatch):
    """A ChatGPT export re-downloaded and cut off (or damaged) replaced the whole one's import: the
    conversations after the cut were deleted from the store. Now, as for Claude.ai's export, only a
    whole JSON array of conversations replaces the earlier import (after a change and after a newer
    reader alike); a cut-off file is read as a snapshot, its problem naming the file and element."""
    from hermes_store.sessions.importers.chatgpt_export import ChatGptExportImporter

    export = tmp_path / "chatgpt" / "conversations.json"
    export.parent.mkdir()
    whole = json.dumps([_chatgpt_conversation(f"c-{n}", word) for n, word in
                        enumerate(("alpha", "beta", "gamma"), 1)], indent=1)
    export.write_text(whole, encoding="utf-8")
    index(store, export)
    export.write_text(whole[:whole.index('"beta"') + 20], encoding="utf-8")  # cut inside the second one
    summary = index(store, export)
    assert [(e["path"], "[1]: malformed or cut-off JSON" in e["error"]) for e in summary["errors"]] == [
        (str(export), True)]
    kept = {s: [r["content"] for r in messages(store, s)] for s in ("c-1", "c-2", "c-3")}
    assert kept == {"c-1": ["alpha", "about alpha"], "c-2": ["beta", "about beta"], "c-3": ["gamma", "about gamma"]}
    monkeypatch.setattr(ChatGptExportImporter, "reader", ChatGptExportImporter.reader + 1)  # a newer reader
    index(store, export)
    assert all(messages(store, s) for s in ("c-1", "c-2", "c-3"))
    export.write_text(json.dumps([_chatgpt_conversation("c-1", "alpha"), _chatgpt_conversation("c-4", "delta")]),
                      encoding="utf-8")
    assert not index(store, export)["errors"]  # a whole newer export replaces the earlier one
    assert session(store, "c-2") is None and [r["content"] for r in messages(store, "c-4")] == ["delta", "about delta"]


def test_cursor_transcripts_with_turn_markers_and_prompt_times(store, tmp_path):
    """Cursor's agent transcripts of 2026 (``agent-transcripts/<id>/<id>.jsonl``) end a turn with a
    ``{"type": "turn_ended"}`` line (the file is rewritten, so usually one, at its end) and put the
    prompt's time before the query, ``<timestamp>Thursday, Jul 23, 2026, 4:00 PM (UTC+8)</timestamp>``.
    Before: the marker line made the whole transcript ``unknown format`` (nothing imported), and the
    time was stored as part of the user's words with no message time."""
    session_id = "0a1b2c3d-1111-2222-3333-444455556666"
    folder = tmp_path / ".cursor" / "projects" / "home-ana-scanner" / "agent-transcripts" / session_id
    _jsonl(folder / f"{session_id}.jsonl", [
        {"role": "user", "message": {"content": [{"type": "text", "text": (
            "<timestamp>Thursday, Jul 23, 2026, 4:00 PM (UTC+8)</timestamp>\n"
            "<user_query>fix the QR scanner leak</user_query>")}]}},
        {"role": "assistant", "message": {"content": [{"type": "tool_use", "name": "Read",
                                                       "input": {"path": "src/QrScanner.tsx"}}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "The effect never unsubscribes."}]}},
        {"role": "user", "message": {"content": [{"type": "text", "text": (
            "<timestamp>Thursday, Jul 23, 2026, 4:05 PM (UTC-3:30)</timestamp>"
            "<user_query>and the resize listener</user_query>")}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Removed too."}]}},
        {"type": "turn_ended"},
    ])
    summary = index(store, folder / f"{session_id}.jsonl")
    assert not summary["errors"], summary["errors"]
    rows = messages(store, session_id)
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "fix the QR scanner leak"), ("assistant", ""), ("assistant", "The effect never unsubscribes."),
        ("user", "and the resize listener"), ("assistant", "Removed too.")]
    assert rows[1]["calls"][0][:2] == ("Read", {"path": "src/QrScanner.tsx"})
    assert rows[0]["timestamp"] == 1784793600.0  # 2026-07-23 08:00 UTC
    assert rows[3]["timestamp"] == 1784793600.0 + 5 * 60 + 11.5 * 3600  # 16:05 at UTC-3:30
    assert session(store, session_id)["started_at"] == 1784793600.0


def test_openai_jsonl_reads_responses_api_items(store, tmp_path):
    """The OpenAI Agents SDK's JSONL sessions (``JSONLSession``: one ``TResponseInputItem`` per line,
    what ``result.to_input_list()`` gives): an easy user message ``{"role", "content"}``, then items
    ``{"type": "reasoning", "summary": [{"type": "summary_text"}]}``, ``{"type": "function_call",
    "call_id", "name", "arguments"}``, ``{"type": "function_call_output", "call_id", "output"}`` and
    ``{"type": "message", "role": "assistant", "content": [{"type": "output_text"}]}``. Before: the
    file was refused as ``unknown format`` (the call items are no chat messages)."""
    path = tmp_path / "agents-sessions" / "user_123.jsonl"
    _jsonl(path, [
        {"role": "user", "content": "What is the weather in Oslo?"},
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Use the weather tool."}]},
        {"arguments": '{"city": "Oslo"}', "call_id": "call_9", "name": "get_weather", "type": "function_call",
         "id": "fc_1", "status": "completed"},
        {"call_id": "call_9", "output": "3 C and sleet", "type": "function_call_output"},
        {"id": "msg_1", "content": [{"annotations": [], "text": "It is 3 C with sleet.", "type": "output_text"}],
         "role": "assistant", "status": "completed", "type": "message"},
    ])
    summary = index(store, path)
    assert not summary["errors"], summary["errors"]
    rows = messages(store, "user_123")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "What is the weather in Oslo?"), ("reasoning", "Use the weather tool."), ("assistant", ""),
        ("tool", "3 C and sleet"), ("assistant", "It is 3 C with sleet.")]
    assert rows[2]["calls"] == [("get_weather", {"city": "Oslo"}, "call_9")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"]) == ("get_weather", "call_9")


def test_antigravity_context_steps_are_system_rows_and_the_model_switch_names_the_model(store, tmp_path):
    """Antigravity transcripts carry context steps the agent put before the model --
    ``CONVERSATION_HISTORY`` (earlier conversations) and ``KNOWLEDGE_ARTIFACTS`` -- and agy notes a
    model switch inside a ``USER_INPUT`` step ("changed setting `Model Selection` from X to Y.").
    Before: each context step was stored as a ``tool`` row answering the oldest open call (the
    ``run_command`` result after it then answered nothing), and the session had no model."""
    logs = tmp_path / ".gemini" / "antigravity-cli" / "brain" / "c0ffee00-1111-2222-3333-444455556666" / \
        ".system_generated" / "logs"
    step = {"status": "DONE", "created_at": "2026-08-21T03:00:00Z"}
    _jsonl(logs / "transcript_full.jsonl", [
        {**step, "step_index": 0, "source": "USER_EXPLICIT", "type": "USER_INPUT",
         "content": "<USER_REQUEST>run the migrations</USER_REQUEST>"},
        {**step, "step_index": 1, "source": "MODEL", "type": "PLANNER_RESPONSE", "content": "",
         "tool_calls": [{"name": "run_command", "args": {"CommandLine": "make migrate"}}]},
        {**step, "step_index": 2, "source": "SYSTEM", "type": "CONVERSATION_HISTORY",
         "content": "# Conversation History\\n- Fixing the migration order"},
        {**step, "step_index": 3, "source": "SYSTEM", "type": "KNOWLEDGE_ARTIFACTS", "content": ""},
        {**step, "step_index": 4, "source": "MODEL", "type": "RUN_COMMAND", "content": "3 migrations applied",
         "exit_code": 0},
        {**step, "step_index": 5, "source": "USER_EXPLICIT", "type": "USER_INPUT",
         "content": "The user changed setting `Model Selection` from Gemini 3.1 Pro (High) to Claude Opus 5.5 (High).\n"
                    "<USER_REQUEST>now seed the data</USER_REQUEST>"},
    ])
    summary = index(store, logs / "transcript_full.jsonl")
    assert not summary["errors"], summary["errors"]
    rows = messages(store, "c0ffee00-1111-2222-3333-444455556666")
    assert [r["role"] for r in rows] == ["user", "assistant", "system", "tool", "user"]
    assert rows[2]["content"] == "[conversation history] # Conversation History\\n- Fixing the migration order"
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"], rows[3]["content"]) == (
        "run_command", rows[1]["calls"][0][2], "3 migrations applied")
    assert session(store, "c0ffee00-1111-2222-3333-444455556666")["model"] == "Claude Opus 5.5 (High)"


def test_gemini_cli_keeps_an_image_nested_in_a_function_response(store, tmp_path):
    """Gemini CLI with a Gemini 3 model (``supportsMultimodalFunctionResponse``) records what
    ``read_file`` read from an image inside the call's result, ``functionResponse.parts:
    [{inlineData}]``, beside ``response: {output: "Binary content provided ..."}``; a
    ``read_many_files`` result is a ``functionResponse`` followed by the files' text parts. Before:
    the nested image left no trace in the stored result."""
    chats = tmp_path / ".gemini" / "tmp" / "shop" / "chats"
    _jsonl(chats / "session-2026-09-01T10-00-b41c9e27.jsonl", [
        {"sessionId": "b41c9e27-1111-2222-3333-444455556666", "projectHash": "a1", "kind": "main",
         "startTime": "2026-09-01T10:00:00.000Z", "lastUpdated": "2026-09-01T10:05:00.000Z"},
        {"id": "u1", "timestamp": "2026-09-01T10:00:01.000Z", "type": "user",
         "content": [{"text": "read @src/cart.py and the logo"}]},
        {"id": "g1", "timestamp": "2026-09-01T10:00:05.000Z", "type": "gemini", "content": "",
         "model": "gemini-3-pro-preview",
         "thoughts": [{"subject": "Reading", "description": "Both files.", "timestamp": "2026-09-01T10:00:03.000Z"}],
         "toolCalls": [
             {"id": "read_many_files-1", "name": "read_many_files", "args": {"paths": ["src/cart.py"]},
              "status": "success", "timestamp": "2026-09-01T10:00:04.000Z", "result": [
                  {"functionResponse": {"id": "read_many_files-1", "name": "read_many_files",
                                        "response": {"output": "Tool execution succeeded."}}},
                  {"text": "--- src/cart.py ---\n\ndef total(cart):\n    return sum(cart)\n"}]},
             {"id": "read_file-2", "name": "read_file", "args": {"absolute_path": "/w/logo.png"},
              "status": "success", "timestamp": "2026-09-01T10:00:04.500Z", "result": [
                  {"functionResponse": {"id": "read_file-2", "name": "read_file",
                                        "response": {"output": "Binary content provided (1 item(s))."},
                                        "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}}]},
         ]},
    ])
    summary = index(store, chats / "session-2026-09-01T10-00-b41c9e27.jsonl")
    assert not summary["errors"], summary["errors"]
    results = {r["tool_call_id"]: r["content"] for r in messages(store, "b41c9e27-1111-2222-3333-444455556666")
               if r["role"] == "tool"}
    assert results == {
        "read_many_files-1": "Tool execution succeeded.\n--- src/cart.py ---\n\ndef total(cart):\n    return sum(cart)\n",
        "read_file-2": "Binary content provided (1 item(s)).\n[image/png]"}


def test_cursor3_composer_headers_give_the_workspace(store, tmp_path):
    """Cursor 3 keeps the composer index in the global database's ``composer.composerHeaders``, each
    header naming its folder in ``workspaceIdentifier: {id, uri: {fsPath, scheme, external}}`` (what
    Cursor's session movers and backup tools rewrite when a project moves). The global database has
    no ``workspace.json`` beside it, so before, every Cursor 3 composer was stored without a
    workspace; titles and times already came from the header."""
    import sqlite3

    path = tmp_path / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    path.parent.mkdir(parents=True)
    composer = "5e7c1a2b-0000-4000-8000-00000000c0de"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        db.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        db.execute("INSERT INTO ItemTable VALUES (?, ?)", ("composer.composerHeaders", json.dumps({"allComposers": [
            {"type": "head", "composerId": composer, "name": "Fix auth redirect", "createdAt": 1775000000000,
             "lastUpdatedAt": 1775000600000, "unifiedMode": "agent",
             "workspaceIdentifier": {"id": "9f3e0c1d2b4a59687766554433221100",
                                     "uri": {"fsPath": "/work/acme/webapp", "scheme": "file",
                                             "external": "file:///work/acme/webapp"}}}]})))
        db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{composer}", json.dumps(
            {"_v": 14, "composerId": composer, "fullConversationHeadersOnly": [
                {"bubbleId": "b1", "type": 1}, {"bubbleId": "b2", "type": 2}]})))
        for bubble, kind, text in (("b1", 1, "why does login loop?"), ("b2", 2, "The callback drops the state.")):
            db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{composer}:{bubble}", json.dumps(
                {"_v": 3, "type": kind, "bubbleId": bubble, "text": text,
                 "createdAt": "2026-03-31T23:33:20.000Z"})))
    summary = index(store, path)
    assert not summary["errors"], summary["errors"]
    stored = session(store, composer)
    assert (stored["title"], stored["workspace"]) == ("Fix auth redirect", "/work/acme/webapp")
    assert [r["content"] for r in messages(store, composer)] == ["why does login loop?", "The callback drops the state."]


def test_a_split_chatgpt_export_is_read_whole_and_its_other_files_are_no_problem(store, tmp_path):
    """ChatGPT exports since early 2026 split the conversations into ``conversations-000.json``,
    ``conversations-001.json``, ... (each a JSON array), beside ``user.json``,
    ``message_feedback.json``, ``shared_conversations.json`` and the rest. Each part is read; the
    files that hold no conversation are read through them (nothing indexed). Before: indexing the
    export folder reported every one of those files as ``unknown format``."""
    export = tmp_path / "Downloads" / "chatgpt-2026-02-01"
    export.mkdir(parents=True)
    (export / "conversations-000.json").write_text(json.dumps([_chatgpt_conversation("c-1", "alpha")]),
                                                   encoding="utf-8")
    (export / "conversations-001.json").write_text(json.dumps([_chatgpt_conversation("c-2", "beta")]),
                                                   encoding="utf-8")
    (export / "user.json").write_text(json.dumps({"id": "user-x", "email": "ana@example.org"}), encoding="utf-8")
    (export / "message_feedback.json").write_text(json.dumps([{"conversation_id": "c-1", "rating": "thumbsUp"}]),
                                                  encoding="utf-8")
    (export / "shared_conversations.json").write_text(json.dumps([{"id": "s", "conversation_id": "c-2"}]),
                                                      encoding="utf-8")
    summary = index(store, export)
    assert not summary["errors"], summary["errors"]
    assert [r["content"] for r in messages(store, "c-1")] == ["alpha", "about alpha"]
    assert [r["content"] for r in messages(store, "c-2")] == ["beta", "about beta"]


def test_pi_active_tools_change_entries_are_bookkeeping(store, tmp_path):
    """Pi's harness persists a change of the tools the agent may use as an ``active_tools_change``
    entry (``{type, id, parentId, timestamp, activeToolNames}``, a node of the session tree like
    ``model_change``; ports of Pi in Rust and Python write it too). Before: every such entry was
    reported as ``unknown entry type 'active_tools_change'``, a problem on a file Pi wrote."""
    folder = tmp_path / ".pi" / "agent" / "sessions" / "--home-ana-shop--"
    session_id = "1a6f6bc4-0000-4000-8000-000000000001"
    path = folder / f"2026-02-20T20-17-15-095Z_{session_id}.jsonl"
    _jsonl(path, [
        {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-02-20T20:17:15.095Z",
         "cwd": "/home/ana/shop"},
        {"type": "model_change", "id": "e1", "parentId": None, "timestamp": "2026-02-20T20:17:15.100Z",
         "provider": "anthropic", "modelId": "claude-opus-4-6"},
        {"type": "active_tools_change", "id": "e2", "parentId": "e1", "timestamp": "2026-02-20T20:17:15.200Z",
         "activeToolNames": ["read", "bash"]},
        {"type": "message", "id": "e3", "parentId": "e2", "timestamp": "2026-02-20T20:17:16.000Z",
         "message": {"role": "user", "content": "list the files", "timestamp": 1771618636000}},
        {"type": "message", "id": "e4", "parentId": "e3", "timestamp": "2026-02-20T20:17:18.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "cart.py and README.md"}],
                     "provider": "anthropic", "model": "claude-opus-4-6", "stopReason": "stop",
                     "timestamp": 1771618638000}},
    ])
    summary = index(store, path)
    assert not summary["errors"], summary["errors"]
    assert [(r["role"], r["content"]) for r in messages(store, session_id)] == [
        ("user", "list the files"), ("assistant", "cart.py and README.md")]


def test_pi_subagent_runs_are_linked_to_their_parent_and_their_transcripts_are_pi(store, tmp_path):
    """The pi-subagents extension keeps each run twice beside the parent session
    ``<time>_<uuid>.jsonl``: a Pi session nested under the parent's entry,
    ``<time>_<uuid>/<entry id>/run-<N>/session.jsonl`` (its own uuid, titled
    ``subagent-<agent>-<runId>-<n>``), and ``subagent-artifacts/<runId>_<agent>_<n>_transcript.jsonl``
    (records ``{recordType, runId, agent, childIndex, cwd, ts, timestamp, role, message}``) with the
    run's ``_input.md``, ``_output.md`` and ``_meta.json``. Before: the nested session had no parent
    (and was no default location), the transcript was taken for a Cursor agent transcript, and the
    ``_meta.json`` was reported as ``unknown format``."""
    root = tmp_path / ".pi" / "agent" / "sessions" / "--home-ana-shop--"
    parent, child = "aaaa1111-0000-4000-8000-000000000001", "bbbb2222-0000-4000-8000-000000000002"
    stamp = "2026-08-10T16-18-06-228Z"
    _jsonl(root / f"{stamp}_{parent}.jsonl", [
        {"type": "session", "version": 3, "id": parent, "timestamp": "2026-08-10T16:18:06.228Z", "cwd": "/home/ana/shop"},
        {"type": "message", "id": "e1", "parentId": None, "timestamp": "2026-08-10T16:18:07.000Z",
         "message": {"role": "user", "content": "review the cart module"}},
        {"type": "message", "id": "e2", "parentId": "e1", "timestamp": "2026-08-10T16:18:08.000Z",
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "tc1", "name": "subagent",
                                                       "arguments": {"agent": "reviewer", "task": "review cart.py"}}]}},
        {"type": "message", "id": "e6", "parentId": "e2", "timestamp": "2026-08-10T16:18:31.000Z",
         "message": {"role": "toolResult", "toolCallId": "tc1", "toolName": "subagent",
                     "content": [{"type": "text", "text": "cart.py: total ignores discounts"}]}},
    ])
    _jsonl(root / f"{stamp}_{parent}" / "e2" / "run-0" / "session.jsonl", [
        {"type": "session", "version": 3, "id": child, "timestamp": "2026-08-10T16:18:10.000Z", "cwd": "/home/ana/shop"},
        {"type": "session_info", "id": "s1", "parentId": None, "timestamp": "2026-08-10T16:18:10.100Z",
         "name": "subagent-reviewer-r42-1"},
        {"type": "message", "id": "c1", "parentId": "s1", "timestamp": "2026-08-10T16:18:11.000Z",
         "message": {"role": "user", "content": "review cart.py"}},
        {"type": "message", "id": "c2", "parentId": "c1", "timestamp": "2026-08-10T16:18:25.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "total ignores discounts"}]}},
    ])
    record = {"recordType": "message", "runId": "r42", "agent": "reviewer", "childIndex": 1, "cwd": "/home/ana/shop"}
    _jsonl(root / "subagent-artifacts" / "r42_reviewer_1_transcript.jsonl", [
        {**record, "ts": 1786378691000, "timestamp": "2026-08-10T16:18:11.000Z", "role": "user",
         "message": {"role": "user", "content": "review cart.py"}},
        {**record, "ts": 1786378705000, "timestamp": "2026-08-10T16:18:25.000Z", "role": "assistant",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "total ignores discounts"}]}},
    ])
    (root / "subagent-artifacts" / "r42_reviewer_meta.json").write_text(
        json.dumps({"runId": "r42", "agent": "reviewer", "task": "review cart.py"}), encoding="utf-8")
    (root / "subagent-artifacts" / "r42_reviewer_output.md").write_text("total ignores discounts\n", encoding="utf-8")
    summary = index(store, tmp_path / ".pi")
    assert not summary["errors"], summary["errors"]
    nested = session(store, child)
    assert (nested["title"], nested["parent_session_id"], nested["origin_format"]) == (
        "subagent-reviewer-r42-1", parent, "pi")
    transcript = session(store, "r42_reviewer_1_transcript")
    assert (transcript["origin_format"], transcript["source"], transcript["title"], transcript["workspace"]) == (
        "pi", "pi", "subagent-reviewer-r42-1", "/home/ana/shop")
    assert [(r["role"], r["content"]) for r in messages(store, "r42_reviewer_1_transcript")] == [
        ("user", "review cart.py"), ("assistant", "total ignores discounts")]


def test_claude_ai_export_web_search_results_keep_titles_and_addresses(store, tmp_path):
    """Claude.ai data exports of 2026: messages carry ``parent_message_uuid`` (the first one's parent
    ``00000000-0000-4000-8000-000000000000``), ``tool_use`` blocks their ``id`` and display keys
    (``message``, ``icon_name``, ``approval_options``, ``mcp_server_url``, ...), and a web search's
    ``tool_result`` (``tool_use_id``) holds ``knowledge`` items ``{title, url, metadata: {site_domain},
    text, is_citable, prompt_context_metadata}``. Before: only each page's text was kept, the titles
    and addresses of the pages found were lost."""
    export = tmp_path / "data-2026-04-30-10-00-00" / "conversations.json"
    export.parent.mkdir()
    block = {"start_timestamp": None, "stop_timestamp": None, "flags": None}
    export.write_text(json.dumps([{
        "uuid": "a3a5ed8d-bba2-429d-87b7-1c651dd1769e", "name": "Checkpoints in the desktop app", "summary": "",
        "created_at": "2026-04-24T07:27:17.628791Z", "updated_at": "2026-04-24T07:28:50.947295Z",
        "account": {"uuid": "acc"},
        "chat_messages": [
            {"uuid": "m1", "text": "", "sender": "human", "created_at": "2026-04-24T07:27:18.690582Z",
             "updated_at": "2026-04-24T07:27:18.690582Z", "attachments": [], "files": [],
             "parent_message_uuid": "00000000-0000-4000-8000-000000000000",
             "content": [{**block, "type": "text", "text": "Does the desktop app have /rewind?", "citations": []}]},
            {"uuid": "m2", "text": "", "sender": "assistant", "created_at": "2026-04-24T07:28:50.947295Z",
             "updated_at": "2026-04-24T07:28:50.947295Z", "attachments": [], "files": [], "parent_message_uuid": "m1",
             "content": [
                 {**block, "type": "thinking", "thinking": "Check the docs.", "summaries": [], "cut_off": False},
                 {**block, "type": "tool_use", "id": "toolu_01Lq", "name": "web_search",
                  "input": {"query": "Claude Code /rewind desktop"}, "message": "Searching the web",
                  "integration_name": None, "icon_name": "globe", "display_content": None,
                  "approval_options": None, "is_mcp_app": None, "mcp_server_url": None},
                 {**block, "type": "tool_result", "tool_use_id": "toolu_01Lq", "name": "web_search", "is_error": False,
                  "content": [{"type": "knowledge", "title": "Per-prompt rewind in Desktop App · Issue #43755",
                               "url": "https://github.com/anthropics/claude-code/issues/43755",
                               "metadata": {"type": "webpage_metadata", "site_domain": "github.com"},
                               "is_missing": False, "text": "Add a rewind/checkpoint UI to the Desktop App.",
                               "is_citable": True, "prompt_context_metadata": {"age": "3 weeks ago"}, "links": None}]},
                 {**block, "type": "text", "text": "Not yet: /rewind is terminal-only.", "citations": []}]},
        ]}]), encoding="utf-8")
    summary = index(store, export)
    assert not summary["errors"], summary["errors"]
    rows = messages(store, "a3a5ed8d-bba2-429d-87b7-1c651dd1769e")
    assert [r["role"] for r in rows] == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert rows[2]["calls"] == [("web_search", {"query": "Claude Code /rewind desktop"}, "toolu_01Lq")]
    assert (rows[3]["tool_call_id"], rows[3]["content"]) == ("toolu_01Lq", (
        "Per-prompt rewind in Desktop App · Issue #43755\nhttps://github.com/anthropics/claude-code/issues/43755\n"
        "Add a rewind/checkpoint UI to the Desktop App."))


def test_claude_ai_export_with_an_edited_prompt_reads_the_newest_branch(store, tmp_path):
    """A Claude.ai data export keeps every branch of a conversation (an edited prompt, a retried
    reply) in ``chat_messages``, each message placed by ``parent_message_uuid``, and names no
    current leaf. Before: both branches were read in order as one conversation -- the abandoned
    prompt and its answer followed by the edited one. Now the branch of the newest message is read
    (the other branch counted in ``meta.other_branch_messages``), as for a ChatGPT export; a chain
    that breaks (a message missing) is still read whole, in order."""
    def msg(uuid: str, parent: str, sender: str, text: str, minute: int) -> dict:
        return {"uuid": uuid, "text": text, "content": [{"type": "text", "text": text}], "sender": sender,
                "created_at": f"2026-05-02T10:{minute:02d}:00Z", "updated_at": f"2026-05-02T10:{minute:02d}:00Z",
                "attachments": [], "files": [], "parent_message_uuid": parent}

    export = tmp_path / "data-2026-05-03-10-00-00" / "conversations.json"
    export.parent.mkdir()
    root = "00000000-0000-4000-8000-000000000000"
    conversations = [
        {"uuid": "conv-fork", "name": "Pool size", "created_at": "2026-05-02T10:00:00Z",
         "updated_at": "2026-05-02T10:05:00Z", "account": {"uuid": "acc"}, "chat_messages": [
             msg("m1", root, "human", "pool size for 200 clients?", 0),
             msg("m2", "m1", "assistant", "use 200", 1),
             msg("m3", root, "human", "pool size for 200 clients on 4 cores?", 3),
             msg("m4", "m3", "assistant", "about 10 server connections", 4)]},
        {"uuid": "conv-broken", "name": "", "created_at": "2026-05-02T11:00:00Z",
         "updated_at": "2026-05-02T11:05:00Z", "account": {"uuid": "acc"}, "chat_messages": [
             msg("b1", root, "human", "first", 0), msg("b2", "b1", "assistant", "one", 1),
             msg("b3", "gone", "human", "second", 2), msg("b4", "b3", "assistant", "two", 3),
             msg("b5", "b3", "assistant", "two again", 4)]},
    ]
    export.write_text(json.dumps(conversations), encoding="utf-8")
    summary = index(store, export)
    assert not summary["errors"], summary["errors"]
    assert [r["content"] for r in messages(store, "conv-fork")] == [
        "pool size for 200 clients on 4 cores?", "about 10 server connections"]
    assert session(store, "conv-fork")["meta"]["other_branch_messages"] == 2
    assert [r["content"] for r in messages(store, "conv-broken")] == ["first", "one", "second", "two", "two again"]


def test_chatgpt_gpt5_citation_markers_become_what_chatgpt_shows(store, tmp_path):
    """GPT-5 answers cite inline with private-use markers, ``\\ue200cite\\ue202turn0search3\\ue201``,
    which ChatGPT replaces by the ``alt`` of the ``metadata.content_references`` entry whose
    ``matched_text`` is the marker (a renderer of exports strips what is left). Before: the
    markers were stored in the answer (``cite`` and ``turn0search3`` glued to the words)."""
    m = _chatgpt_message
    marker = "\ue200cite\ue202turn0search3\ue202turn0search5\ue201"
    answer = m("a1", "assistant", {"content_type": "text", "parts": [
        f"Start with 20 per pair{marker}. Raise it under load\ue200cite\ue202turn1view0\ue201."]},
        meta={"content_references": [{"matched_text": marker, "start_idx": 22, "end_idx": 23, "type": "grouped_webpages",
                                      "alt": " ([pgbouncer.org](https://www.pgbouncer.org/config.html))"}]})
    export = tmp_path / "gpt5" / "conversations.json"
    export.parent.mkdir()
    export.write_text(json.dumps([{
        "id": "c-cite", "title": "Pool", "create_time": 1762379316.7, "current_node": "a1", "mapping": {
            "root": _chatgpt_node("root", None, ["u1"], None),
            "u1": _chatgpt_node("u1", "root", ["a1"], m("u1", "user", {"content_type": "text", "parts": ["pool size?"]})),
            "a1": _chatgpt_node("a1", "u1", [], answer)}}]), encoding="utf-8")
    assert not index(store, export)["errors"]
    assert [r["content"] for r in messages(store, "c-cite")] == [
        "pool size?",
        "Start with 20 per pair ([pgbouncer.org](https://www.pgbouncer.org/config.html)). Raise it under load."]
