"""Variants seen in real files, tenth round: calls a Codex code-mode script made (kept only as
``*_end`` events; an MCP result of structured content only among them), Claude Code's model-fallback block
(fixtures reproduce the writers' structure, never real content)."""

from __future__ import annotations

import json

from format_helpers import index, session

from hermes_store.sessions import SessionIndex, index_paths

THREAD = "019a0b1c-2d3e-7f40-8a5b-6c7d8e9f0a1b"


def _line(stamp: str, kind: str, payload: dict) -> dict:
    return {"timestamp": f"2026-08-02T14:{stamp}Z", "type": kind, "payload": payload}


def _rows(store, session_id: str) -> list[dict]:
    """The session's messages, each with ``calls``: (name, arguments text, id) of its tool calls."""
    rows = SessionIndex(store).get_messages(session_id)
    for row in rows:
        row["calls"] = [(c["function"]["name"], c["function"]["arguments"], c.get("id"))
                        for c in json.loads(row["tool_calls"] or "[]")]
    return rows


def _write(path, lines: list) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def _rollout_head() -> list[dict]:
    return [
        _line("00:00.000", "session_meta", {"id": THREAD, "timestamp": "2026-08-02T14:00:00Z", "cwd": "/srv/app",
                                            "originator": "codex_cli_rs", "cli_version": "0.146.0"}),
        _line("00:01.000", "turn_context", {"turn_id": "t1", "cwd": "/srv/app", "model": "gpt-5.6-terra"}),
        _line("00:02.000", "response_item", {"type": "message", "role": "user",
                                             "content": [{"type": "input_text", "text": "Add the changelog entry"}]}),
        _line("00:03.000", "response_item", {"type": "custom_tool_call", "call_id": "call_exec1", "name": "exec",
                                             "input": "text(await tools.apply_patch(patch));"}),
        _line("00:04.000", "event_msg", {"type": "patch_apply_end", "call_id": "exec-5f1c", "turn_id": "t1",
                                         "stdout": "Success. Updated the following files:\nM CHANGELOG.md\n",
                                         "stderr": "", "success": True, "status": "completed",
                                         "changes": {"/srv/app/CHANGELOG.md": {"type": "update",
                                                                              "unified_diff": "@@ -1 +1,2 @@"}}}),
        _line("00:04.500", "event_msg", {"type": "mcp_tool_call_end", "call_id": "exec-77aa",
                                         "invocation": {"server": "tracker", "tool": "get_issue",
                                                        "arguments": {"id": 42}},
                                         "result": {"Ok": {"content": [], "structuredContent": {
                                             "title": "Crash on empty cart", "state": "open"}}}}),
        _line("00:04.800", "event_msg", {"type": "web_search_end", "call_id": "exec-3f85",
                                         "query": "keepachangelog format",
                                         "action": {"type": "search", "query": "keepachangelog format"},
                                         "results": [{"title": "Keep a Changelog", "url": "https://keepachangelog.com/",
                                                      "snippet": "Don't let your friends dump git logs"}]}),
        _line("00:05.000", "response_item", {"type": "custom_tool_call_output", "call_id": "call_exec1",
                                             "output": [{"type": "input_text", "text": "Script completed"}]}),
    ]


def test_codex_calls_of_a_code_mode_script_are_stored_from_their_end_events(store, tmp_path):
    """Codex 0.144+ (the unified ``exec`` tool): the model's script calls ``tools.apply_patch``, MCP
    tools and web search itself, and those nested calls have no ``response_item``: the persisted
    ``patch_apply_end`` / ``mcp_tool_call_end`` / ``web_search_end`` events are their only record.
    Before: every ``event_msg`` but the title was skipped, so the file edit, the MCP result and the
    search were lost. A direct call's event repeats its item (same call id) and is stored once,
    whichever comes first, also when the item was read by an earlier run."""
    path = tmp_path / f"rollout-2026-08-02T14-00-00-{THREAD}.jsonl"
    lines = _rollout_head() + [
        # a direct apply_patch call: item first, then its event (a repeat)
        _line("06:00.000", "response_item", {"type": "custom_tool_call", "call_id": "call_patch2",
                                             "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"}),
    ]
    _write(path, lines)
    first = index(store, path)
    assert not first["errors"]
    lines += [
        # read by a second run: the event of the call stored by the first one
        _line("06:01.000", "event_msg", {"type": "patch_apply_end", "call_id": "call_patch2", "success": True,
                                         "stdout": "Success.", "changes": {"/srv/app/README.md": {"type": "update"}}}),
        _line("06:02.000", "response_item", {"type": "custom_tool_call_output", "call_id": "call_patch2",
                                             "output": "Success. Updated README.md"}),
        # a top-level web search whose event came before its item (same id)
        _line("07:00.000", "event_msg", {"type": "web_search_end", "call_id": "ws_9", "query": "semver",
                                         "action": {"type": "search", "query": "semver"}}),
        _line("07:00.100", "response_item", {"type": "web_search_call", "id": "ws_9", "status": "completed",
                                             "action": {"type": "search", "query": "semver"}}),
        _line("07:01.000", "response_item", {"type": "message", "role": "assistant",
                                             "content": [{"type": "output_text", "text": "Entry added."}]}),
    ]
    _write(path, lines)
    second = index(store, path)
    assert not second["errors"]
    rows = _rows(store, THREAD)
    calls = [(c[0], c[2]) for r in rows for c in r["calls"]]
    assert calls == [("exec", "call_exec1"), ("apply_patch", "exec-5f1c"), ("mcp__tracker__get_issue", "exec-77aa"),
                     ("web_search", "exec-3f85"), ("apply_patch", "call_patch2"), ("web_search", "ws_9")]
    results = {r["tool_call_id"]: (r["tool_name"], r["content"]) for r in rows if r["role"] == "tool"}
    assert results["exec-5f1c"] == ("apply_patch", "Success. Updated the following files:\nM CHANGELOG.md\n"
                                                   "update /srv/app/CHANGELOG.md")
    assert results["exec-77aa"] == ("mcp__tracker__get_issue", '{"title": "Crash on empty cart", "state": "open"}')
    assert results["exec-3f85"] == ("web_search", "Keep a Changelog https://keepachangelog.com/ "
                                                  "Don't let your friends dump git logs")
    assert results["call_patch2"] == ("apply_patch", "Success. Updated README.md")  # the item's output, once
    patch = next(c for r in rows for c in r["calls"] if c[2] == "exec-5f1c")
    assert json.loads(patch[1]) == {"changes": [{"path": "/srv/app/CHANGELOG.md", "kind": "update"}]}
    assert [r["content"] for r in rows if r["role"] == "assistant" and r["content"]] == ["Entry added."]



CLAUDE = "4e5f6a7b-8c9d-4e0f-9a1b-2c3d4e5f6a7b"
CLAUDE_ENVELOPE = {"sessionId": CLAUDE, "cwd": "/home/u/notes", "version": "2.1.212", "userType": "external",
                   "entrypoint": "cli", "isSidechain": False}


def _claude(kind: str, uuid: str, second: int, message: dict | None = None, **extra) -> dict:
    line = {**CLAUDE_ENVELOPE, "type": kind, "uuid": uuid, "parentUuid": None,
            "timestamp": f"2026-07-20T09:00:{second:02d}.000Z", **extra}
    if message is not None:
        line["message"] = message
    return line


def _reply(model: str, blocks: list[dict]) -> dict:
    return {"id": "msg_2", "type": "message", "role": "assistant", "model": model, "content": blocks}


def test_claude_model_fallback_block_is_a_notice_not_the_assistants_words(store, tmp_path):
    """Claude Code 2.1.19x+ retries a request the safeguards refused on another model: a ``system``
    line ``model_refusal_fallback`` (``originalModel``, ``fallbackModel``, ``retractedMessageUuids``),
    then an assistant line whose content is ``{"type": "fallback", "from": {"model"}, "to":
    {"model"}}`` (the block type a drift probe of 2.1.212 transcripts lists beside text, thinking and
    tool_use). Before: ``claude-code`` stored the assistant saying ``[fallback]``; the shared block
    reader (``claude -p`` stream-json) reported it as an unknown block."""
    path = tmp_path / f"{CLAUDE}.jsonl"
    _write(path, [
        _claude("user", "u1", 0, {"role": "user", "content": "Which note mentions the ferry?"}),
        _claude("system", "s1", 6, subtype="model_refusal_fallback", level="warning", direction="retry",
                content="Safeguards flagged this message; switching models and retrying.",
                originalModel="claude-fable-5", fallbackModel="claude-opus-4-8", retractedMessageUuids=["a1"]),
        _claude("assistant", "a2", 7, _reply("claude-opus-4-8", [
            {"type": "fallback", "from": {"model": "claude-fable-5"}, "to": {"model": "claude-opus-4-8"}}])),
        _claude("assistant", "a3", 8, _reply("claude-opus-4-8", [{"type": "text", "text": "ferry.txt does."}]),
                supersedesUuids=["a1"]),
    ])
    summary = index(store, path)
    assert not summary["errors"]
    assert [(r["role"], r["content"]) for r in _rows(store, CLAUDE)] == [
        ("user", "Which note mentions the ferry?"),
        ("system", "Safeguards flagged this message; switching models and retrying."),
        ("system", "[model fallback: claude-fable-5 -> claude-opus-4-8]"),
        ("assistant", "ferry.txt does."),
    ]

    stream = tmp_path / "run.jsonl"
    _write(stream, [
        {"type": "system", "subtype": "init", "session_id": CLAUDE[::-1], "cwd": "/srv", "model": "claude-fable-5"},
        {"type": "user", "message": {"role": "user", "content": "Which note?"}, "session_id": CLAUDE[::-1],
         "parent_tool_use_id": None},
        {"type": "assistant", "message": _reply("claude-opus-4-8", [
            {"type": "fallback", "from": {"model": "claude-fable-5"}, "to": {"model": "claude-opus-4-8"}},
            {"type": "text", "text": "ferry.txt."}]), "session_id": CLAUDE[::-1], "parent_tool_use_id": None},
        {"type": "result", "subtype": "success", "is_error": False, "result": "ferry.txt.",
         "session_id": CLAUDE[::-1], "num_turns": 1},
    ])
    summary = index(store, stream)
    assert not summary["errors"], summary["errors"]
    assert [(r["role"], r["content"]) for r in _rows(store, CLAUDE[::-1])] == [
        ("user", "Which note?"),
        ("system", "[model fallback: claude-fable-5 -> claude-opus-4-8]"),
        ("assistant", "ferry.txt."),
    ]


QWEN = "9f8e7d6c-5b4a-4321-9abc-def012345678"


def _qwen(uuid: str, parent: str | None, second: int, kind: str, **extra) -> dict:
    return {"uuid": uuid, "parentUuid": parent, "sessionId": QWEN, "timestamp": f"2026-10-04T08:00:{second:02d}.000Z",
            "type": kind, "cwd": "/home/u/shop", "version": "0.24.7", **extra}


def test_qwen_compression_summary_is_kept(store, tmp_path):
    """Qwen Code writes a compression as a ``system`` record ``chat_compression`` whose
    ``systemPayload.compressedHistory`` is the model's new history: the summary as its first
    ``user`` entry (``<state_snapshot>…``), the model's acknowledgement, then the kept turns
    (records of their own). The summary is nowhere else in the file. Before: the record was
    bookkeeping and the summary lost (Gemini CLI's reader already kept its ``<state_snapshot>``)."""
    summary = "<state_snapshot>\n<next_step>\nWrite tmp/handoff.txt and send it.\n</next_step>\n</state_snapshot>"
    path = tmp_path / ".qwen" / "projects" / "-home-u-shop" / "chats" / f"{QWEN}.jsonl"
    path.parent.mkdir(parents=True)
    _write(path, [
        _qwen("u1", None, 0, "user", message={"role": "user", "parts": [{"text": "Plan the handoff"}]}),
        _qwen("a1", "u1", 1, "assistant", model="qwen3-coder-plus",
              message={"role": "model", "parts": [{"text": "Drafting it."}]}),
        _qwen("c1", "a1", 2, "system", subtype="chat_compression", systemPayload={
            "info": {"originalTokenCount": 4096, "newTokenCount": 1024, "compressionStatus": 1},
            "compressedHistory": [
                {"role": "user", "parts": [{"text": summary}]},
                {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]},
                {"role": "user", "parts": [{"text": "Plan the handoff"}]}]}),
        _qwen("u2", "c1", 3, "user", message={"role": "user", "parts": [{"text": "Now send it"}]}),
    ])
    summary_run = index(store, path)
    assert not summary_run["errors"]
    assert [(r["role"], r["content"]) for r in _rows(store, QWEN)] == [
        ("user", "Plan the handoff"), ("assistant", "Drafting it."), ("system", summary), ("user", "Now send it")]


def test_claude_connector_text_is_the_assistants_words(store, tmp_path):
    """An assistant message may narrate between a connector's calls in a ``connector_text`` block
    (``{type, connector_text, signature}``, which Claude Code sends back in its history as proxies
    translating its requests show, "connector_text downgrades to text"). Before: ``claude-code``
    stored the marker ``[connector_text]`` in place of the words; the shared block reader reported
    an unknown block and dropped them."""
    narration = {"type": "connector_text", "connector_text": "Searching the team drive for the ferry notes.",
                 "signature": "sig_c1"}
    path = tmp_path / f"{CLAUDE}.jsonl"
    _write(path, [
        _claude("user", "u1", 0, {"role": "user", "content": "Find the ferry notes"}),
        _claude("assistant", "a1", 1, _reply("claude-opus-4-8", [narration, {"type": "text", "text": "Found them."}])),
    ])
    assert not index(store, path)["errors"]
    assert [(r["role"], r["content"]) for r in _rows(store, CLAUDE)][1] == (
        "assistant", "Searching the team drive for the ferry notes.\nFound them.")
    stream = tmp_path / "run.jsonl"
    _write(stream, [
        {"type": "system", "subtype": "init", "session_id": "s-conn", "cwd": "/srv", "model": "claude-opus-4-8"},
        {"type": "assistant", "message": _reply("claude-opus-4-8", [narration]), "session_id": "s-conn",
         "parent_tool_use_id": None},
    ])
    summary = index(store, stream)
    assert not summary["errors"], summary["errors"]
    assert [(r["role"], r["content"]) for r in _rows(store, "s-conn")] == [
        ("assistant", "Searching the team drive for the ferry notes.")]


def test_a_result_read_by_a_later_run_keeps_its_tool_name(store, tmp_path):
    """A live transcript is indexed between the agent writing a call and writing its result (``sessions
    watch``, or ``sessions index`` run while the agent works): the appended read met the result
    without the call, so the stored ``tool`` row had no tool name (``TOOL`` in ``sessions show``, no
    ``tool_name`` for ``session_search``). The newest calls are now kept in the file's state
    (``ToolNames`` given ``SourceState.meta``), by every appending JSONL reader."""
    path = tmp_path / f"{CLAUDE}.jsonl"
    lines = [
        _claude("user", "u1", 0, {"role": "user", "content": "List the notes"}),
        _claude("assistant", "a1", 1, _reply("claude-opus-4-8", [
            {"type": "tool_use", "id": "toolu_ls", "name": "Bash", "input": {"command": "ls notes"}}])),
    ]
    _write(path, lines)
    assert not index(store, path)["errors"]
    lines.append(_claude("user", "u2", 2, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_ls", "content": "ferry.txt"}]}))
    _write(path, lines)
    second = index(store, path)
    assert not second["errors"]
    assert [(r["role"], r["tool_name"], r["content"]) for r in _rows(store, CLAUDE)][-1] == ("tool", "Bash", "ferry.txt")


def test_copilot_skill_events(store, tmp_path):
    """Copilot CLI 1.0.88 writes ``skill.invoked`` (``name``, ``path``, ``content``: the skill's
    instructions put before the model) and ``skill.context_delivered_ref`` (a pointer to that
    content: ``contentId``, ``prefix``, ``suffix``) after a ``skill`` tool call, as a drift probe's
    fixture of real logs shows. Before: the instructions were skipped, and every
    ``skill.context_delivered_ref`` was reported as an unknown event type (a problem on a file
    Copilot wrote), as was ``subagent.configured`` (written for every sub-agent) and
    ``model.call_finished``."""
    session = "c0ffee00-1111-4222-8333-444444444444"
    folder = tmp_path / ".copilot" / "session-state" / session
    folder.mkdir(parents=True)

    def event(kind: str, second: int, data: dict) -> dict:
        return {"type": kind, "data": data, "id": f"e-{second}", "timestamp": f"2026-09-25T17:00:{second:02d}.000Z",
                "parentId": None}

    _write(folder / "events.jsonl", [
        event("session.start", 1, {"sessionId": session, "version": 1, "producer": "copilot-agent",
                                   "copilotVersion": "1.0.88", "startTime": "2026-09-25T17:00:01.000Z",
                                   "context": {"cwd": "/tmp/exp"}}),
        event("user.message", 2, {"content": "Greet World with the greeter skill", "messageId": "um-1"}),
        event("assistant.message", 3, {"messageId": "am-1", "content": "", "toolRequests": [
            {"toolCallId": "call-skill", "name": "skill", "arguments": {"skill": "greeter"}, "type": "function"}]}),
        event("tool.execution_start", 4, {"toolCallId": "call-skill", "toolName": "skill",
                                          "arguments": {"skill": "greeter"}}),
        event("tool.execution_complete", 5, {"toolCallId": "call-skill", "success": True,
                                             "result": {"content": "Skill \"greeter\" loaded successfully."}}),
        event("skill.invoked", 6, {"name": "greeter", "path": "/tmp/exp/.github/skills/greeter/SKILL.md",
                                   "content": "# Greeter\n\nWrite greeting.txt containing: hello <name>.",
                                   "source": "project", "trigger": "agent-invoked"}),
        event("skill.context_delivered_ref", 7, {"source": "skill-greeter", "contentId": "sha256:89f2",
                                                 "prefix": "<skill-context name=\"greeter\">\n", "suffix": "\n</skill-context>"}),
        event("subagent.configured", 8, {"model": "gpt-5.6-luna", "reasoningEffort": "medium", "multiTurn": True}),
        event("model.call_finished", 9, {"dispatchDurationMs": 100, "outcome": "success", "turnId": "t1"}),
        event("assistant.message", 10, {"messageId": "am-2", "content": "greeted", "toolRequests": []}),
    ])
    summary = index(store, folder / "events.jsonl")
    assert not summary["errors"], summary["errors"]
    assert [(r["role"], r["content"]) for r in _rows(store, session)][3:] == [
        ("system", "[skill] # Greeter\n\nWrite greeting.txt containing: hello <name>."), ("assistant", "greeted")]


def test_claude_subagent_meta_files_describe_their_transcripts(store, tmp_path):
    """Claude Code 2.1.x writes ``<session>/subagents/agent-<id>.meta.json`` (``{agentType,
    description, spawnDepth}``) beside each subagent transcript ``agent-<id>.jsonl`` (the layout
    readers of ``~/.claude/projects`` pin: ``subagents/agent-*.meta.json``, ``subagents/agent-*.jsonl``).
    Before: ``sessions index ~/.claude/projects`` reported every such file as ``unknown format`` (one
    problem per subagent ever run). Now it is a member of its transcript, whose child session it
    titles by its description (a summary or title line still wins) with ``agentType`` in the meta."""
    project = tmp_path / "projects" / "-home-u-app"
    agents = project / CLAUDE / "subagents"
    agents.mkdir(parents=True)
    _write(project / f"{CLAUDE}.jsonl", [
        _claude("user", "u1", 0, {"role": "user", "content": "Map the endpoints"}),
        _claude("assistant", "a1", 1, _reply("claude-opus-4-8", [
            {"type": "tool_use", "id": "toolu_ag", "name": "Agent",
             "input": {"subagent_type": "Explore", "prompt": "Map endpoints"}}])),
    ])
    side = {"isSidechain": True, "agentId": "a784b50f9fbfb258b"}
    _write(agents / "agent-a784b50f9fbfb258b.jsonl", [
        _claude("user", "s1", 2, {"role": "user", "content": "Map endpoints"}, **side),
        _claude("assistant", "s2", 3, _reply("claude-haiku-5", [{"type": "text", "text": "Three endpoints."}]), **side),
    ])
    (agents / "agent-a784b50f9fbfb258b.meta.json").write_text(
        json.dumps({"agentType": "Explore", "description": "Map endpoints", "spawnDepth": 1}), encoding="utf-8")
    (agents / "agent-b1c2.meta.json").write_text(  # spawned, its transcript not written yet
        json.dumps({"agentType": "general-purpose", "description": "Check tests"}), encoding="utf-8")
    summary = index(store, tmp_path / "projects")
    assert not summary["errors"], summary["errors"]
    child = session(store, f"{CLAUDE}:agent-a784b50f9fbfb258b")
    assert (child["title"], child["parent_session_id"]) == ("Map endpoints", CLAUDE)
    assert child["meta"]["agentType"] == "Explore"


def test_codex_thread_names_from_the_session_index(store, tmp_path):
    """A renamed Codex thread's name is appended to ``<codex home>/session_index.jsonl``
    (``{id, thread_name, updated_at}``, newest entry wins; codex-rs ``session_index.rs``
    ``append_thread_name``); current rollouts carry no ``thread_name_updated`` event. Before: such
    threads were indexed untitled."""
    home = tmp_path / ".codex"
    day = home / "sessions" / "2026" / "08" / "02"
    day.mkdir(parents=True)
    _write(day / f"rollout-2026-08-02T14-00-00-{THREAD}.jsonl", _rollout_head())
    _write(home / "session_index.jsonl", [
        {"id": THREAD, "thread_name": "changelog", "updated_at": "2026-08-02T14:10:00Z"},
        {"id": "019a0b1c-0000-7000-8000-000000000000", "thread_name": "other", "updated_at": "2026-08-02T14:11:00Z"},
        {"id": THREAD, "thread_name": "Changelog entry for 2.4", "updated_at": "2026-08-02T14:12:00Z"},
    ])
    assert not index(store, day / f"rollout-2026-08-02T14-00-00-{THREAD}.jsonl")["errors"]
    assert session(store, THREAD)["title"] == "Changelog entry for 2.4"
    summary = index(store, home)  # the index itself is the agent's, not a transcript: left out of the walk
    assert not summary["errors"], summary["errors"]


def test_walking_an_agents_home_leaves_out_its_own_non_transcript_files(store, tmp_path):
    """``sessions index ~/.claude`` (or ``~/.codex``, ``~/.gemini``, ``~/.copilot``) walked the agent's settings,
    credentials, caches, to-do lists and installed packages as transcripts: one ``unknown format``
    problem each (a Claude Code home has a ``todos/*.json`` file per session, Copilot CLI's
    ``pkg/<platform>/<version>/`` its whole package). Importers now declare those files
    (``walk_skipped``); a walk leaves them out, a path named explicitly is still read."""
    claude = tmp_path / ".claude"
    (claude / "todos").mkdir(parents=True)
    (claude / "projects" / "-home-u-app").mkdir(parents=True)
    _write(claude / "projects" / "-home-u-app" / f"{CLAUDE}.jsonl", [
        _claude("user", "u1", 0, {"role": "user", "content": "Fix the parser"})])
    (claude / "settings.json").write_text('{"model": "opus", "permissions": {"allow": []}}', encoding="utf-8")
    (claude / "stats-cache.json").write_text('{"version": 2, "dailyActivity": []}', encoding="utf-8")
    (claude / "todos" / f"{CLAUDE}-agent-{CLAUDE}.json").write_text(
        '[{"content": "Fix the parser", "status": "completed", "activeForm": "Fixing the parser"}]', encoding="utf-8")
    codex = tmp_path / ".codex"
    codex.mkdir()
    (codex / "auth.json").write_text('{"auth_mode": "chatgpt"}', encoding="utf-8")
    (codex / "version.json").write_text('{"latest_version": "0.146.0"}', encoding="utf-8")
    package = tmp_path / ".copilot" / "pkg" / "universal" / "1.0.88"  # the installed CLI, schemas and all
    (package / "schemas").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@github/copilot", "version": "1.0.88"}', encoding="utf-8")
    (package / "schemas" / "session-events.schema.json").write_text('{"type": "object"}', encoding="utf-8")
    summary = index_paths(store, [claude, codex, tmp_path / ".copilot"])
    assert not summary["errors"], summary["errors"]
    assert session(store, CLAUDE) is not None
    assert index(store, claude / "settings.json")["errors"]  # named explicitly: read, and not a transcript


def test_claude_user_turn_results_come_before_its_words(store, tmp_path):
    """A user line may carry tool results and the user's words together (a prompt typed while the
    tool ran, delivered with its result; an interrupt notice): the results answer the calls before
    them and come first, as the shared Anthropic block reader already orders them. Before:
    ``claude-code`` stored the words first, so the assistant's call seemed answered by the user."""
    path = tmp_path / f"{CLAUDE}.jsonl"
    _write(path, [
        _claude("user", "u1", 0, {"role": "user", "content": "Run the tests"}),
        _claude("assistant", "a1", 1, _reply("claude-opus-4-8", [
            {"type": "tool_use", "id": "toolu_t", "name": "Bash", "input": {"command": "pytest"}}])),
        _claude("user", "u2", 2, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_t", "content": "3 passed"},
            {"type": "text", "text": "also run the linter"}]}),
    ])
    assert not index(store, path)["errors"]
    assert [(r["role"], r["content"]) for r in _rows(store, CLAUDE)][2:] == [
        ("tool", "3 passed"), ("user", "also run the linter")]


def test_codex_mcp_output_of_serialized_content_blocks_is_their_text(store, tmp_path):
    """codex-rs writes an MCP call's result into the rollout's ``function_call_output`` as the JSON
    text of its content blocks when it has no structured content (``serde_json::to_string(&content)``
    in ``as_function_call_output_payload``): ``[{"type":"text","text":"..."}]``. Before: stored as that
    JSON, every line break of the tool's text an escaped ``\\n`` inside one line."""
    path = tmp_path / f"rollout-2026-08-02T14-00-00-{THREAD}.jsonl"
    _write(path, _rollout_head()[:3] + [
        _line("01:00.000", "response_item", {"type": "function_call", "call_id": "call_m", "name": "tracker__search",
                                             "arguments": '{"q": "cart"}'}),
        _line("01:01.000", "response_item", {"type": "function_call_output", "call_id": "call_m", "output": json.dumps(
            [{"type": "text", "text": "#42 Crash on empty cart\n#57 Cart total off by one"},
             {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}], separators=(",", ":"))}),
        _line("01:02.000", "response_item", {"type": "function_call_output", "call_id": "call_x",
                                             "output": '["not", "blocks"]'}),  # any other JSON stays as written
    ])
    assert not index(store, path)["errors"]
    assert [r["content"] for r in _rows(store, THREAD) if r["role"] == "tool"] == [
        "#42 Crash on empty cart\n#57 Cart total off by one\n[image]", '["not", "blocks"]']
