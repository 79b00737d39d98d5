"""Generic message dumps (CSV, TSV, JSON arrays, NDJSON) through sqlite_utils' rows_from_file."""

from __future__ import annotations

import pytest
from sess_helpers import FIXTURES, index_json, write_jsonl

from hermes_store.sessions import SessionIndex, detect_format
from hermes_store.sessions.importers.message_dump import parse_column_map

DUMPS = FIXTURES / "dump"


def _messages(store, sid):
    return SessionIndex(store).get_messages(sid)


def test_csv_tsv_and_json_dumps(run, store):
    code, summary = index_json(run, DUMPS)
    assert code == 0 and summary["errors"] == []
    assert summary["files"] == 3 and summary["sessions_added"] == 4 and summary["messages_added"] == 8
    support = _messages(store, "support-77")
    assert [m["role"] for m in support] == ["user", "assistant", "user"]
    assert support[2]["content"] == "Replacement please.\nSame address as before."  # quoted newline
    assert support[0]["timestamp"] == pytest.approx(1772359200.0)
    standup = _messages(store, "standup-3")
    assert [m["role"] for m in standup] == ["user", "assistant"]  # human/bot aliases
    assert standup[1]["timestamp"] == pytest.approx(1767600060)
    rows = _messages(store, "th-9")
    assert rows[1]["content"].startswith("Revenue grew 12%")
    assert SessionIndex(store).get_session("th-9")["origin_format"] == "dump"
    again = index_json(run, DUMPS)[1]
    assert again["messages_added"] == 0


def test_map_names_other_columns_and_ndjson(run, store, tmp_path):
    path = tmp_path / "export.ndjson"
    write_jsonl(path, [{"chat": "c1", "who": "user", "said": "ping", "at": "2026-03-03T08:00:00Z"},
                       {"chat": "c1", "who": "assistant", "said": "pong", "at": "2026-03-03T08:00:01Z"}])
    assert detect_format(path) is None  # without --map an NDJSON dump is nobody's
    code, summary = index_json(run, "--map", "role=who,content=said,time=at,session=chat", path)
    assert code == 0 and summary["messages_added"] == 2 and summary["errors"] == []
    assert [m["content"] for m in _messages(store, "c1")] == ["ping", "pong"]
    csv_path = tmp_path / "odd.csv"
    csv_path.write_text("Speaker Name,Utterance\nuser,hello there\n", encoding="utf-8")
    code, summary = index_json(run, "--map", "role=speaker name,content=Utterance", csv_path)
    assert summary["messages_added"] == 1 and _messages(store, "odd")[0]["content"] == "hello there"


def test_missing_columns_are_named(run, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("role,words\nuser,hi\n", encoding="utf-8")
    code, summary = index_json(run, "--format", "dump", path)
    assert code == 1 and "no column for content" in summary["errors"][0]["error"]
    bad = run("sessions", "index", "--map", "colour=x", str(path))
    assert bad.exit_code == 2 and "--map key 'colour'" in bad.output


def test_parse_column_map():
    assert parse_column_map("role=sender, content=text,") == {"role": "sender", "content": "text"}
    with pytest.raises(ValueError, match="expected KEY=COLUMN"):
        parse_column_map("role")
