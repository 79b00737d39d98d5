"""Variants seen in real files, fourth round: OpenHands (agent SDK history tree, ACP tool calls,
V0 event store and trajectories), pi, Qwen Code commands and Amp threads (fixtures reproduce the
writers' structure, never real content)."""

from __future__ import annotations

import json

from format_helpers import index, messages, roles, session

from hermes_store.sessions import detect_format

OH_SDK = "openhands/.openhands/conversations/7e1f2a3b4c5d4e6f8a9b0c1d2e3f4a5b"
OH_SDK_ID = "7e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"


def test_openhands_sdk_history_tree_acp_calls_and_thinking_blocks(store, format_fixtures):
    """SDK conversations since July 2026 are a tree (``parent_id``, ``leaf_event_id``): the active
    branch is read; ACP tool runs are a call and a result, ``thinking_blocks`` are reasoning and
    a conversation error is a system row."""
    base = format_fixtures / OH_SDK / "base_state.json"
    assert detect_format(base) == "openhands"
    assert index(store, base)["errors"] == []
    rows = messages(store, OH_SDK_ID)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "user", "assistant", "tool", "assistant",
                           "system"]
    assert rows[1]["content"] == "Check the current schema first."
    assert rows[4]["content"] == "use a shadow table instead"
    assert rows[5]["calls"] == [("edit", {"title": "Write migrations/002.sql", "file_path": "migrations/002.sql"},
                                 "acp_7")]
    assert rows[6]["content"] == "[diff] migrations/002.sql\nCREATE TABLE invoice_new (id int, due date);"
    assert rows[6]["tool_call_id"] == "acp_7"
    assert rows[7]["content"] == "Plan B: shadow table written."
    assert rows[8]["content"] == "[BudgetExceeded] max budget per task reached"
    assert "Plan A: add the column in place." not in [r["content"] for r in rows]
    assert session(store, OH_SDK_ID)["meta"]["abandoned_branch_events"] == 1


def test_openhands_sdk_head_moved_back_to_an_earlier_branch(store, format_fixtures):
    """A HEAD (``leaf_event_id``) navigated back to the first branch makes that branch the conversation."""
    base = format_fixtures / OH_SDK / "base_state.json"
    state = json.loads(base.read_text())
    state["leaf_event_id"] = "0b6f0d1e-0000-4000-8000-000000000004"
    base.write_text(json.dumps(state))
    assert index(store, base)["errors"] == []
    rows = messages(store, OH_SDK_ID)
    assert [r["content"] for r in rows][-1] == "Plan A: add the column in place."
    assert "use a shadow table instead" not in [r["content"] for r in rows]


OH_V0 = "openhands-events/.openhands/sessions/5c2e9a7f41d84b0e9f3a6b1c2d3e4f50"


def test_openhands_v0_event_store(store, format_fixtures):
    """The V0 file store: numbered event files with ``metadata.json``; every member file is read
    through the first event, system prompt, recall and state changes are not indexed."""
    folder = format_fixtures / OH_V0
    for member in ("events/0.json", "events/7.json", "metadata.json", "event_cache/0-25.json"):
        assert detect_format(folder / member) == "openhands-events"
    assert index(store, folder / "events" / "0.json")["errors"] == []
    sid = "5c2e9a7f41d84b0e9f3a6b1c2d3e4f50"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "assistant", "tool", "reasoning", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "why does load_orders() drop rows?\n[image]"
    assert rows[1]["content"] == "Let me look for a dropna call."
    assert rows[1]["calls"] == [("execute_bash", {"command": "grep -n dropna etl/load.py", "is_input": False,
                                                  "is_static": False}, "toolu_v0_1")]
    assert rows[2]["content"] == "12:    df = df.dropna(subset=['date'])" and rows[2]["tool_call_id"] == "toolu_v0_1"
    assert rows[3]["content"] == "The subset drop is deliberate but undocumented."
    assert rows[5]["content"].startswith("ERROR:\nInvalid `path`") and rows[5]["tool_call_id"] == "toolu_v0_3"
    assert rows[6]["content"] == "Line 12 drops rows whose date is null."
    stored = session(store, sid)
    assert stored["title"] == "Null dates in load_orders"
    assert stored["model"] == "anthropic/claude-sonnet-4-20250514"


def test_openhands_v0_member_alone_imports_nothing(store, format_fixtures):
    """A later event file is read through the first one: alone it adds no session."""
    summary = index(store, format_fixtures / OH_V0 / "events" / "5.json")
    assert summary["errors"] == [] and summary["messages_added"] == 0


def test_openhands_trajectory_export(store, format_fixtures):
    """The UI's ``trajectory-<id>.json`` (a JSON array of V0 events)."""
    path = format_fixtures / "openhands-trajectory/.downloads/trajectory-8d1e4f2a9b3c4d5e.json"
    assert detect_format(path) == "openhands-trajectory"
    assert index(store, path)["errors"] == []
    rows = messages(store, "8d1e4f2a9b3c4d5e")
    assert roles(rows) == ["user", "assistant", "tool", "tool", "assistant"]
    assert rows[0]["content"] == "add a --dry-run flag to sync.py"
    assert rows[1]["content"] == "I'll thread a dry_run argument through main."
    assert rows[1]["calls"][0][0] == "str_replace_editor" and rows[1]["calls"][0][2] == "toolu_tr_1"
    assert rows[2]["content"] == "The file sync.py has been edited."
    assert rows[3]["content"] == "Action rejected: not that file, use cli.py"
    assert rows[4]["content"] == "Added the flag to cli.py."


def test_openhands_evaluation_records_with_pair_history(store, format_fixtures):
    """Evaluation output JSONL: one session per record, early ``[action, observation]`` pairs."""
    path = format_fixtures / "openhands-trajectory/evaluation/output.jsonl"
    assert detect_format(path) == "openhands-trajectory"
    assert index(store, path)["errors"] == []
    for sid, task, reply in (("demo__repo-101", "fix the failing date parser", "Fixed the parser."),
                             ("demo__repo-102", "make the cache thread safe", "Added a lock.")):
        rows = messages(store, sid)
        assert roles(rows) == ["user", "assistant", "tool", "assistant"]
        assert rows[0]["content"] == task and rows[3]["content"] == reply
        assert rows[1]["calls"][0][:2] == ("run", {"command": "git status"})
        assert rows[2]["content"] == "fatal: not a git repository"
        assert rows[2]["tool_call_id"] == rows[1]["calls"][0][2]
        assert session(store, sid)["model"] == "gpt-4o-2024-05-13"


PI_V1 = "pi/.pi/agent/sessions/--home-zoe-cli--/2025-12-09T00-53-29-825Z_aaaa1111-0000-4000-8000-000000000001.jsonl"


def test_pi_version_1_branch_and_summary_messages(store, format_fixtures):
    """Version 1 headers name the forked-from file in ``branchedFrom``; version 2 ``hookMessage``
    is version 3's ``custom``; ``branchSummary`` / ``compactionSummary`` messages are system rows."""
    path = format_fixtures / PI_V1
    assert detect_format(path) == "pi"
    summary = index(store, path)
    assert summary["errors"] == []
    sid = "aaaa1111-0000-4000-8000-000000000001"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "assistant", "tool", "system", "user", "system", "system", "tool", "assistant"]
    assert rows[4]["content"] == "remember the todo list"
    assert rows[5]["content"] == "Tried a different approach first."
    assert rows[6]["content"] == "Earlier context compacted."
    assert session(store, sid)["parent_session_id"] == "bbbb2222-0000-4000-8000-000000000002"


QWEN_COMMANDS = "qwen-code/.qwen/projects/-home-li-depot/chats/4e5f6a7b-8c9d-4e0f-9a1b-2c3d4e5f6a7b.jsonl"


def test_qwen_slash_and_at_commands(store, format_fixtures):
    """``slash_command`` invocations are what the user typed (once, when a user record repeats it),
    their results what the command showed; an ``at_command``'s ``userText`` is the typed prompt of
    the user record after it, a failed one is kept with its error."""
    path = format_fixtures / QWEN_COMMANDS
    assert detect_format(path) == "qwen-code"
    assert index(store, path)["errors"] == []
    rows = messages(store, "4e5f6a7b-8c9d-4e0f-9a1b-2c3d4e5f6a7b")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "/about"),
        ("system", "[/about] about: cliVersion 0.8.1, osVersion linux, modelVersion qwen3-coder-plus"),
        ("user", "/stats"),
        ("system", "[/stats] Session stats: 0 turns, 0 tool calls"),
        ("user", "explain @src/depot.py\n[files read: src/depot.py]"),
        ("assistant", "Depot keeps the stock levels."),
        ("user", "and @nope.py?"),
        ("system", "[@ error] Path nope.py not found."),
        ("user", "/docs"),
        ("system", "[/docs] Opening documentation in your browser"),
    ]


def test_qwen_command_output_without_text_is_kept(store, tmp_path):
    """A command's output items that carry no ``text`` (the ``/goal`` status Qwen Code records as a
    ``goal_status`` item, an ``about`` box) are kept as their type and fields, not dropped."""
    import json

    sid = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d"
    base = {"sessionId": sid, "cwd": "/home/li/depot", "version": "0.21.0", "timestamp": "2026-11-04T08:00:00Z"}
    records = [
        {**base, "uuid": "u1", "parentUuid": None, "type": "system", "subtype": "slash_command",
         "systemPayload": {"phase": "result", "rawCommand": "/goal",
                           "outputHistoryItems": [{"type": "goal_status", "kind": "achieved",
                                                   "condition": "all depot tests pass", "iterations": 3,
                                                   "durationMs": 42000, "lastReason": "pytest exited 0"}]}},
        {**base, "uuid": "u2", "parentUuid": "u1", "type": "user",
         "message": {"role": "user", "parts": [{"text": "thanks"}]}},
    ]
    path = tmp_path / ".qwen" / "projects" / "-home-li-depot" / "chats" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, sid)] == [
        ("system", "[/goal] goal_status: kind achieved, condition all depot tests pass, iterations 3, "
                   "durationMs 42000, lastReason pytest exited 0"),
        ("user", "thanks")]


AMP_BASH = "amp/.local/share/amp/threads/T-7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f.json"


def test_amp_manual_bash_server_tools_and_flat_results(store, format_fixtures):
    """A command the user ran (``manual_bash_invocation`` in an ``info`` message) is a bash tool
    row with its output; ``server_tool_use`` is a call; a flat ``output`` result is read."""
    path = format_fixtures / AMP_BASH
    assert detect_format(path) == "amp"
    assert index(store, path)["errors"] == []
    rows = messages(store, "T-7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f")
    assert roles(rows) == ["tool", "user", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "$ git branch --show-current\nrelease/2.4" and rows[0]["tool_name"] == "bash"
    assert [c[0] for c in rows[2]["calls"]] == ["web_search", "Bash"]
    assert rows[3]["content"] == "a1b2c3 fix the retry loop" and rows[3]["tool_call_id"] == "toolu_r1"
