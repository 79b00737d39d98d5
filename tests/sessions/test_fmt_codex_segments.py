"""Codex segment rotation: one thread's rollout in several files. The live rollout is frozen into
``<codex home>/<segments dir>/<thread>/<segment>/<same name>`` and written again from a
``session_meta`` and a ``rollout_reference`` to that segment (openai/codex ``codex-rs/rollout``).
Before, re-indexing the rotated live file dropped the messages indexed from it before the
rotation, and the segment indexed on its own was refused as a second file claiming the thread."""

from __future__ import annotations

import json
from pathlib import Path

from format_helpers import index, messages, session

from hermes_store.sessions import detect_format

THREAD = "019a7e00-aaaa-7bbb-8ccc-0000000000aa"
NAME = f"rollout-2026-11-04T08-00-00-{THREAD}.jsonl"
SEG_1 = "11111111-0000-4000-8000-000000000001"
SEG_2 = "22222222-0000-4000-8000-000000000002"


def _meta(segment: str, at: str) -> dict:
    return {"timestamp": at, "type": "session_meta",
            "payload": {"id": THREAD, "timestamp": "2026-11-04T08:00:00Z", "cwd": "/srv/atlas",
                        "segment_id": segment, "history_mode": "paginated"}}


def _say(role: str, text: str, at: str) -> dict:
    kind = "input_text" if role == "user" else "output_text"
    return {"timestamp": at, "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}}


def _reference(path: Path | str, segment: str) -> dict:
    return {"timestamp": "2026-11-04T09:00:00Z", "type": "rollout_reference",
            "payload": {"rollout_path": str(path), "thread_id": THREAD, "segment_id": segment}}


def _write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _said(store) -> list[tuple[str, str]]:
    return [(r["role"], r["content"]) for r in messages(store, THREAD)]


FIRST = [("user", "map the tide tables"), ("assistant", "Tide tables mapped for the north pier.")]
SECOND = [("user", "now chart the reef soundings"), ("assistant", "Reef soundings charted at two metres.")]


def test_a_rotated_rollout_keeps_every_message(store, tmp_path):
    home = tmp_path / ".codex"
    live = _write(home / "sessions/2026/11/04" / NAME, [
        _meta(SEG_1, "2026-11-04T08:00:00Z"),
        _say("user", "map the tide tables", "2026-11-04T08:00:01Z"),
        _say("assistant", "Tide tables mapped for the north pier.", "2026-11-04T08:00:02Z")])
    assert index(store, home)["errors"] == []
    assert _said(store) == FIRST
    # rotation: the live file is frozen as a segment and written again, referencing it
    segment = home / "rollout-segments" / THREAD / SEG_1 / NAME
    segment.parent.mkdir(parents=True)
    live.rename(segment)
    _write(live, [
        _meta(SEG_2, "2026-11-04T09:00:00Z"), _reference(segment, SEG_1),
        _say("user", "now chart the reef soundings", "2026-11-04T09:00:01Z"),
        _say("assistant", "Reef soundings charted at two metres.", "2026-11-04T09:00:02Z")])
    assert detect_format(segment) == "codex"
    summary = index(store, home)  # the segment is walked too: read through the live file, no collision
    assert summary["errors"] == []
    assert _said(store) == FIRST + SECOND
    assert session(store, THREAD)["workspace"] == "/srv/atlas"
    assert index(store, home)["messages_added"] == 0  # nothing stored twice on a later run


def test_a_chain_of_segments_in_a_moved_codex_home(store, tmp_path):
    """Segments that continue older segments are followed in order; a reference whose recorded path
    is gone (the Codex home was copied elsewhere) is found by its thread, segment and file name."""
    home = tmp_path / "backup" / ".codex"
    old = "/home/ana/.codex/rollout-segments"
    first = _write(home / "rollout-segments" / THREAD / "initial" / NAME, [
        {**_meta(SEG_1, "2026-11-04T08:00:00Z"), "payload": {"id": THREAD, "cwd": "/srv/atlas"}},
        _say("user", "map the tide tables", "2026-11-04T08:00:01Z"),
        _say("assistant", "Tide tables mapped for the north pier.", "2026-11-04T08:00:02Z")])
    _write(home / "rollout-segments" / THREAD / SEG_1 / NAME, [
        _meta(SEG_1, "2026-11-04T08:30:00Z"),
        {**_reference(f"{old}/{THREAD}/initial/{NAME}", "initial"),
         "payload": {"rollout_path": f"{old}/{THREAD}/initial/{NAME}", "thread_id": THREAD}},
        _say("user", "now chart the reef soundings", "2026-11-04T08:30:01Z")])
    live = _write(home / "sessions/2026/11/04" / NAME, [
        _meta(SEG_2, "2026-11-04T09:00:00Z"), _reference(f"{old}/{THREAD}/{SEG_1}/{NAME}", SEG_1),
        _say("assistant", "Reef soundings charted at two metres.", "2026-11-04T09:00:02Z")])
    assert first.is_file()
    assert index(store, live)["errors"] == []
    assert _said(store) == FIRST + SECOND


def test_a_missing_segment_is_reported_and_the_rest_read(store, tmp_path):
    live = _write(tmp_path / ".codex/sessions/2026/11/04" / NAME, [
        _meta(SEG_2, "2026-11-04T09:00:00Z"), _reference(tmp_path / "gone" / NAME, SEG_1),
        _say("user", "now chart the reef soundings", "2026-11-04T09:00:01Z"),
        _say("assistant", "Reef soundings charted at two metres.", "2026-11-04T09:00:02Z")])
    errors = index(store, live)["errors"]
    assert [e["line"] for e in errors] == [2] and "rotated segment" in errors[0]["error"]
    assert _said(store) == SECOND
