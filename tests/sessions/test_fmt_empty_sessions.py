"""Files an agent writes before the session's first message (a session started and left, a new
chat saved empty): before, ``unknown format (closest: <the agent> 0.95: it read no messages)`` -- an
error on a file the agent wrote. Now it is said once (a notice), no empty session is stored, and
once the agent writes a message the file is read whole, session fields included."""

from __future__ import annotations

import json

from format_helpers import index, messages, session

CODEX = "019b0000-aaaa-7bbb-8ccc-000000000001"
META = {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
        "payload": {"id": CODEX, "timestamp": "2026-01-01T00:00:00Z", "cwd": "/srv/tide", "originator": "codex_cli_rs",
                    "cli_version": "0.77.0"}}
TURN = {"timestamp": "2026-01-01T00:00:01Z", "type": "turn_context",
        "payload": {"cwd": "/srv/tide", "model": "gpt-5-codex", "approval_policy": "on-request"}}
PROMPT = {"timestamp": "2026-01-01T00:05:00Z", "type": "response_item",
          "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "chart the tides"}]}}


def _lines(*objs):
    return "".join(json.dumps(o) + "\n" for o in objs)


def test_a_codex_rollout_without_a_message_is_said_then_read_when_it_grows(store, tmp_path):
    path = tmp_path / "sessions/2026/01/01" / f"rollout-2026-01-01T00-00-00-{CODEX}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(_lines(META, TURN), encoding="utf-8")
    first = index(store, path)
    assert first["errors"] == [] and first["sessions_added"] == 0
    assert "no messages" in first["notices"][0]["notice"]
    assert session(store, CODEX) is None
    with path.open("a", encoding="utf-8") as handle:
        handle.write(_lines(PROMPT))
    second = index(store, path)
    assert second["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, CODEX)] == [("user", "chart the tides")]
    row = session(store, CODEX)
    assert (row["workspace"], row["model"]) == ("/srv/tide", "gpt-5-codex")


def test_an_empty_gemini_session_and_a_claude_code_snapshot_only_file(store, tmp_path):
    chats = tmp_path / ".gemini/tmp/abc/chats"
    chats.mkdir(parents=True)
    (chats / "session-2026-01-01T00-00-e1.json").write_text(json.dumps(
        {"sessionId": "g-empty", "projectHash": "abc", "startTime": "2026-01-01T00:00:00.000Z",
         "lastUpdated": "2026-01-01T00:00:00.000Z", "messages": []}), encoding="utf-8")
    (chats / "session-2026-01-01T00-00-e2.jsonl").write_text(json.dumps(
        {"sessionId": "g-empty2", "projectHash": "abc", "startTime": "2026-01-01T00:00:00.000Z",
         "lastUpdated": "2026-01-01T00:00:00.000Z", "kind": "main"}) + "\n", encoding="utf-8")
    project = tmp_path / ".claude/projects/-srv-tide"
    project.mkdir(parents=True)
    (project / "11111111-0000-4000-8000-000000000009.jsonl").write_text(json.dumps(
        {"type": "file-history-snapshot", "messageId": "m1", "isSnapshotUpdate": False,
         "snapshot": {"messageId": "m1", "trackedFileBackups": {}, "timestamp": "2026-01-01T00:00:00Z"}}) + "\n",
        encoding="utf-8")
    for folder in (chats, project):
        summary = index(store, folder)
        assert summary["errors"] == [] and summary["sessions_added"] == 0
        assert summary["notices"] and all("no messages" in n["notice"] for n in summary["notices"])


def test_kimi_copilot_and_qwen_sessions_left_before_the_first_prompt(store, tmp_path):
    """Kimi CLI's context of its bookkeeping lines only, a Copilot CLI event log of
    ``session.start`` only (Copilot writes it when it starts), a Qwen Code recording of system
    records only: each said once, nothing stored, no error."""
    kimi = tmp_path / ".kimi/sessions/2c4e/0e2d4c6b-8a9f-4b1c-9d2e-3f4a5b6c7d8e/context.jsonl"
    kimi.parent.mkdir(parents=True)
    kimi.write_text(_lines({"role": "_system_prompt", "content": "You are Kimi"}, {"role": "_checkpoint", "id": 0}),
                    encoding="utf-8")
    copilot = tmp_path / ".copilot/session-state/7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0e/events.jsonl"
    copilot.parent.mkdir(parents=True)
    copilot.write_text(_lines({"type": "session.start", "id": "e1", "parentId": None,
                               "timestamp": "2026-01-01T00:00:00.000Z",
                               "data": {"sessionId": "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0e", "version": 1,
                                        "producer": "copilot-agent", "copilotVersion": "0.0.350",
                                        "startTime": "2026-01-01T00:00:00.000Z", "context": {"cwd": "/srv/tide"}}}),
                       encoding="utf-8")
    qwen = tmp_path / ".qwen/projects/-srv-tide/chats/5a6b7c8d-0000-4a1b-8c2d-3e4f5a6b7c8d.jsonl"
    qwen.parent.mkdir(parents=True)
    qwen.write_text(_lines({"uuid": "r1", "parentUuid": None, "sessionId": "5a6b7c8d-0000-4a1b-8c2d-3e4f5a6b7c8d",
                            "timestamp": "2026-01-01T00:00:00Z", "type": "system", "subtype": "ui_telemetry",
                            "cwd": "/srv/tide", "version": "0.9.0", "systemPayload": {"uiEvent": {}}}),
                    encoding="utf-8")
    for path in (kimi, copilot, qwen):
        summary = index(store, path)
        assert summary["errors"] == [] and summary["sessions_added"] == 0, path
        assert "no messages" in summary["notices"][0]["notice"]


def test_opencode_goose_amp_and_pi_sessions_with_nothing_said(store, tmp_path):
    """An OpenCode session the TUI opened (its info file, no message files), a Goose session file of
    its metadata line, an Amp thread saved with ``messages: []``, a pi session header alone."""
    opencode = tmp_path / ".local/share/opencode/storage/session/proj1/ses_4b1c2d3e4ffeA1b2C3d4E5f6G8.json"
    opencode.parent.mkdir(parents=True)
    opencode.write_text(json.dumps({"id": "ses_4b1c2d3e4ffeA1b2C3d4E5f6G8", "version": "0.3.0", "projectID": "proj1",
                                    "directory": "/srv/tide", "title": "New session - 2026-01-01T00:00:00.000Z",
                                    "time": {"created": 1767225600000, "updated": 1767225600000}}), encoding="utf-8")
    goose = tmp_path / ".local/share/goose/sessions/20260101_120000.jsonl"
    goose.parent.mkdir(parents=True)
    goose.write_text(_lines({"working_dir": "/srv/tide", "description": "", "schedule_id": None, "message_count": 0,
                             "total_tokens": None}), encoding="utf-8")
    amp = tmp_path / ".local/share/amp/threads/T-7c1d2e3f-0000-4000-8000-000000000001.json"
    amp.parent.mkdir(parents=True)
    amp.write_text(json.dumps({"v": 1, "id": amp.stem, "created": 1767225600000, "messages": [],
                               "env": {"initial": {"trees": []}}}), encoding="utf-8")
    pi = tmp_path / ".pi/agent/sessions/--srv-tide--/2026-01-01T00-00-00-000Z_0d9c8b7a-6e5f-4d3c-2b1a-0f9e8d7c6b5b.jsonl"
    pi.parent.mkdir(parents=True)
    pi.write_text(_lines({"type": "session", "version": 3, "id": "0d9c8b7a-6e5f-4d3c-2b1a-0f9e8d7c6b5b",
                          "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/srv/tide"}), encoding="utf-8")
    for path in (opencode, goose, amp, pi):
        summary = index(store, path)
        assert summary["errors"] == [] and summary["sessions_added"] == 0, path
        assert "nothing to import" in summary["notices"][0]["notice"]


def test_grok_and_factory_droid_sessions_with_nothing_said(store, tmp_path):
    """A Grok CLI history holding only its system prompt (before: claimed by the generic Hermes JSONL
    reader as a session named ``chat_history`` holding the system prompt), a Factory Droid session
    of its ``session_start`` line only (before: ``unknown format``)."""
    grok = tmp_path / ".grok/sessions/%2Fsrv%2Ftide/0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c/chat_history.jsonl"
    grok.parent.mkdir(parents=True)
    grok.write_text(_lines({"type": "system", "content": "You are Grok, a coding agent."}), encoding="utf-8")
    droid = tmp_path / ".factory/sessions/-srv-tide/3c2b1a09-8f7e-4d6c-b5a4-938271605f4f.jsonl"
    droid.parent.mkdir(parents=True)
    droid.write_text(_lines({"type": "session_start", "id": droid.stem, "title": "New session", "owner": "ana",
                             "version": 2, "cwd": "/srv/tide"}), encoding="utf-8")
    for path in (grok, droid):
        summary = index(store, path)
        assert summary["errors"] == [] and summary["sessions_added"] == 0, path
        assert "nothing to import" in summary["notices"][0]["notice"]


def test_copilot_chat_cline_sdk_and_copilot_history_saved_before_anything_was_said(store, tmp_path):
    """VS Code saves every Copilot chat it opens (``requests: []``), the Cline SDK its session when it
    starts (``messages: []``), Copilot CLI's legacy history an empty timeline: before, each was
    ``unknown format``."""
    chat = tmp_path / "workspaceStorage/3f7a/chatSessions/11111111-2222-4333-8444-555555555556.json"
    chat.parent.mkdir(parents=True)
    chat.write_text(json.dumps({"version": 3, "requesterUsername": "ana", "responderUsername": "GitHub Copilot",
                                "initialLocation": "panel", "requests": [], "sessionId": chat.stem,
                                "creationDate": 1767225600000, "lastMessageDate": 1767225600000}), encoding="utf-8")
    cline = tmp_path / ".cline/data/sessions/sess_01JD7QK4M3/sess_01JD7QK4M3.messages.json"
    cline.parent.mkdir(parents=True)
    cline.write_text(json.dumps({"version": 1, "updated_at": "2026-01-01T00:00:00.000Z", "agent": "lead",
                                 "sessionId": "sess_01JD7QK4M3", "messages": []}), encoding="utf-8")
    history = tmp_path / ".copilot/history-session-state/session_abc-1.json"
    history.parent.mkdir(parents=True)
    history.write_text(json.dumps({"sessionId": "abc-1", "startTime": "2026-01-01T00:00:00.000Z",
                                   "chatMessages": [], "timeline": []}), encoding="utf-8")
    for path in (chat, cline, history):
        summary = index(store, path)
        assert summary["errors"] == [] and summary["sessions_added"] == 0, path
        assert "nothing to import" in summary["notices"][0]["notice"]
