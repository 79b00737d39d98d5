"""Claude Code as it really is: subagent files, titles from other lines and files, time order."""

from __future__ import annotations

import json
import shutil

import pytest
from sess_helpers import FIXTURES, index_json, write_jsonl

from hermes_store.sessions import SessionIndex, index_paths

PROJECT = FIXTURES / "claude_code" / "projects" / "-home-ana-api"
MAIN = "5b1e9c3a-0d2f-4a7b-8c6d-1e2f3a4b5c6d"
OLD = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
FILES = {
    "main": PROJECT / f"{MAIN}.jsonl",
    "sub": PROJECT / MAIN / "subagents" / "agent-a1b2c3d.jsonl",
    "old": PROJECT / f"{OLD}.jsonl",
    "flat": PROJECT / "agent-7c4e1f02.jsonl",
    "sums": PROJECT / "0f0e0d0c-0b0a-4909-8807-060504030201.jsonl",
}


def _dump(db) -> dict:
    sessions = db.query("SELECT id, origin_format, source, title, model, workspace, started_at, ended_at,"
                        " parent_session_id, message_count, meta FROM sessions ORDER BY id")
    messages = db.query("SELECT session_id, seq, role, content, tool_name, tool_calls, tool_call_id,"
                        " timestamp FROM messages ORDER BY session_id, seq")
    return {"sessions": sessions, "messages": messages}


@pytest.fixture
def project(tmp_path):
    target = tmp_path / "projects" / "-home-ana-api"
    shutil.copytree(PROJECT, target)
    return {name: target / path.relative_to(PROJECT) for name, path in FILES.items()}


def test_every_file_keeps_its_messages(store, project):
    summary = index_paths(store, [project["main"].parent])
    assert summary["errors"] == [] and summary["files"] == 5
    index = SessionIndex(store)
    assert summary["sessions_added"] == 4 and summary["messages_added"] == 20
    child = index.get_session(f"{MAIN}:agent-a1b2c3d")
    assert child["parent_session_id"] == MAIN and child["message_count"] == 5
    assert child["meta"]["agentId"] == "a1b2c3d" and child["model"] == "claude-haiku-4-5-20251001"
    flat = index.get_session(f"{OLD}:agent-7c4e1f02")
    assert flat["parent_session_id"] == OLD and flat["message_count"] == 2
    assert index.get_session(MAIN)["message_count"] == 10
    assert index.get_session(OLD)["message_count"] == 3
    # the summaries-only file creates no session of its own
    assert store.scalar("SELECT COUNT(*) FROM sessions WHERE id LIKE '0f0e0d0c%'") == 0


@pytest.mark.parametrize("order", [
    ("main", "sub", "old", "flat", "sums"),
    ("sums", "flat", "old", "sub", "main"),
    ("sub", "main", "sums", "flat", "old"),
    ("flat", "sums", "sub", "old", "main"),
])
def test_every_walk_order_gives_the_same_store(home, project, order, tmp_path):
    reference = home.open_db()
    try:
        index_paths(reference, [project[name] for name in FILES])
        expected = _dump(reference)
    finally:
        reference.close()
    for separate_runs in (False, True):
        from hermes_store.db import Database

        db = Database(tmp_path / f"order-{separate_runs}-{'-'.join(order)}.db")
        try:
            if separate_runs:
                for name in order:
                    index_paths(db, [project[name]])
            else:
                index_paths(db, [project[name] for name in order])
            assert _dump(db) == expected
            again = index_paths(db, [project[name] for name in reversed(order)])
            assert again["messages_added"] == 0 and again["sessions_added"] == 0
            assert _dump(db) == expected  # idempotent
        finally:
            db.close()


def test_roles_tools_and_thinking(store, project):
    index_paths(store, [project["main"]])
    msgs = SessionIndex(store).get_messages(MAIN)
    roles = [m["role"] for m in msgs]
    assert roles == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "system",
                     "assistant", "assistant", "tool"]
    assert msgs[1]["content"].startswith("The login handler lives in auth/routes.py")
    assert json.loads(msgs[2]["tool_calls"])[0]["function"]["name"] == "Read"
    assert msgs[3]["tool_name"] == "Read" and "Blueprint" in msgs[3]["content"]
    assert msgs[5]["tool_name"] == "Task" and "test_login_bad_password" in msgs[5]["content"]
    assert msgs[7]["content"].startswith("Added a token bucket")  # redacted thinking: no text, no row
    top_call = json.loads(msgs[8]["tool_calls"])[0]  # a top-level tool_use line
    assert top_call["function"]["name"] == "Bash" and top_call["id"] == "toolu_bash9"
    assert msgs[9]["tool_name"] == "Bash" and msgs[9]["content"] == "2 passed in 0.41s"


def test_started_at_is_the_earliest_timestamp(store, project):
    index_paths(store, [project["main"]])
    session = SessionIndex(store).get_session(MAIN)
    from hermes_store.sessions.importers.base import parse_timestamp

    assert session["started_at"] == pytest.approx(parse_timestamp("2026-01-20T11:57:10Z"))
    assert session["ended_at"] == pytest.approx(parse_timestamp("2026-01-20T11:59:12Z"))


def test_titles_custom_over_ai_over_summary(store, project):
    index_paths(store, [project["main"].parent])
    index = SessionIndex(store)
    assert index.get_session(MAIN)["title"] == "login rate limiter"
    assert index.get_session(OLD)["title"] == "Nginx reverse proxy config"  # its own summary line


@pytest.mark.parametrize("summaries_first", [True, False])
def test_summary_in_another_file_titles_the_leaf_s_session(store, tmp_path, summaries_first):
    folder = tmp_path / "proj"
    lines = [json.loads(line) for line in FILES["old"].read_text().splitlines()][1:]  # no summary
    write_jsonl(folder / f"{OLD}.jsonl", lines)
    write_jsonl(folder / "11111111-2222-4333-8444-555555555555.jsonl",
                [{"type": "summary", "summary": "Proxy setup", "leafUuid": "o-3"}])
    files = sorted(folder.iterdir(), reverse=not summaries_first)
    summary = index_paths(store, files)
    assert summary["sessions_added"] == 1 and summary["errors"] == []
    assert SessionIndex(store).get_session(OLD)["title"] == "Proxy setup"


def test_appended_title_keeps_precedence(store, project):
    index_paths(store, [project["main"]])
    write_jsonl(project["main"], [{"type": "ai-title", "aiTitle": "a later ai title", "sessionId": MAIN}],
                mode="a")
    index_paths(store, [project["main"]])
    assert SessionIndex(store).get_session(MAIN)["title"] == "login rate limiter"  # custom wins
    write_jsonl(project["main"], [{"type": "custom-title", "customTitle": "renamed", "sessionId": MAIN}],
                mode="a")
    index_paths(store, [project["main"]])
    assert SessionIndex(store).get_session(MAIN)["title"] == "renamed"


def test_unknown_line_type_reported_once(run, tmp_path):
    path = tmp_path / f"{MAIN}.jsonl"
    lines = [json.loads(line) for line in FILES["main"].read_text().splitlines()]
    write_jsonl(path, [*lines, {"type": "brand-new-kind", "sessionId": MAIN},
                       {"type": "brand-new-kind", "sessionId": MAIN}])
    code, summary = index_json(run, path)
    assert code == 0 and summary["messages_added"] == 10
    assert [(e["line"], "brand-new-kind" in e["error"]) for e in summary["errors"]] == [(len(lines) + 1, True)]


def test_reasoning_is_searched_only_when_asked_for(run, project):
    index_json(run, project["main"], project["sub"])

    def roles(*args):
        result = json.loads(run("sessions", "search", "--json", *args).stdout)
        return sorted({row["role"] for row in result["results"]})

    assert roles('"login handler"') == ["assistant"]  # the thinking block says it too
    assert roles("--role", "reasoning", '"login handler"') == ["reasoning"]
    # the thinking block names it, and (issue 23: tool calls are searchable) so does the Read call
    assert roles("auth/routes.py") == ["assistant"]
    assert roles("--role", "reasoning", "auth/routes.py") == ["reasoning"]
    assert roles("--role", "reasoning,assistant", "token bucket") == ["assistant", "reasoning"]


def test_session_search_leaves_reasoning_out_unless_asked(run, home, project):
    from hermes_store.tools import handle_tool_call

    index_json(run, project["sub"])

    def matched(**args):
        payload = json.loads(handle_tool_call("session_search", {"query": "report the two test names", **args},
                                              home=home))
        return [r.get("matched_role") for r in payload.get("results", [])]

    assert "reasoning" not in matched()
    assert matched(role_filter="reasoning") == ["reasoning"]


def test_session_search_reads_a_subagent_session_by_id(run, home, project):
    from hermes_store.tools import handle_tool_call

    index_json(run, project["sub"])
    payload = json.loads(handle_tool_call("session_search", {"session_id": f"{MAIN}:agent-a1b2c3d"}, home=home))
    assert payload["success"] is True and payload["message_count"] == 4  # reasoning left out


def test_session_search_read_and_scroll_leave_reasoning_out_unless_asked(run, home, project):
    from hermes_store.tools import handle_tool_call

    index_json(run, project["sub"])
    sid = f"{MAIN}:agent-a1b2c3d"

    def call(**args):
        return json.loads(handle_tool_call("session_search", {"session_id": sid, **args}, home=home))

    read = call()
    assert read["message_count"] == 4 and "reasoning" not in {m["role"] for m in read["messages"]}
    asked = call(role_filter="user,assistant,tool,reasoning")
    assert asked["message_count"] == 5 and "reasoning" in {m["role"] for m in asked["messages"]}
    anchor = read["messages"][0]["id"]
    scroll = call(around_message_id=anchor, window=5)
    assert "reasoning" not in {m["role"] for m in scroll["messages"]}
