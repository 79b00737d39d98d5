"""Detection's content check is continued by the import: each new file is read once, and the
stored messages are exactly those of an import with the format given (no detection)."""

from __future__ import annotations

import json

from hermes_store.sessions.importers.hermes_jsonl import HermesJsonlImporter
from hermes_store.sessions.loader import BulkLoader


def _write(path, count: int, start: int = 0) -> None:
    lines = [] if start else [json.dumps({"role": "session_meta", "model": "m", "timestamp": 1767225600})]
    for i in range(start, start + count):
        if i % 3 == 1:
            call = {"id": f"c{i}", "type": "function",
                    "function": {"name": "terminal", "arguments": json.dumps({"command": f"ls dir{i}"})}}
            lines.append(json.dumps({"role": "assistant", "content": "", "tool_calls": [call],
                                     "timestamp": 1767225600 + i}))
        else:
            lines.append(json.dumps({"role": "user" if i % 3 == 0 else "tool", "content": f"message {i} token: Zq8vN3kkP1x9",
                                     "tool_call_id": f"c{i - 1}" if i % 3 == 2 else None,
                                     "timestamp": 1767225600 + i}))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def _messages(home, session_id: str) -> list[tuple]:
    with home.open_db() as db:
        from hermes_store.sessions import SessionIndex

        return [(m["seq"], m["role"], m["content"], m["tool_calls"], m["tool_name"])
                for m in SessionIndex(db).get_messages(session_id)]


def test_new_file_is_read_once_and_stored_as_with_format_given(engine, home, tmp_path, monkeypatch):
    auto_dir, forced_dir = tmp_path / "auto", tmp_path / "forced"
    auto_dir.mkdir()
    forced_dir.mkdir()
    sid = "20260101_000000_abcdef"
    _write(auto_dir / f"{sid}.jsonl", 450)  # past the 200 messages the content check reads
    reads: list[object] = []
    real_read = HermesJsonlImporter.read

    def counting_read(self, state):
        reads.append(state)
        return real_read(self, state)

    monkeypatch.setattr(HermesJsonlImporter, "read", counting_read)
    with home.open_db() as db:
        summary = BulkLoader(db).run([auto_dir])
    assert summary.messages_added == 450 and not summary.errors
    assert len(reads) == 1  # the detection read, continued by the import
    auto = _messages(home, sid)
    assert [m[0] for m in auto] == list(range(450))
    assert all("Zq8vN3kkP1x9" not in (m[2] or "") for m in auto)  # redacted all the same

    # appended lines: a known file resumes at its offset (a read of its own, not the check's)
    _write(auto_dir / f"{sid}.jsonl", 30, start=450)
    reads.clear()
    with home.open_db() as db:
        summary = BulkLoader(db).run([auto_dir])
    assert summary.messages_added == 30 and not summary.errors
    assert len(reads) == 2 and reads[-1].resume_at  # the check from the start, then the resumed read
    auto = _messages(home, sid)

    other = "20260101_000000_fedcba"  # the same transcript under another id, format given
    _write(forced_dir / f"{other}.jsonl", 450)
    _write(forced_dir / f"{other}.jsonl", 30, start=450)
    with home.open_db() as db:
        summary = BulkLoader(db).run([forced_dir], fmt="hermes-jsonl")
    assert summary.messages_added == 480
    forced = _messages(home, other)
    assert [m[:2] + m[3:] for m in forced] == [m[:2] + m[3:] for m in auto]
    assert [m[2] for m in forced] == [m[2] for m in auto]  # same markers: the same store key
