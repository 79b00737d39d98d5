"""Claude.ai data export ``conversations.json``: every variant's structure, and ChatGPT's file kept apart."""

from __future__ import annotations

import json
import shutil

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format
from hermes_store.sessions.importers import IMPORTERS, Head, doc_common

DATA = "claude-ai-export/.downloads/data-2025-06-01-10-00-00"
EXPORT = f"{DATA}/conversations.json"
SINGLE = "claude-ai-export/.downloads/single/1a2b3c4d-0006-4000-8000-00000000000f.json"
CHATGPT = "chatgpt-export/.downloads/chatgpt-export-2025-11-02/conversations.json"
A, B, C, D, E = (f"1a2b3c4d-000{n}-4000-8000-00000000000{c}" for n, c in zip("12345", "abcde", strict=True))


def test_detected_and_kept_apart_from_chatgpt(format_fixtures):
    assert detect_format(format_fixtures / EXPORT) == "claude-ai-export"
    assert detect_format(format_fixtures / SINGLE) == "claude-ai-export"
    assert detect_format(format_fixtures / CHATGPT) == "chatgpt-export"
    claude, chatgpt = IMPORTERS["claude-ai-export"], IMPORTERS["chatgpt-export"]
    assert claude.sniff(Head.read(format_fixtures / CHATGPT)) == 0.0
    assert chatgpt.sniff(Head.read(format_fixtures / EXPORT)) == 0.0


def test_each_quoting_the_other_is_still_its_own(format_fixtures, tmp_path, monkeypatch):
    """A message quoting the other export's JSON (escaped inside a string) does not make a claim,
    also when the file is too large to be parsed whole and only its first bytes are probed."""
    monkeypatch.setattr("hermes_store.sessions.importers.head.MAX_DOCUMENT_BYTES", 10)
    claude = json.loads((format_fixtures / EXPORT).read_text(encoding="utf-8"))
    chatgpt = json.loads((format_fixtures / CHATGPT).read_text(encoding="utf-8"))
    claude[0]["chat_messages"][0]["text"] = json.dumps(chatgpt[0])
    chatgpt[0]["mapping"][next(iter(chatgpt[0]["mapping"]))]["message"] = None
    for folder, doc in (("c", claude), ("g", chatgpt)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "conversations.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "g" / "conversations.json").write_text(
        json.dumps(chatgpt).replace('"title"', '"note": ' + json.dumps(json.dumps(claude[1])) + ', "title"', 1),
        encoding="utf-8")
    assert detect_format(tmp_path / "c" / "conversations.json") == "claude-ai-export"
    assert IMPORTERS["chatgpt-export"].sniff(Head.read(tmp_path / "c" / "conversations.json")) == 0.0
    assert detect_format(tmp_path / "g" / "conversations.json") == "chatgpt-export"
    assert IMPORTERS["claude-ai-export"].sniff(Head.read(tmp_path / "g" / "conversations.json")) == 0.0


def test_older_export_text_and_attachments(store, format_fixtures):
    assert index(store, format_fixtures / EXPORT)["errors"] == []
    row = session(store, A)
    assert row["origin_format"] == "claude-ai-export" and row["source"] == "claude-ai"
    assert row["title"] == "Parse a CSV header"
    assert row["started_at"] == pytest.approx(ts("2024-03-01T09:00:00Z"))
    assert row["ended_at"] == pytest.approx(ts("2024-03-01T09:05:00Z"))
    rows = messages(store, A)
    assert roles(rows) == ["user", "assistant"]
    assert rows[0]["content"] == ("Why does the header row parse as data?\n[attachment sample.csv]\nid,name\n1,alpha\n"
                                  "[attachment]\npasted traceback line\n[file screenshot.png]")
    assert rows[0]["timestamp"] == pytest.approx(ts("2024-03-01T09:00:10Z"))
    assert rows[1]["content"] == "Pass header=0 to read_csv."


def test_content_blocks_thinking_and_tool_use_without_ids(store, format_fixtures):
    index(store, format_fixtures / EXPORT)
    assert session(store, B)["title"] is None  # an empty name
    rows = messages(store, B)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "reasoning", "assistant"]
    assert rows[0]["content"] == "What changed in the release notes?"
    assert rows[1]["content"] == "Search the release notes first."
    assert rows[2]["content"] == "Let me look it up."
    (name, arguments, call_id), = rows[2]["calls"]
    assert (name, arguments) == ("web_search", {"query": "release notes 2.0"}) and call_id
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"]) == ("web_search", call_id)
    assert rows[3]["content"] == "Release 2.0\nhttps://example.invalid/notes\n2.0 drops py3.8"  # the page found, titled
    assert rows[4]["content"] == "Summarising"  # no thinking text: its last summary
    assert rows[5]["content"] == "2.0 drops Python 3.8."


def test_branches_tool_ids_and_error_results(store, format_fixtures):
    index(store, format_fixtures / EXPORT)
    row = session(store, C)
    assert row["model"] == "claude-sonnet-4-5" and row["meta"]["other_branch_messages"] == 1
    rows = messages(store, C)
    assert roles(rows) == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert rows[1]["calls"] == [("repl", {"code": "run_lint()"}, "toolu_c1")]
    assert (rows[2]["tool_call_id"], rows[2]["content"]) == ("toolu_c1", "[error] E501 line too long")
    assert all("regenerated away" not in r["content"] for r in rows)


def test_empty_and_text_fallback_conversations(store, format_fixtures):
    summary = index(store, format_fixtures / EXPORT)
    assert summary["sessions_added"] == 4 and session(store, D) is None
    assert [(r["role"], r["content"]) for r in messages(store, E)] == [
        ("user", "How do I quote $HOME?"), ("assistant", "Use double quotes.")]


def test_single_conversation_and_export_folder(store, format_fixtures):
    summary = index(store, format_fixtures / DATA)  # users.json and projects.json are the export's members
    assert summary["errors"] == [] and summary["files"] == 3 and summary["messages_added"] == 16
    assert index(store, format_fixtures / EXPORT)["messages_added"] == 0  # unchanged: nothing twice
    assert index(store, format_fixtures / SINGLE)["errors"] == []
    assert [r["content"] for r in messages(store, "1a2b3c4d-0006-4000-8000-00000000000f")] == [
        "Name a prime above 10.", "11."]


def test_streamed_in_small_chunks(store, format_fixtures, monkeypatch):
    monkeypatch.setattr(doc_common, "_READ", 64)
    assert index(store, format_fixtures / EXPORT, "claude-ai-export")["messages_added"] == 16


def test_bad_json_is_named_and_nothing_stored_is_lost(store, format_fixtures, tmp_path):
    export = tmp_path / "data-x" / "conversations.json"
    export.parent.mkdir()
    shutil.copy(format_fixtures / EXPORT, export)
    assert index(store, export)["messages_added"] == 16
    text = export.read_text(encoding="utf-8")
    export.write_text(text[: text.index('"Fix the failing build"')], encoding="utf-8")  # a download cut short
    summary = index(store, export)
    assert [e["error"][:30] for e in summary["errors"]] == ["[2]: malformed or cut-off JSON"]
    assert summary["errors"][0]["path"] == str(export) and summary["messages_added"] == 0
    assert len(messages(store, C)) == 6 and len(messages(store, E)) == 2  # stored before: kept
    doc = json.loads(text)
    doc[0]["chat_messages"][1]["content"] = "not blocks"
    doc[1]["chat_messages"] = {"oops": 1}
    doc[2]["chat_messages"][0]["sender"] = 7
    export.write_text(json.dumps(doc), encoding="utf-8")
    errors = [e["error"] for e in index(store, export)["errors"]]
    assert errors == ["[0].chat_messages[1].content: expected a list of blocks (its text is read)",
                      "[1]: expected a conversation with a 'chat_messages' list (skipped)",
                      "[2].chat_messages[0].sender: unknown sender 7 (skipped)"]
    assert [r["content"] for r in messages(store, A)][1] == "Pass header=0 to read_csv."
    assert len(messages(store, B)) == 6  # not a whole export of conversations: nothing it held before is dropped


def test_a_broken_single_conversation_file_keeps_what_was_indexed(store, format_fixtures):
    single = format_fixtures / SINGLE
    assert index(store, single)["messages_added"] == 2
    single.write_text(single.read_text(encoding="utf-8")[:200], encoding="utf-8")
    assert index(store, single)["errors"][0]["error"].startswith("unknown format")  # no longer recognisable
    summary = index(store, single, "claude-ai-export")
    assert summary["errors"][0]["error"].startswith("malformed JSON")
    assert len(messages(store, "1a2b3c4d-0006-4000-8000-00000000000f")) == 2
