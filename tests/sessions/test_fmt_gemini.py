"""Gemini CLI and Qwen Code: chat recordings (JSON and JSONL), prompt logs, checkpoints."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format
from hermes_store.sessions.importers import candidates

PROJECT = "4c9e1f0a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e"
GEMINI = f"gemini-cli/.gemini/tmp/{PROJECT}"
LEGACY = f"{GEMINI}/chats/session-2025-09-14T10-02-3f2a9c1e.json"
JSONL = f"{GEMINI}/chats/session-2026-01-20T08-15-7c1d2e3f.jsonl"
SUBAGENT = (f"{GEMINI}/chats/7c1d2e3f-0a9b-4c8d-b7e6-f5a4b3c2d1e0/"
            "e5f6a7b8-1111-4222-8333-944455556666.jsonl")
LOGS = f"gemini-cli-logs/.gemini/tmp/{PROJECT}/logs.json"
CHECKPOINT = f"gemini-cli-checkpoint/.gemini/tmp/{PROJECT}/checkpoint-before%20refactor.json"
OLD_CHECKPOINT = f"gemini-cli-checkpoint/.gemini/tmp/{PROJECT}/checkpoint-old.json"
QWEN = "qwen-code/.qwen/projects/-home-li-shop/chats/5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d.jsonl"
QWEN_PROJECT = "0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2"
QWEN_LEGACY = f"qwen-code-legacy/.qwen/tmp/{QWEN_PROJECT}/chats/session-2025-08-02T12-00-c0ffee00.json"
QWEN_LOGS = f"qwen-code-logs/.qwen/tmp/{QWEN_PROJECT}/logs.json"


@pytest.mark.parametrize("relpath, expected", [
    (LEGACY, "gemini-cli"), (JSONL, "gemini-cli"), (SUBAGENT, "gemini-cli"),
    (LOGS, "gemini-cli-logs"), (CHECKPOINT, "gemini-cli-checkpoint"),
    (OLD_CHECKPOINT, "gemini-cli-checkpoint"), (QWEN, "qwen-code"), (QWEN_LEGACY, "qwen-code-legacy"),
    (QWEN_LOGS, "qwen-code-logs"),
])
def test_detected(format_fixtures, relpath, expected):
    assert detect_format(format_fixtures / relpath) == expected


def test_legacy_json_session(store, format_fixtures):
    summary = index(store, format_fixtures / LEGACY)
    assert summary["errors"] == []
    sid = "3f2a9c1e-6b7d-4e21-9a0f-58c4d2b1e7aa"
    row = session(store, sid)
    assert row["origin_format"] == "gemini-cli" and row["source"] == "gemini-cli"
    assert row["title"] == "Fix ZeroDivisionError in parser"
    assert row["started_at"] == pytest.approx(ts("2025-09-14T10:02:11.402Z"))
    assert row["ended_at"] == pytest.approx(ts("2025-09-14T10:06:48.977Z"))
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "tool", "system", "user", "assistant"]
    assert rows[0]["content"] == "Why does `make test` fail on the parser module?"
    assert rows[1]["content"] == "Locating the parser: I should read parser.py before guessing."
    assert rows[2]["content"] == ""
    assert rows[2]["calls"] == [
        ("read_file", {"absolute_path": "/home/sam/calc/parser.py"}, "read_file-1757844139015-5c1f"),
        ("run_shell_command", {"command": "make test", "description": "Run the tests"},
         "run_shell_command-1757844139016-9a2b")]
    assert rows[3]["tool_name"] == "read_file" and rows[3]["tool_call_id"] == "read_file-1757844139015-5c1f"
    assert rows[3]["content"].startswith("def parse(tokens):")
    assert rows[3]["timestamp"] == pytest.approx(ts("2025-09-14T10:02:19.400Z"))
    assert rows[4]["content"].startswith("Command exited with code 2")
    assert rows[5]["content"] == "Request cancelled."
    # the prompt as shown (displayContent), then the attachment, not its bytes
    assert rows[6]["content"] == "Here is the traceback screenshot @shot.png\n[image/png]"
    assert rows[7]["content"].startswith("`parse` divides by")
    assert rows[7]["timestamp"] == pytest.approx(ts("2025-09-14T10:06:48.977Z"))


def test_jsonl_session_replays_updates_and_rewinds(store, format_fixtures):
    summary = index(store, format_fixtures / JSONL)
    errors = summary["errors"]
    assert len(errors) == 1 and errors[0]["line"] == 13 and "incomplete last line" in errors[0]["error"]
    sid = "7c1d2e3f-0a9b-4c8d-b7e6-f5a4b3c2d1e0"
    row = session(store, sid)
    assert row["title"] == "Rename calc package to abacus"
    assert row["ended_at"] == pytest.approx(ts("2026-01-20T08:17:45.001Z"))
    rows = messages(store, sid)
    # g1 was recorded twice (the second time with its tool call); u2/g2 were rewound away
    assert roles(rows) == ["user", "assistant", "tool", "user", "reasoning", "assistant", "tool", "system"]
    assert rows[0]["content"] == "rename the `calc` package to `abacus`"
    assert rows[1]["content"] == "I'll look at the layout first."
    assert rows[1]["calls"] == [("glob", {"pattern": "calc/**/*.py"}, "glob-1768896912880-aa01")]
    assert rows[2]["content"] == "calc/__init__.py\ncalc/parser.py" and rows[2]["tool_name"] == "glob"
    assert rows[3]["content"] == "go ahead with `abacus` and update the imports 🚀"
    assert rows[3]["timestamp"] == pytest.approx(ts("2026-01-20T08:17:30.250Z"))
    assert rows[4]["content"] == "Planning the rename: Move the directory, then rewrite imports."
    assert rows[5]["calls"][0][:2] == ("run_shell_command", {"command": "git mv calc abacus"})
    assert rows[6]["content"] == "[cancelled]" and rows[6]["tool_name"] == "run_shell_command"
    assert rows[7]["content"] == "Tool call cancelled by user."
    assert all("counting" not in r["content"] for r in rows)


def test_subagent_is_a_child_session(store, format_fixtures):
    assert index(store, format_fixtures / SUBAGENT)["errors"] == []
    row = session(store, "e5f6a7b8-1111-4222-8333-944455556666")
    assert row["parent_session_id"] == "7c1d2e3f-0a9b-4c8d-b7e6-f5a4b3c2d1e0"
    assert row["workspace"] == "/home/sam/calc"
    rows = messages(store, "e5f6a7b8-1111-4222-8333-944455556666")
    assert roles(rows) == ["user", "assistant"]
    assert rows[1]["content"].startswith("3 files import calc")


def test_prompt_log(store, format_fixtures):
    assert index(store, format_fixtures / LOGS)["errors"] == []
    rows = messages(store, "3f2a9c1e-6b7d-4e21-9a0f-58c4d2b1e7aa:prompts")
    assert [r["content"] for r in rows] == [
        "Why does `make test` fail on the parser module?", "/chat save before refactor",
        "Here is the traceback screenshot @shot.png"]
    assert roles(rows) == ["user"] * 3
    assert rows[2]["timestamp"] == pytest.approx(ts("2025-09-14T10:05:02.200Z"))
    assert [r["content"] for r in messages(store, "0b0b0b0b-aaaa-4bbb-8ccc-dddddddddddd:prompts")] == ["/quit"]
    meta = session(store, "3f2a9c1e-6b7d-4e21-9a0f-58c4d2b1e7aa:prompts")["meta"]
    assert meta["prompt_log_of"] == "3f2a9c1e-6b7d-4e21-9a0f-58c4d2b1e7aa"


def test_checkpoints(store, format_fixtures):
    assert index(store, format_fixtures / CHECKPOINT)["errors"] == []
    sid = f"gemini-checkpoint:{PROJECT}:before refactor"
    row = session(store, sid)
    assert row["title"] == "checkpoint before refactor" and row["meta"]["authType"] == "oauth-personal"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "assistant", "user", "reasoning", "assistant", "tool", "assistant"]
    assert rows[3]["content"] == "Checking the parser."
    assert rows[4]["calls"] == [("read_file", {"absolute_path": "/home/sam/calc/parser.py"},
                                 "read_file-1757844139015-5c1f")]
    assert rows[5]["tool_call_id"] == "read_file-1757844139015-5c1f" and rows[5]["tool_name"] == "read_file"
    assert index(store, format_fixtures / OLD_CHECKPOINT)["errors"] == []
    old = messages(store, f"gemini-checkpoint:{PROJECT}:old")
    assert [(r["role"], r["content"]) for r in old] == [
        ("user", "summarise README.md"), ("assistant", "It describes a calculator.")]


def test_reindex_is_idempotent(store, format_fixtures):
    first = index(store, format_fixtures / LEGACY)
    again = index(store, format_fixtures / LEGACY)
    assert first["messages_added"] == 8 and again["messages_added"] == 0
    assert len(messages(store, "3f2a9c1e-6b7d-4e21-9a0f-58c4d2b1e7aa")) == 8


def test_qwen_follows_the_active_branch(store, format_fixtures):
    summary = index(store, format_fixtures / QWEN)
    assert summary["errors"] == []
    sid = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
    row = session(store, sid)
    assert row["origin_format"] == "qwen-code" and row["source"] == "qwen-code"
    assert row["title"] == "cart tests" and row["workspace"] == "/home/li/shop"
    assert row["model"] == "qwen3-coder-flash"
    assert row["meta"]["abandoned_branch_records"] == 2  # r5/r6, rewound
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "user", "system", "assistant"]
    assert rows[0]["content"] == "列出 src 里的测试文件"
    assert rows[1]["content"] == "先看目录结构。"
    assert rows[2]["content"] == "我来查一下。"
    assert rows[2]["calls"] == [("list_directory", {"path": "/home/li/shop/src"}, "call_qw_1")]
    assert rows[3]["tool_name"] == "list_directory" and rows[3]["content"] == "cart.test.ts\nuser.test.ts"
    assert rows[5]["content"] == "给 cart.test.ts 加一个空购物车的用例"
    assert rows[6]["content"] == "Background task shell-1 completed"
    assert rows[7]["timestamp"] == pytest.approx(ts("2026-02-03T09:02:31.000Z"))
    assert all("删除" not in r["content"] for r in rows)


def test_qwen_legacy_layout(store, format_fixtures):
    assert index(store, format_fixtures / QWEN_LEGACY)["errors"] == []
    row = session(store, "c0ffee00-1234-4abc-9def-0123456789ab")
    assert row["origin_format"] == "qwen-code-legacy" and row["source"] == "qwen-code"
    assert [(r["role"], r["content"]) for r in messages(store, "c0ffee00-1234-4abc-9def-0123456789ab")] == [
        ("user", "hello qwen"), ("assistant", "Hello! How can I help?")]


def test_qwen_prompt_log(store, format_fixtures):
    assert index(store, format_fixtures / QWEN_LOGS)["errors"] == []
    sid = "c0ffee00-1234-4abc-9def-0123456789ab:prompts"
    assert session(store, sid)["source"] == "qwen-code"
    assert [r["content"] for r in messages(store, sid)] == ["hello qwen", "/compress"]


def test_qwen_look_alike_is_qwen_not_claude(tmp_path):
    """Claude's envelope (uuid/parentUuid/sessionId/type) with Gemini ``parts``: Qwen Code."""
    path = tmp_path / "chat.jsonl"
    path.write_text(
        '{"uuid": "a", "parentUuid": null, "sessionId": "s", "type": "user", "timestamp": '
        '"2025-09-01T10:00:00Z", "message": {"role": "user", "parts": [{"text": "hi"}]}}\n'
        '{"uuid": "b", "parentUuid": "a", "sessionId": "s", "type": "assistant", "message": '
        '{"role": "model", "parts": [{"text": "hello"}]}}\n', encoding="utf-8")
    ranked = dict(candidates(path))
    assert detect_format(path) == "qwen-code"
    assert ranked.get("claude-code", 0) < 0.5


def test_a_later_rewind_replaces_what_was_imported(store, format_fixtures):
    """Rewinding drops messages already indexed: the file is re-imported whole, nothing skipped."""
    import json

    path = format_fixtures / JSONL
    index(store, path)
    text = path.read_text(encoding="utf-8")
    text = text[: text.rindex("\n") + 1]  # the writer finished: drop the half line
    extra = [{"$rewindTo": "u3"},
             {"id": "u4", "timestamp": "2026-01-20T08:20:00.000Z", "type": "user", "content": "use `tally`"},
             {"id": "g5", "timestamp": "2026-01-20T08:20:05.000Z", "type": "gemini", "content": "Renaming to `tally`."}]
    path.write_text(text + "".join(json.dumps(e) + "\n" for e in extra), encoding="utf-8")
    again = index(store, path)
    assert again["errors"] == []
    rows = messages(store, "7c1d2e3f-0a9b-4c8d-b7e6-f5a4b3c2d1e0")
    assert roles(rows) == ["user", "assistant", "tool", "user", "assistant"]
    assert [r["content"] for r in rows][-2:] == ["use `tally`", "Renaming to `tally`."]
    assert all("abacus and update the imports" not in r["content"] for r in rows)
    assert index(store, path)["messages_added"] == 0  # unchanged: nothing re-read twice
