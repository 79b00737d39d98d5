"""Variants seen in real files, ninth round: Aider (reasoning models, architect hand-offs), the
OpenCode-family databases (Kilo Code, channel builds), Copilot Chat operation logs, Factory Droid,
Cline / Roo editor state and XML-era calls, Grok CLI streaming JSON, Hermes state.db thinking and a
session continued in a newer store. Fixtures are built here and reproduce the writers' structure,
never real content."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from format_helpers import index, messages, session, ts

from hermes_store.sessions import index_paths
from hermes_store.sessions.importers import aider

TAG = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"


def _sessions(store) -> list[str]:
    return [r["id"] for r in store.query("SELECT id FROM sessions ORDER BY started_at")]


def _history(*runs: str) -> str:
    return "".join(runs)


RUN_ONE = (
    "\n# aider chat started at 2026-03-02 14:05:11\r\n\r\n"
    "> Aider v0.86.1  \r\n> Model: openai/qwen3 with whole edit format  \r\n\r\n"
    "#### hi there  \r\n\r\n"
    f"<{TAG}>\r\n\r\nThe user said hi.\r\n\r\nI should greet briefly.\r\n\r\n</{TAG}>\r\n\r\n"
    "Hello! What should we change?\r\n\r\n"
    "#### explain the parser  \r\n\r\n"
    f"<{TAG}>\r\n\r\nStart with the tokenizer.\r\n\r\n> ^C KeyboardInterrupt  \r\n"
)
RUN_TWO = (
    "\n# aider chat started at 2026-03-03 09:00:00\n\n"
    "#### fix the off-by-one  \n\n"
    "<think>\nThe loop stops one early.\n</think>\n\nFixed: `range(n + 1)`.\n\n"
    "> Applied edit to loop.py  \n\n"
    "#### and the docs  \n\n"
    "Looking at the docs.\n</think>\n\nUpdated README.md.\n\n"
)


def test_aider_reasoning_model_thinking_is_a_reasoning_row(store, tmp_path):
    """A reasoning model's reply opens with its thinking: aider writes the reasoning the API
    returned apart inside ``<thinking-content-7bbe…>`` tags (``reasoning_tags.py``,
    ``format_reasoning_content``; ``ai_output`` writes ``partial_response_content`` whole), a
    model that thinks in its text inside ``<think>`` (sometimes without the opening tag). Before:
    the thinking and its tags were stored as the assistant's reply. Windows line ends too; a reply
    cut off by ^C while thinking is thinking only."""
    path = tmp_path / "proj" / ".aider.chat.history.md"
    path.parent.mkdir()
    path.write_bytes(_history(RUN_ONE, RUN_TWO).encode("utf-8"))
    summary = index(store, path)
    assert summary["errors"] == []
    first, second = _sessions(store)
    assert [(r["role"], r["content"]) for r in messages(store, first)] == [
        ("system", "Aider v0.86.1\nModel: openai/qwen3 with whole edit format"),
        ("user", "hi there"),
        ("reasoning", "The user said hi.\n\nI should greet briefly."),
        ("assistant", "Hello! What should we change?"),
        ("user", "explain the parser"),
        ("reasoning", "Start with the tokenizer."),
        ("system", "^C KeyboardInterrupt"),
    ]
    assert [(r["role"], r["content"]) for r in messages(store, second)] == [
        ("user", "fix the off-by-one"),
        ("reasoning", "The loop stops one early."),
        ("assistant", "Fixed: `range(n + 1)`."),
        ("system", "Applied edit to loop.py"),
        ("user", "and the docs"),
        ("reasoning", "Looking at the docs."),
        ("assistant", "Updated README.md."),
    ]


def test_aider_sessions_stored_before_the_split_keep_their_rows(store, tmp_path, monkeypatch):
    """Aider's stored messages are matched by place: a session an older reader stored as one
    reply row keeps it when the file grows (else its reply would be stored a second time), and a
    session appended after that read has its thinking split."""
    path = tmp_path / "proj" / ".aider.chat.history.md"
    path.parent.mkdir()
    path.write_bytes(RUN_ONE.encode("utf-8"))
    with monkeypatch.context() as patch:  # the reader before the split: no state key, no split
        patch.setattr(aider, "SPLIT_FROM", "unused")
        patch.setattr(aider, "split_thinking", lambda reply: ("", reply))
        assert index(store, path)["messages_added"] == 6
    first = _sessions(store)[0]
    before = [(r["role"], r["content"]) for r in messages(store, first)]
    with open(path, "ab") as handle:
        handle.write(RUN_TWO.encode("utf-8"))
    again = index_paths(store, [path])
    assert again["errors"] == [] and again["messages_added"] == 7
    assert [(r["role"], r["content"]) for r in messages(store, first)] == before
    assert [r["role"] for r in messages(store, _sessions(store)[1])] == [
        "user", "reasoning", "assistant", "system", "user", "reasoning", "assistant"]
    assert index_paths(store, [path])["messages_added"] == 0


ARCHITECT = (
    "\n# aider chat started at 2026-03-04 10:00:00\n\n"
    "> Model: o3 with architect edit format, prompt cache, infinite output  \n"
    "> Editor model: gpt-4.1 with editor-diff edit format  \n\n"
    "#### make the retry count configurable  \n\n"
    "<think>\nA CLI flag is simplest.\n</think>\n\n"
    "Add a `--retries` option to `cli.py`:\n\n1. parse it\n2. pass it to `fetch()`\n\n"
    "> Edit the files? (Y)es/(N)o [Yes]: y  \n\n"
    "#### <think>  \n#### A CLI flag is simplest.  \n#### </think>  \n####   \n"
    "#### Add a `--retries` option to `cli.py`:  \n####   \n#### 1. parse it  \n#### 2. pass it to `fetch()`  \n\n"
    "cli.py\n```python\n<<<<<<< SEARCH\n=======\nretries = 3\n>>>>>>> REPLACE\n```\n\n"
    "> Applied edit to cli.py  \n"
)


def test_aider_architect_handoff_is_not_the_users_words(store, tmp_path):
    """Architect mode hands the architect's reply to the editor model with
    ``editor_coder.run(with_message=content)``, and ``run`` logs it with ``io.user_input``: the
    whole reply is written again as ``####`` input lines. It is a ``system`` row saying so, not a
    second copy stored as what the user typed (before: the plan was the user's words too)."""
    path = tmp_path / "proj" / ".aider.chat.history.md"
    path.parent.mkdir()
    path.write_text(ARCHITECT, encoding="utf-8")
    assert index(store, path)["errors"] == []
    rows = messages(store, _sessions(store)[0])
    assert [r["role"] for r in rows] == ["system", "user", "reasoning", "assistant", "system", "system",
                                         "assistant", "system"]
    assert [r["content"] for r in rows if r["role"] == "user"] == ["make the retry count configurable"]
    assert rows[5]["content"] == aider.HANDOFF
    assert rows[6]["content"].startswith("cli.py\n```python")


def test_copilot_chat_operation_log_cuts_and_deletes_as_vscode_does(store, tmp_path):
    """VS Code's ``ObjectMutationLog`` (``chatSessions/*.jsonl``) writes ``{kind: 2, k, v?, i?}``:
    the array is cut to ``i`` items before ``v`` is pushed (a response whose parts were replaced,
    a request removed: ``i`` alone), and ``{kind: 3, k}`` deletes a property; a push onto a
    missing array creates it. Before: ``i`` was ignored (replaced parts stored twice, a removed
    request kept), and ``i`` alone and every ``kind: 3`` line were reported as problems."""
    session_id = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9"
    folder = tmp_path / "Code" / "User" / "workspaceStorage" / "ab12" / "chatSessions"
    folder.mkdir(parents=True)
    request = {"requestId": "r1", "timestamp": 1768100000000, "modelId": "copilot/gpt-5",
               "message": {"text": "why does parse fail?"}, "variableData": {"variables": []},
               "response": [{"kind": "progressMessage", "content": {"value": "Searching"}}]}
    lines = [
        {"kind": 0, "v": {"version": 3, "sessionId": session_id, "creationDate": 1768100000000,
                          "requesterUsername": "ana", "requests": []}},
        {"kind": 2, "k": ["requests"], "v": [request]},
        {"kind": 2, "k": ["requests", 0, "response"], "v": [{"value": "Looking at the file"}]},
        {"kind": 1, "k": ["requests", 0, "result"], "v": {"errorDetails": {"message": "Request failed"}}},
        {"kind": 2, "k": ["requests", 0, "response"], "i": 0, "v": [{"value": "The bug is in `parse()`."}]},
        {"kind": 3, "k": ["requests", 0, "result"]},
        {"kind": 2, "k": ["requests"], "v": [{"requestId": "r2", "timestamp": 1768100060000,
                                              "message": {"text": "and the tokenizer?"}}]},
        {"kind": 2, "k": ["requests", 1, "response"], "v": [{"value": "It is fine."}]},
        {"kind": 2, "k": ["requests"], "i": 1},
    ]
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    summary = index(store, path)
    assert summary["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, session_id)] == [
        ("user", "why does parse fail?"), ("assistant", "The bug is in `parse()`.")]


def test_factory_droid_session_title_start_and_hidden_context(store, tmp_path):
    """Droid's ``session_start`` carries ``sessionTitle`` (the title it generates; ``title`` is
    the first prompt's start) and a ``timestamp``; a message with ``visibility: "llm_only"`` is
    context Droid gives the model and never shows. Before: the session was titled by ``title``,
    had no start time before its first message, and the hidden context was stored as the user's
    words. (Shapes from two independent readers of real Droid logs: a session indexer preferring
    ``sessionTitle`` and a transcript viewer skipping ``llm_only`` messages.)"""
    session_id = "8c08e3ff-84a0-4706-bebe-018af371a9f3"
    folder = tmp_path / ".factory" / "sessions" / "-repo"
    folder.mkdir(parents=True)
    lines = [
        {"type": "session_start", "id": session_id, "title": "fix the parser so that", "sessionTitle": "Fix parser",
         "owner": "ana", "version": 2, "cwd": "/repo", "timestamp": "2026-05-09T22:52:00.000Z"},
        {"type": "message", "id": "m0", "timestamp": "2026-05-09T22:52:01.000Z",
         "message": {"role": "user", "visibility": "llm_only",
                     "content": [{"type": "text", "text": "Current date: 2026-05-09. Repository layout: src/"}]}},
        {"type": "message", "id": "m1", "timestamp": "2026-05-09T22:52:02.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "fix the parser so that it accepts tabs"}]}},
        {"type": "message", "id": "m2", "timestamp": "2026-05-09T22:52:09.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Done: tabs are whitespace now."}]}},
    ]
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert index(store, path)["errors"] == []
    row = session(store, session_id)
    assert row["title"] == "Fix parser" and row["started_at"] == ts("2026-05-09T22:52:00.000Z")
    assert [(r["role"], r["content"][:20]) for r in messages(store, session_id)] == [
        ("system", "Current date: 2026-0"), ("user", "fix the parser so th"), ("assistant", "Done: tabs are white")]


def _migrate_to_db(storage: Path, session_id: str, target: Path, extra: str) -> None:
    """What OpenCode 1.2's ``json-migration.ts`` does to one session (the same ids, the JSON tree
    left in place), then one more prompt written to the database only."""
    import sqlite3

    from format_helpers import SQL_DIR

    info = json.loads(next(storage.glob(f"session/*/{session_id}.json")).read_text(encoding="utf-8"))
    db = sqlite3.connect(target)
    db.executescript((SQL_DIR / "opencode_db.sql").read_text(encoding="utf-8").split("INSERT INTO")[0])
    db.execute("INSERT INTO project VALUES (?, '/w', 'git', NULL, 1, 1, '[]')", (info["projectID"],))
    db.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)"
               " VALUES (?, ?, 's', '/w', ?, '1.2.0', ?, ?)",
               (session_id, info["projectID"], info.get("title", ""), info["time"]["created"], info["time"]["updated"]))
    last = 0
    for path in sorted((storage / "message" / session_id).glob("*.json")):
        header = json.loads(path.read_text(encoding="utf-8"))
        message_id, last = header.pop("id"), max(last, header["time"]["created"])
        db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                   (message_id, session_id, header["time"]["created"], 0, json.dumps(header)))
        for part_path in sorted((storage / "part" / message_id).glob("*.json")):
            part = json.loads(part_path.read_text(encoding="utf-8"))
            db.execute("INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)", (part.pop("id"), message_id, session_id,
                                                                     json.dumps(part)))
    db.execute("INSERT INTO message VALUES ('msg_zz1', ?, ?, 0, ?)",
               (session_id, last + 60000, json.dumps({"role": "user", "time": {"created": last + 60000}})))
    db.execute("INSERT INTO part VALUES ('prt_zz1', 'msg_zz1', ?, 0, 0, ?)",
               (session_id, json.dumps({"type": "text", "text": extra})))
    db.commit()
    db.close()


def test_a_session_continued_in_a_newer_store_is_taken_over(engine_store, tmp_path):
    """OpenCode 1.2 copies its JSON storage into ``opencode.db`` and leaves the JSON files in
    place ("your original data is not yet deleted"); the session goes on in the database only.
    With the JSON session indexed first (both are default locations), the database's new
    messages were refused as an id collision, for good (before: "already indexed from another
    file; ... not imported"). A file repeating every message stored for a session in order, and
    going on, now takes the session over: its new messages are added, later runs add theirs, and
    the old file's copy adds nothing. The same for a Gemini CLI ``session-*.json`` indexed
    before it was resumed as ``session-*.jsonl``."""
    import shutil

    from sess_helpers import FIXTURES

    for name in ("opencode-json", "gemini-cli"):
        shutil.copytree(FIXTURES / name, tmp_path / name)
    store = engine_store  # both engines' writers hand the session over
    data = tmp_path / "opencode-json" / ".local" / "share" / "opencode"
    session_id = "ses_5f1a2b3c4ffe8Hq1ZbX0aYcD2e"
    _migrate_to_db(data / "storage", session_id, data / "opencode.db", "one more question after the upgrade")
    first = next((data / "storage" / "session").glob(f"*/{session_id}.json"))
    before = index(store, first)["messages_added"]
    summary = index(store, data / "opencode.db")
    assert summary["errors"] == [] and summary["messages_added"] == 1
    rows = messages(store, session_id)
    assert len(rows) == before + 1 and rows[-1]["content"] == "one more question after the upgrade"
    assert index(store, first)["messages_added"] == 0 and index(store, data / "opencode.db")["messages_added"] == 0
    assert session(store, session_id)["origin_format"] == "opencode-db"

    chats = tmp_path / "gemini-cli" / ".gemini" / "tmp" / "flags-cli" / "chats"
    legacy = next(chats.glob("session-*.json"))
    twin = legacy.with_name(legacy.name + "l")
    held = twin.read_bytes()
    twin.unlink()
    assert index(store, legacy)["messages_added"] == 2  # indexed before the session was resumed
    twin.write_bytes(held)
    summary = index(store, chats)
    assert summary["errors"] == [] and summary["messages_added"] == 2
    with open(twin, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "m5", "timestamp": "2026-04-20T10:01:00.000Z", "type": "user",
                                 "content": [{"text": "and the changelog"}]}) + "\n")
    assert index(store, chats)["errors"] == []
    assert [r["content"] for r in messages(store, "cc33dd44-0000-4000-8000-000000000002")][-3:] == [
        "also update the README", "README updated.", "and the changelog"]


def test_hermes_state_db_keeps_the_assistants_thinking(store, tmp_path):
    """Hermes' ``append_message`` stores an assistant's thinking beside its reply: ``reasoning``,
    ``reasoning_content``, ``reasoning_details`` (OpenRouter items, JSON text) and
    ``codex_reasoning_items`` (Responses reasoning items with ``summary``, JSON text). ``hermes-db``
    read none of them (``hermes-jsonl`` and ``hermes-json`` already keep that thinking as a
    ``reasoning`` row): the same conversation lost its thinking when indexed from ``state.db``."""
    from format_helpers import SQL_DIR, build_sqlite

    path = build_sqlite(SQL_DIR / "hermes_state_v31.sql", tmp_path / "hermes" / "state.db")
    import sqlite3

    db = sqlite3.connect(path)
    sid = "20270303_080000_arch01"
    rows = [("plain answer", "weighed two allocators", None, None, None),
            ("second answer", None, "deepseek style thinking", None, None),
            ("third answer", None, None, json.dumps([{"type": "reasoning.encrypted", "data": "x"},
                                                    {"type": "reasoning.text", "text": "openrouter thinking"}]), None),
            ("fourth answer", None, None, None, json.dumps([{"type": "reasoning", "encrypted_content": "gAAA",
                                                            "summary": [{"type": "summary_text",
                                                                         "text": "codex summary"}]}]))]
    for n, (content, reasoning, reasoning_content, details, codex) in enumerate(rows):
        db.execute("INSERT INTO messages(session_id, role, content, timestamp, reasoning, reasoning_content,"
                   " reasoning_details, codex_reasoning_items) VALUES (?, 'assistant', ?, ?, ?, ?, ?, ?)",
                   (sid, content, 1804060900 + n, reasoning, reasoning_content, details, codex))
    db.commit()
    db.close()
    assert index(store, path, "hermes-db")["errors"] == []
    got = [(r["role"], r["content"]) for r in messages(store, sid)][-8:]
    assert got == [("reasoning", "weighed two allocators"), ("assistant", "plain answer"),
                   ("reasoning", "deepseek style thinking"), ("assistant", "second answer"),
                   ("reasoning", "openrouter thinking"), ("assistant", "third answer"),
                   ("reasoning", "codex summary"), ("assistant", "fourth answer")]


@pytest.mark.parametrize("folder", ["factory-droid/.factory", "kimi-cli/.kimi-code", "cursor/.config/Cursor/User"])
def test_a_walk_of_an_agents_folder_reads_its_sidecar_files_through_their_sessions(store, tmp_path, folder):
    """``sessions index ~/.factory`` (or ``~/.kimi-code``, Cursor's ``User`` folder) walks the files
    the agent writes beside each session: Droid's ``<id>.settings.json`` (the model), Kimi Code's
    ``state.json`` (title, times, work dir), a Cursor window's ``workspace.json`` (its folder).
    Each is read through its session now (``member_of``). Before: one ``unknown format`` problem
    per such file on every walk of a folder the agent wrote."""
    import shutil

    from sess_helpers import FIXTURES

    shutil.copytree(FIXTURES / folder.split("/")[0], tmp_path / folder.split("/")[0])
    summary = index(store, tmp_path / folder)
    assert summary["messages_added"] > 0
    assert [e["error"] for e in summary["errors"] if "unknown format" in e["error"]] == []


def test_cline_editor_state_is_not_searched_as_the_users_words(store, format_fixtures):
    """Cline, Roo Code and Kilo Code append ``<environment_details>`` (visible files, open tabs,
    the workspace's whole file list, the time, the mode) to every user turn of the API history and
    wrap the user's words in ``<task>`` / ``<feedback>`` / ``<answer>``. The stored content keeps
    every byte; the searched text now leaves the editor state and the tags out (as Codex's
    ``<environment_context>``). Before: a search for any file of the workspace (``README``) found
    every user turn of every task, and ``task`` matched every first prompt by its tag."""
    from hermes_store.sessions.search import search_messages

    task = "cline/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1736441234567"
    assert index(store, format_fixtures / task / "api_conversation_history.json")["errors"] == []
    assert messages(store, "1736441234567")[0]["content"].endswith("README.md\n</environment_details>")

    def hits(query: str) -> list[int]:
        return sorted(r["seq"] for r in search_messages(store, query).results)

    assert hits("README") == [] and hits("task") == []
    assert hits("verbose") == [0, 5]  # the prompt (its words kept) and the completion call
    assert hits("please") == [6]  # the feedback's words (the completion's result)


def test_roo_xml_era_calls_with_raw_content_and_a_dropped_turn(store, tmp_path):
    """XML-era Roo Code / Kilo Code histories: prose around the tool element, a ``content``
    parameter holding tags of its own (an HTML file: closed at its last ``</content>``), several
    parameters, a result whose call Cline's context management dropped from the history (it keeps
    its tool's name), and an unanswered last call. Before: all of it one text per turn, no call, no
    tool row, the thinking as the assistant's words."""
    task = tmp_path / "rooveterinaryinc.roo-cline" / "tasks" / "1745000000000"
    task.mkdir(parents=True)
    env = {"type": "text", "text": "<environment_details>\n# Current Time\n2025-04-18\n</environment_details>"}
    history = [
        {"role": "user", "content": [{"type": "text", "text": "[execute_command for 'npm test'] Result:"},
                                     {"type": "text", "text": "Command executed.\n3 passing"}, env]},
        {"role": "assistant", "content": [{"type": "text", "text": (
            "<thinking>The page needs a title.</thinking>\nI'll write the page now.\n<write_to_file>\n"
            "<path>index.html</path>\n<content>\n<html><title>Hi</title></html>\n</content>\n"
            "<line_count>1</line_count>\n</write_to_file>")}]},
        {"role": "user", "content": [{"type": "text", "text": "[write_to_file for 'index.html'] Result:"},
                                     {"type": "text", "text": "The content was successfully saved to index.html."},
                                     env]},
        {"role": "assistant", "content": "<ask_followup_question>\n<question>Deploy it?</question>\n"
                                         "</ask_followup_question>"},
    ]
    (task / "api_conversation_history.json").write_text(json.dumps(history), encoding="utf-8")
    assert index(store, task / "api_conversation_history.json")["errors"] == []
    rows = messages(store, task.name)
    assert [r["role"] for r in rows] == ["tool", "user", "reasoning", "assistant", "tool", "user", "assistant"]
    assert rows[0]["tool_name"] == "execute_command" and rows[0]["content"] == "Command executed.\n3 passing"
    assert rows[2]["content"] == "The page needs a title."
    assert rows[3]["content"] == "I'll write the page now."
    assert rows[3]["calls"] == [("write_to_file", {"path": "index.html", "content": "<html><title>Hi</title></html>",
                                                   "line_count": "1"}, f"{task.name}:xml-2")]
    assert rows[4]["tool_call_id"] == f"{task.name}:xml-2" and rows[4]["content"].startswith("The content was")
    assert rows[6]["calls"][0][:2] == ("ask_followup_question", {"question": "Deploy it?"})


def test_grok_cli_streaming_json_run(store, format_fixtures):
    """``grok -p --output-format streaming-json`` saved to a file: token deltas joined (thinking a
    ``reasoning`` row), calls with their arguments (an MCP ``use_tool`` named by its
    ``<server>__<tool>``, a titled web search by its ``variant``), each call's final update its
    ``tool`` row (a shell run's prompt output with its exit code, an MCP result's ``OkayOutput``, a
    failure marked), the model from ``modelUsage``. Before: ``unknown format``."""
    from hermes_store.sessions import detect_format

    path = format_fixtures / "grok-stream" / "runs" / "grok-fix-ci.jsonl"
    assert detect_format(path) == "grok-stream"
    assert index(store, path)["errors"] == []
    row = session(store, "grok-fix-ci")
    assert row["model"] == "grok-code-fast-1" and row["source"] == "grok"
    rows = messages(store, "grok-fix-ci")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("reasoning", "The CI log first."), ("assistant", "Let me check the log."),
        ("tool", "FAIL test_retry\n[exit code 1]"), ("assistant", ""), ("tool", "Issue 42: flaky retry"),
        ("assistant", ""), ("tool", "[failed] rate limited"), ("assistant", "The retry test is flaky (issue 42).")]
    assert [c[:2] for r in rows for c in r["calls"]] == [
        ("run_terminal_command", {"command": "cat ci.log"}), ("github__get_issue", {"number": 42}),
        ("WebSearch", {"variant": "WebSearch", "backend": True, "query": "pytest retry flaky"})]
    assert [r["tool_name"] for r in rows if r["role"] == "tool"] == [
        "run_terminal_command", "github__get_issue", "WebSearch"]


def _opencode_family_home(tmp_path, monkeypatch) -> Path:
    from format_helpers import SQL_DIR, build_sqlite

    root = tmp_path / "user"
    data = root / ".local" / "share"
    kilo_sql = tmp_path / "kilo.sql"  # the same database, other session ids
    kilo_sql.write_text((SQL_DIR / "opencode_db.sql").read_text(encoding="utf-8").replace("'ses_", "'ses_k"),
                        encoding="utf-8")
    build_sqlite(kilo_sql, data / "kilo" / "kilo.db")
    build_sqlite(SQL_DIR / "opencode_db.sql", data / "opencode" / "opencode-dev.db")
    monkeypatch.setenv("HOME", str(root))
    return data


def test_kilo_and_opencode_channel_databases_are_discovered(run, store, tmp_path, monkeypatch):
    """Kilo CLI 1.0+ (and the Kilo Code extension built on it) is OpenCode under the app name
    ``kilo``: its sessions are in ``~/.local/share/kilo/kilo.db`` (Kilo-Org/kilocode
    ``packages/opencode/src/storage/db.ts``, ``global/index.ts``); an OpenCode build of a channel
    other than latest/beta keeps ``opencode-<channel>.db`` (``Database.getChannelPath``). Before:
    neither was a default location (``sessions index --discover`` found nothing) and a Kilo session
    named on the command line was labelled ``opencode``."""
    _opencode_family_home(tmp_path, monkeypatch)
    rows = {(row["format"], row["pattern"]): row
            for row in json.loads(run("sessions", "sources", "--json").stdout)}
    assert rows[("opencode-db", "~/.local/share/kilo/kilo.db")]["files"] == 1
    assert rows[("opencode-db", "~/.local/share/opencode/opencode-*.db")]["files"] == 1
    summary = json.loads(run("sessions", "index", "--discover", "--json").stdout)
    assert summary["files"] == 2 and summary["messages_added"] > 0
    assert ["bad JSON in 'data'" in e["error"] for e in summary["errors"]] == [True, True]  # the fixture's damaged row
    sources = {r["source"]: r["n"] for r in store.query(
        "SELECT source, COUNT(*) AS n FROM sessions GROUP BY source")}
    assert set(sources) == {"kilo-code", "opencode"} and sources["kilo-code"] == sources["opencode"]
