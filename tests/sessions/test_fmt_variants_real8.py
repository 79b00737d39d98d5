"""Variants seen in real files, eighth round: Anthropic server tool results (Claude Code's advisor,
web fetch) and Codex's encrypted inter-agent payload parts (fixtures reproduce the writers'
structure, never real content)."""

from __future__ import annotations

import json

from format_helpers import index, messages, session

SESSION = "7d1e2f3a-0b1c-4d5e-8f90-a1b2c3d4e5f6"
ENVELOPE = {"sessionId": SESSION, "cwd": "/home/u/app", "version": "2.1.291", "userType": "external",
            "isSidechain": False}


def _assistant(uuid: str, stamp: str, blocks: list[dict]) -> dict:
    return {**ENVELOPE, "type": "assistant", "uuid": uuid, "parentUuid": None, "timestamp": stamp,
            "message": {"id": f"msg_{uuid}", "role": "assistant", "model": "claude-sonnet-4-6", "content": blocks}}


def _advisor(call_id: str, content: dict) -> list[dict]:
    return [{"type": "server_tool_use", "id": call_id, "name": "advisor", "input": {}},
            {"type": "advisor_tool_result", "tool_use_id": call_id, "content": content}]


def _write(path, lines: list) -> None:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
                    encoding="utf-8")


def test_claude_code_server_tool_results_are_tool_rows(store, tmp_path):
    """Claude Code 2.1.29x with an ``advisorModel`` writes the advisor as a server tool: a
    ``server_tool_use`` block named ``advisor`` and an ``advisor_tool_result`` block whose content is
    ``advisor_result`` (the advice), ``advisor_redacted_result`` (encrypted) or an
    ``advisor_tool_result_error``; the API's ``web_fetch`` server tool answers with a
    ``web_fetch_tool_result`` (a ``web_fetch_result`` holding the fetched document). Before: each
    result became the marker ``[advisor_tool_result]`` / ``[web_fetch_tool_result]`` inside the
    assistant's text and the advice and the page were lost. A damaged line is reported, the rest kept."""
    lines = [
        {**ENVELOPE, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-11-02T10:00:00Z",
         "message": {"role": "user", "content": "Design the retry queue"}},
        {**ENVELOPE, "type": "attachment", "uuid": "t0", "timestamp": "2026-11-02T10:00:00.500Z",
         "attachment": {"type": "advisor_tool", "available": True, "toolChange": "add", "model": "claude-opus-4-7"}},
        _assistant("a1", "2026-11-02T10:00:02Z", _advisor("srvtoolu_A", {
            "type": "advisor_result", "text": "Use exponential backoff with jitter; cap retries at five."})),
        _assistant("a2", "2026-11-02T10:00:10Z", [{"type": "text", "text": "Backoff with jitter it is."}]),
        _assistant("a3", "2026-11-02T10:01:00Z", _advisor("srvtoolu_B", {
            "type": "advisor_tool_result_error", "error_code": "too_many_requests"})),
        "{\"type\": \"assistant\", \"message\": ",  # a line cut short
        _assistant("a4", "2026-11-02T10:02:00Z", [
            {"type": "server_tool_use", "id": "srvtoolu_C", "name": "web_fetch", "input": {"url": "https://example.com/doc"}},
            {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_C", "content": {
                "type": "web_fetch_result", "url": "https://example.com/doc", "retrieved_at": "2026-11-02T10:02:01Z",
                "content": {"type": "document", "title": "Retry Guide",
                            "source": {"type": "text", "media_type": "text/plain", "data": "Retries back off."}}}}]),
        _assistant("a5", "2026-11-02T10:03:00Z", [
            *_advisor("srvtoolu_D", {"type": "advisor_redacted_result", "encrypted_content": "EqQBCkgIARAB"}),
            {"type": "text", "text": "Done."}]),
    ]
    path = tmp_path / f"{SESSION}.jsonl"
    _write(path, lines)
    summary = index(store, path)
    assert [(e["line"], "malformed JSON" in e["error"]) for e in summary["errors"]] == [(6, True)]
    rows = messages(store, SESSION)
    assert [(r["role"], r["content"], r["tool_name"], r["tool_call_id"]) for r in rows] == [
        ("user", "Design the retry queue", None, None),
        ("assistant", "", None, None),
        ("tool", "Use exponential backoff with jitter; cap retries at five.", "advisor", "srvtoolu_A"),
        ("assistant", "Backoff with jitter it is.", None, None),
        ("assistant", "", None, None),
        ("tool", "[advisor error: too_many_requests]", "advisor", "srvtoolu_B"),
        ("assistant", "", None, None),
        ("tool", "https://example.com/doc\nRetry Guide\nRetries back off.", "web_fetch", "srvtoolu_C"),
        ("assistant", "Done.", None, None),
        ("tool", "", "advisor", "srvtoolu_D"),  # encrypted advice: the call is answered, nothing readable
    ]
    assert [c[0] for r in rows for c in r["calls"]] == ["advisor", "advisor", "web_fetch", "advisor"]
    assert not any("[advisor" in r["content"] and r["role"] == "assistant" for r in rows)


def test_a_headless_stream_keeps_server_tool_results(store, tmp_path):
    """``claude -p --output-format stream-json`` carries the same blocks (the advisor reaches a
    headless run when the settings name an ``advisorModel``). Before: each server tool block was
    reported as an ``unknown content block`` and skipped, the advice lost."""
    path = tmp_path / "run.jsonl"
    lines = [{"type": "system", "subtype": "init", "session_id": "s-adv", "cwd": "/x", "tools": [],
              "model": "claude-sonnet-4-6"},
             {"type": "user", "message": {"role": "user", "content": "plan the migration"},
              "parent_tool_use_id": None, "session_id": "s-adv"},
             {"type": "assistant", "message": {"role": "assistant", "content": [
                 *_advisor("srvtoolu_E", {"type": "advisor_result", "text": "Migrate in two phases."}),
                 {"type": "text", "text": "Two phases."}]}, "parent_tool_use_id": None, "session_id": "s-adv"},
             {"type": "assistant", "message": {"role": "assistant", "content": [
                 {"type": "server_tool_use", "id": "srvtoolu_F", "name": "tool_search_tool_regex",
                  "input": {"query": "migrat"}},
                 {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_F", "content": {
                     "type": "tool_search_tool_search_result",
                     "tool_references": [{"type": "tool_reference", "tool_name": "run_migration"}]}}]},
              "parent_tool_use_id": None, "session_id": "s-adv"},
             {"type": "result", "subtype": "success", "result": "Two phases.", "session_id": "s-adv"}]
    _write(path, lines)
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"], r["tool_call_id"]) for r in messages(store, "s-adv")] == [
        ("user", "plan the migration", None), ("assistant", "Two phases.", None),
        ("tool", "Migrate in two phases.", "srvtoolu_E"), ("assistant", "", None),
        ("tool", "[tool loaded: run_migration]", "srvtoolu_F")]


def test_codex_encrypted_inter_agent_payloads_add_no_marker(store, tmp_path):
    """Codex 0.15x delegates to a subagent with an ``agent_message`` item whose content is a plain
    header (``Message Type: NEW_TASK`` ...) followed by an ``encrypted_content`` part (the payload,
    readable only by the API). Before: the part was stored as the text ``[encrypted_content]``, and
    an item of encrypted parts only was stored as a message saying just that. Now such parts add
    nothing: the header is kept, an all-encrypted item stores no empty message."""
    thread = "0198aaaa-1111-7222-8333-444455556666"
    folder = tmp_path / "sessions" / "2026" / "07" / "14"
    folder.mkdir(parents=True)
    path = folder / f"rollout-2026-07-14T10-00-00-{thread}.jsonl"
    lines = [
        {"timestamp": "2026-07-14T10:00:00Z", "type": "session_meta",
         "payload": {"id": thread, "timestamp": "2026-07-14T10:00:00Z", "cwd": "/workspace", "cli_version": "0.154.0"}},
        {"timestamp": "2026-07-14T10:00:01Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "split the work"}]}},
        {"timestamp": "2026-07-14T10:00:02Z", "type": "response_item",
         "payload": {"type": "agent_message", "author": "/root", "recipient": "/root/worker", "content": [
             {"type": "input_text", "text": "Message Type: NEW_TASK\nTask name: /root/worker\nPayload:"},
             {"type": "encrypted_content", "encrypted_content": "gAAAAABciphertext"}]}},
        {"timestamp": "2026-07-14T10:00:03Z", "type": "response_item",
         "payload": {"type": "agent_message", "author": "/root", "recipient": "/root/worker", "content": [
             {"type": "encrypted_content", "encrypted_content": "gAAAAABmore"}]}},
        {"timestamp": "2026-07-14T10:00:04Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Delegated."}]}},
    ]
    _write(path, lines)
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, thread)] == [
        ("user", "split the work"),
        ("assistant", "Message Type: NEW_TASK\nTask name: /root/worker\nPayload:"),
        ("assistant", "Delegated.")]


def test_goose_legacy_reasoning_parts_and_elicitations(store, tmp_path):
    """Goose wrote a model's thinking as ``{type: "reasoning", text}`` before its ``thinking``
    parts (today's Goose migrates it when it loads a session: ``deserialize_sanitized_content`` in
    ``crates/goose/src/conversation/message.rs``), and an MCP server's question to the user as an
    ``actionRequired`` part (``data.actionType`` ``elicitation`` with ``message``; the answer
    ``elicitationResponse`` with ``user_data``). Before: the reasoning part was reported as an
    ``unknown content part`` and lost, the question and the answer dropped silently."""
    folder = tmp_path / ".local" / "share" / "goose" / "sessions"
    folder.mkdir(parents=True)
    path = folder / "20250610_101500.jsonl"
    _write(path, [
        {"working_dir": "/home/lee/api", "description": "Fix the pager", "schedule_id": None, "message_count": 4},
        {"id": "m1", "role": "user", "created": 1749550500,
         "content": [{"type": "text", "text": "why does page 2 repeat page 1?"}]},
        {"id": "m2", "role": "assistant", "created": 1749550510, "content": [
            {"type": "reasoning", "text": "The offset is computed before the page index is incremented."},
            {"type": "text", "text": "The offset is off by one page."}]},
        '{"id": "m2b", "role": "assistant", "created": 17495',  # a line cut short
        {"id": "m3", "role": "assistant", "created": 1749550520, "content": [{"type": "actionRequired", "data": {
            "actionType": "elicitation", "id": "e1", "message": "Which branch should I patch?",
            "requested_schema": {"type": "object"}}}]},
        {"id": "m4", "role": "user", "created": 1749550530, "content": [{"type": "actionRequired", "data": {
            "actionType": "elicitationResponse", "id": "e1", "user_data": {"branch": "main", "dry_run": False}}}]},
    ])
    summary = index(store, path)
    assert [e["line"] for e in summary["errors"]] == [4]
    assert [(r["role"], r["content"]) for r in messages(store, "20250610_101500")] == [
        ("user", "why does page 2 repeat page 1?"),
        ("reasoning", "The offset is computed before the page index is incremented."),
        ("assistant", "The offset is off by one page."),
        ("system", "[elicitation] Which branch should I patch?"),
        ("user", "branch: main\ndry_run: false")]


def test_hermes_session_jsonl_keeps_assistant_thinking(store, tmp_path):
    """Hermes Agent appends the message dicts it could not write to ``state.db`` to
    ``sessions/<id>.jsonl`` as they are (``divert_session_transcript_jsonl`` in ``hermes_state.py``),
    and its assistant messages keep their thinking beside the reply (``reasoning``,
    ``reasoning_content``, ``reasoning_details``: ``_ASSISTANT_ONLY_KEYS`` in
    ``gateway/session_transcript.py``). Before: ``hermes-jsonl`` dropped it, while the same message in
    a ``session_*.json`` snapshot gave a ``reasoning`` row."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "20260210_090000_c0ffee.jsonl"
    _write(path, [
        {"role": "session_meta", "model": "hermes-4", "platform": "telegram", "timestamp": "2026-02-10T09:00:00"},
        {"role": "user", "content": "plan my week", "timestamp": "2026-02-10T09:00:01"},
        {"role": "assistant", "content": "Here is a plan.", "timestamp": "2026-02-10T09:00:05",
         "reasoning": "The user wants a weekly plan; list priorities first.", "finish_reason": "stop"},
        '{"role": "user", "content": "and next',  # a line cut short
        {"role": "user", "content": "and Sunday?", "timestamp": "2026-02-10T09:01:00"},
        {"role": "assistant", "content": "Rest.", "timestamp": "2026-02-10T09:01:03", "reasoning": None,
         "reasoning_details": [{"type": "reasoning.text", "text": "Sunday is free in the plan."},
                               {"type": "reasoning.encrypted", "data": "gAAAA"}]},
    ])
    summary = index(store, path)
    assert [e["line"] for e in summary["errors"]] == [4]
    assert [(r["role"], r["content"]) for r in messages(store, "20260210_090000_c0ffee")] == [
        ("user", "plan my week"),
        ("reasoning", "The user wants a weekly plan; list priorities first."),
        ("assistant", "Here is a plan."),
        ("user", "and Sunday?"),
        ("reasoning", "Sunday is free in the plan."),
        ("assistant", "Rest.")]


def test_claude_code_api_errors_are_not_the_models_words(store, tmp_path):
    """When a request fails Claude Code writes an ``assistant`` line in the model's place:
    ``isApiErrorMessage: true``, ``error`` (``rate_limit``, ``authentication_failed``, ...),
    ``apiErrorStatus``, model ``<synthetic>``, text such as "API Error: 529 Overloaded" or "Please
    run /login · API Error: 401 ..." (real records quoted by several transcript readers); an
    interrupted turn gets a ``<synthetic>`` "No response requested.". Before: stored as the
    assistant's words, found by a search for what the model said. Now ``system`` rows."""
    lines = [
        {**ENVELOPE, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-08-19T13:39:00Z",
         "message": {"role": "user", "content": "summarise the log"}},
        {**ENVELOPE, "type": "assistant", "uuid": "e1", "parentUuid": "u1", "timestamp": "2026-08-19T13:40:00Z",
         "isApiErrorMessage": True, "error": "server_error", "apiErrorStatus": 529,
         "message": {"id": "x1", "role": "assistant", "model": "<synthetic>", "type": "message",
                     "content": [{"type": "text", "text": "API Error: 529 Overloaded. Try again in a moment."}]}},
        {**ENVELOPE, "type": "assistant", "uuid": "e2", "parentUuid": "e1", "timestamp": "2026-08-19T13:41:00Z",
         "message": {"id": "x2", "role": "assistant", "model": "<synthetic>", "type": "message",
                     "content": [{"type": "text", "text": "No response requested."}]}},
        {**ENVELOPE, "type": "assistant", "uuid": "a1", "parentUuid": "e2", "timestamp": "2026-08-19T13:42:00Z",
         "message": {"id": "x3", "role": "assistant", "model": "claude-sonnet-4-6",
                     "content": [{"type": "text", "text": "The log shows three restarts."}]}},
    ]
    path = tmp_path / f"{SESSION}.jsonl"
    _write(path, lines)
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, SESSION)] == [
        ("user", "summarise the log"),
        ("system", "API Error: 529 Overloaded. Try again in a moment."),
        ("system", "No response requested."),
        ("assistant", "The log shows three restarts.")]


def test_a_headless_streams_api_error_is_not_the_models_words(store, tmp_path):
    """In ``claude -p --output-format stream-json`` (the Agent SDK's messages) a failed request is an
    ``assistant`` message with the ``SDKAssistantMessageError`` class in ``error`` and model
    ``<synthetic>``. Before: stored as the assistant's words, and ``<synthetic>`` replaced the
    session's model. Now a ``system`` row; the model stays the run's."""
    path = tmp_path / "run.jsonl"
    _write(path, [
        {"type": "system", "subtype": "init", "session_id": "s-syn", "cwd": "/x", "tools": [],
         "model": "claude-sonnet-4-6"},
        {"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": None,
         "session_id": "s-syn"},
        {"type": "assistant", "message": {"id": "m0", "role": "assistant", "model": "claude-sonnet-4-6",
                                          "content": [{"type": "text", "text": "Hello."}]},
         "parent_tool_use_id": None, "session_id": "s-syn"},
        {"type": "assistant", "error": "rate_limit", "parent_tool_use_id": None, "session_id": "s-syn",
         "message": {"id": "m1", "role": "assistant", "model": "<synthetic>", "type": "message",
                     "content": [{"type": "text", "text": "You've hit your session limit"}]}},
    ])
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, "s-syn")] == [
        ("user", "hi"), ("assistant", "Hello."), ("system", "You've hit your session limit")]
    assert session(store, "s-syn")["model"] == "claude-sonnet-4-6"


def test_codex_inter_agent_envelopes_in_assistant_messages(store, tmp_path):
    """Before inter-agent messages had an item of their own, Codex wrote one into the model's
    history as an assistant ``message`` (``phase: "commentary"``) whose only ``output_text`` is the
    serialized ``InterAgentCommunication``: ``{"author", "recipient", "other_recipients", "content",
    "trigger_turn"}`` (real rollout lines quoted by several readers; a subagent's completion comes
    back that way with a ``<subagent_notification>``). Before: stored as the assistant's words, raw
    JSON. Now the ``content`` it carries, the role by its author (this thread's agent: ``assistant``,
    another agent: ``user``), as for ``agent_message`` items."""
    thread = "0197aaaa-2222-7333-8444-555566667777"
    folder = tmp_path / "sessions" / "2026" / "05" / "21"
    folder.mkdir(parents=True)
    path = folder / f"rollout-2026-05-21T14-24-30-{thread}.jsonl"

    def envelope(author: str, recipient: str, content: str, trigger: bool) -> str:
        return json.dumps({"author": author, "recipient": recipient, "other_recipients": [], "content": content,
                           "trigger_turn": trigger}, separators=(",", ":"))

    def commentary(stamp: str, text: str) -> dict:
        return {"timestamp": stamp, "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "phase": "commentary",
            "content": [{"type": "output_text", "text": text}]}}

    notice = '<subagent_notification>\n{"agent_path":"/root/reviewer","status":{"completed":"Done"}}\n</subagent_notification>'
    _write(path, [
        {"timestamp": "2026-05-21T14:24:30Z", "type": "session_meta",
         "payload": {"id": thread, "timestamp": "2026-05-21T14:24:30Z", "cwd": "/repo", "cli_version": "0.140.0"}},
        {"timestamp": "2026-05-21T14:24:31Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "review my diff"}]}},
        commentary("2026-05-21T14:24:35Z", envelope("/root", "/root/reviewer", "Review the unstaged diff.", True)),
        commentary("2026-05-21T14:24:36Z", envelope("/root/reviewer", "/root", notice, False)),
        commentary("2026-05-21T14:24:37Z", '{"plan": "a JSON reply that is no envelope"}'),
        {"timestamp": "2026-05-21T14:24:38Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "No findings."}]}},
    ])
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, thread)] == [
        ("user", "review my diff"),
        ("assistant", "Review the unstaged diff."),
        ("user", notice),
        ("assistant", '{"plan": "a JSON reply that is no envelope"}'),
        ("assistant", "No findings.")]


def test_a_panel_only_cline_task_keeps_its_mcp_calls(store, tmp_path):
    """A Cline / Roo Code task read from its ``ui_messages.json`` alone: an MCP tool use is an
    ``ask`` (or, auto-approved, ``say``) ``use_mcp_server`` entry whose text is the JSON
    ``ClineAskUseMcpServer`` (``{serverName, type: use_mcp_tool | access_mcp_resource, toolName?,
    arguments? (JSON text), uri?, response?}``: ``src/shared/ExtensionMessage.ts``), answered by the
    ``say: mcp_server_response`` entry after it (or, in Roo Code, its own ``response``). Before: both
    dropped silently, the task seemed to answer from nowhere."""
    task = tmp_path / "saoudrizwan.claude-dev" / "tasks" / "1764000000000"
    task.mkdir(parents=True)
    entries = [
        {"ts": 1764000000000, "type": "say", "say": "task", "text": "list open issues"},
        {"ts": 1764000001000, "type": "say", "say": "api_req_started", "text": json.dumps({"request": "..."})},
        {"ts": 1764000002000, "type": "ask", "ask": "use_mcp_server", "text": json.dumps({
            "type": "use_mcp_tool", "serverName": "github", "toolName": "list_issues",
            "arguments": "{\"repo\": \"a/b\"}"})},
        {"ts": 1764000002500, "type": "say", "say": "mcp_server_request_started"},
        {"ts": 1764000003000, "type": "say", "say": "mcp_server_response", "text": "3 open issues"},
        {"ts": 1764000004000, "type": "say", "say": "use_mcp_server", "text": json.dumps({
            "type": "access_mcp_resource", "serverName": "docs", "uri": "docs://guide",
            "response": "The guide says: triage weekly."})},
        {"ts": 1764000005000, "type": "say", "say": "completion_result", "text": "There are 3 open issues."},
    ]
    path = task / "ui_messages.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    assert index(store, path)["errors"] == []
    rows = messages(store, "1764000000000")
    assert [(r["role"], r["content"], r["tool_name"]) for r in rows] == [
        ("user", "list open issues", None),
        ("assistant", "", None), ("tool", "3 open issues", "list_issues"),
        ("assistant", "", None), ("tool", "The guide says: triage weekly.", "access_mcp_resource"),
        ("assistant", "There are 3 open issues.", None)]
    assert [c[:2] for r in rows for c in r["calls"]] == [
        ("list_issues", {"server": "github", "repo": "a/b"}),
        ("access_mcp_resource", {"server": "docs", "uri": "docs://guide"})]
