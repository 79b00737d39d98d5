"""ChatGPT data export ``conversations.json``: the current branch of each mapping tree."""

from __future__ import annotations

import json

import pytest
from format_helpers import index, messages, roles, session

from hermes_store.sessions import detect_format
from hermes_store.sessions.importers import doc_common

EXPORT = "chatgpt-export/.downloads/chatgpt-export-2025-11-02/conversations.json"
A, B, C = ("67a1f0c2-1111-8000-9abc-0123456789ab", "68c2e1d3-2222-8000-9abc-0123456789ab",
           "4d5e6f70-3333-4000-8000-0123456789ab")


def test_detected(format_fixtures):
    assert detect_format(format_fixtures / EXPORT) == "chatgpt-export"


def test_edited_and_regenerated_branches_resolve_to_the_current_path(store, format_fixtures):
    summary = index(store, format_fixtures / EXPORT)
    assert summary["errors"] == []
    row = session(store, A)
    assert row["origin_format"] == "chatgpt-export" and row["source"] == "chatgpt"
    assert row["title"] == "Monthly sales chart" and row["model"] == "gpt-4o"
    assert row["started_at"] == pytest.approx(1738600000.0) and row["ended_at"] == pytest.approx(1738600200.0)
    assert row["meta"]["other_branch_messages"] == 3  # u1a, a1a (edited away) and a2a (regenerated)
    assert row["meta"]["hidden_messages"] == 2  # the empty system prompt and the custom instructions
    rows = messages(store, A)
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "[image]\nplot the attached sales.csv by month\n[attachment sales.csv]"
    assert rows[0]["timestamp"] == pytest.approx(1738600100.5)
    assert rows[1]["calls"] == [("python", {"code": "import pandas as pd\ndf = pd.read_csv('/mnt/data/sales.csv')\n"
                                                   "df.groupby('month').sum().plot()"}, "call1")]
    assert (rows[2]["tool_name"], rows[2]["tool_call_id"], rows[2]["content"]) == (
        "python", "call1", "<Axes: xlabel='month'>")
    assert rows[3]["content"] == "Here is the monthly sales chart; March peaks."
    assert rows[3]["timestamp"] == pytest.approx(1738600109.0)  # no create_time: the one before
    assert all("first try" not in r["content"] and "upload the file" not in r["content"] for r in rows)
    assert all("data engineer" not in r["content"] for r in rows)


def test_reasoning_and_web_search(store, format_fixtures):
    index(store, format_fixtures / EXPORT)
    row = session(store, B)
    assert row["model"] == "o3" and row["meta"] == {"gizmo_id": "g-abc123", "is_archived": True}
    rows = messages(store, B)
    assert roles(rows) == ["user", "reasoning", "reasoning", "assistant", "tool", "assistant"]
    assert rows[1]["content"] == "Recalling PEP 779: Free-threaded build becomes supported."
    assert rows[2]["content"] == "Thought for 4 seconds"
    assert rows[3]["calls"][0][0] == "web.run"
    assert rows[4]["tool_name"] == "web.run" and rows[4]["tool_call_id"] == "ws"
    assert rows[4]["content"] == "peps.python.org\nPEP 779 – Criteria for supported status for free-threaded Python"


def test_old_entry_without_current_node(store, format_fixtures):
    index(store, format_fixtures / EXPORT)
    rows = messages(store, C)
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["calls"] == [("dalle.text2im", {"prompt": "a lighthouse at dusk, oil painting"}, "d")]
    assert rows[2]["content"] == "[image]" and rows[2]["tool_name"] == "dalle.text2im"
    assert session(store, C)["title"] == "Lighthouse painting"


def test_streamed_in_small_chunks_and_cut_off_export(store, format_fixtures, monkeypatch, tmp_path):
    monkeypatch.setattr(doc_common, "_READ", 64)  # every conversation spans many reads
    data = json.loads((format_fixtures / EXPORT).read_text(encoding="utf-8"))
    cut = tmp_path / "conversations.json"
    text = json.dumps(data, ensure_ascii=False)
    cut.write_text(text[: text.index('"Lighthouse painting"')], encoding="utf-8")  # a download cut short
    summary = index(store, cut, "chatgpt-export")
    assert len(summary["errors"]) == 1 and summary["errors"][0]["error"].startswith("[2]: malformed or cut-off")
    assert len(messages(store, A)) == 4 and len(messages(store, B)) == 6
    assert session(store, C) is None


def test_reindex_adds_nothing(store, format_fixtures):
    first = index(store, format_fixtures / EXPORT)
    assert first["messages_added"] == 14
    assert index(store, format_fixtures / EXPORT)["messages_added"] == 0


def test_a_single_conversation_file(store, format_fixtures, tmp_path):
    """Exports that also hold one file per conversation: the same conversation object alone."""
    data = json.loads((format_fixtures / EXPORT).read_text(encoding="utf-8"))
    single = tmp_path / "single" / "67a1f0c2-1111-8000-9abc-0123456789ab.json"
    single.parent.mkdir()
    single.write_text(json.dumps(data[0]), encoding="utf-8")
    from hermes_store.sessions import detect_format

    assert detect_format(single) == "chatgpt-export"
    assert index(store, single)["errors"] == []
    assert [r["content"] for r in messages(store, A)][-1] == "Here is the monthly sales chart; March peaks."
