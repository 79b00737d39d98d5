"""Issue 14 point 17: ids with NUL bytes do not split sessions; id collisions are reported truthfully."""

from __future__ import annotations

import json

import pytest

from hermes_store.sessions import SessionIndex, index_paths


def _summary(home, *paths, fmt="auto"):
    return index_paths(home, [str(p) for p in paths], format=fmt)


def test_nul_in_a_session_id_is_one_session_and_reported(home, tmp_path):
    from hermes_store.db import Database

    source = tmp_path / "chat.jsonl"
    lines = [{"role": "user", "content": "first question", "session_id": "abc\u0000def"},
             {"role": "assistant", "content": "first answer", "session_id": "abc\u0000def"}]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    summary = _summary(home, source, fmt="openai-jsonl")
    with Database(home.db_path) as db:
        ids = [r["session_id"] for r in db.query("SELECT DISTINCT session_id FROM messages")]
    assert len(ids) == 1 and "\x00" not in ids[0]
    assert summary["messages_added"] == 2
    assert any("NUL" in e["error"] and e["path"] == str(source) for e in summary["errors"]), summary


def test_live_session_ids_with_nul_are_refused(home):
    with SessionIndex(home) as index, pytest.raises(ValueError, match="NUL"):
        index.create_session("abc\x00def")


def test_a_colliding_id_is_reported_not_counted_as_already_indexed(home, tmp_path):
    first = tmp_path / "a" / "sessions" / "20260101_000000_aaaaaa.jsonl"
    other = tmp_path / "b" / "sessions" / "20260101_000000_aaaaaa.jsonl"  # same id, a different session
    for path, words in ((first, "alpha"), (other, "omega")):
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps({"role": "user", "content": f"{words} message {i}",
                                            "timestamp": f"2026-01-01T00:00:0{i}"}) + "\n" for i in range(6)),
                        encoding="utf-8")
    assert _summary(home, first)["messages_added"] == 6
    summary = _summary(home, other)
    assert summary["messages_added"] == 0 and summary["skipped"] == 0, summary
    assert any("already indexed from another file" in e["error"] and e["path"] == str(other)
               for e in summary["errors"]), summary
    copy = tmp_path / "c" / "sessions" / first.name  # an identical copy is already indexed, truthfully
    copy.parent.mkdir(parents=True)
    copy.write_bytes(first.read_bytes())
    again = _summary(home, copy)
    assert again["skipped"] == 6 and not again["errors"], again
