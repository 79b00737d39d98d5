"""One transcript directory holding every kind of bad input, imported in one run.

Bad lines and bad files are listed in the summary's ``errors`` with their path
(and line where there is one); every good message around them is imported, and
a second run adds nothing and loses nothing.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from rel_helpers import db_problems

from hermes_store.db import Database
from hermes_store.sessions import SessionIndex, index_paths

BIG_CHARS = 50 * 1024 * 1024


def _line(obj) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _good(tag: str, i: int) -> dict:
    return {"role": "user" if i % 2 == 0 else "assistant", "content": f"{tag} good message {i}"}


def _build(root: Path) -> dict[str, int]:
    """Write the corpus; returns ``{session_id: good messages it must end up with}``."""
    root.mkdir(parents=True)
    expected: dict[str, int] = {}

    def write(sid: str, chunks: list[bytes], good: int) -> None:
        (root / f"{sid}.jsonl").write_bytes(b"".join(chunks))
        expected[sid] = good

    g = _good
    write("20260101_000000_good01", [_line(g("plain", i)) for i in range(5)], 5)
    write("20260101_000000_trunc1", [_line(g("trunc", 0)), b'{"role": "user", "content": "cut of\n',
                                     _line(g("trunc", 2)), b'{"role": "assistant", "con'], 2)
    write("20260101_000000_utf8aa", [_line(g("utf8", 0)), b'{"role": "user", "content": "caf\xe9 \xff"}\n',
                                     _line(g("utf8", 2))], 3)
    write("20260101_000000_nul001", [b'{"role": "user", "content": "raw \x00 nul"}\n',
                                     b'{"role": "assistant", "content": "escaped \\u0000 nul"}\n',
                                     _line(g("nul", 2))], 3)
    write("20260101_000000_surr01", [b'{"role": "user", "content": "lone \\ud800 high"}\n',
                                     b'{"role": "assistant", "content": "lone \\udfff low"}\n',
                                     b'{"role": "user", "content": "ok", "tool_call_id": "\\ud83d"}\n'], 3)
    big = {"role": "tool", "content": "x" * BIG_CHARS}
    write("20260101_000000_big050", [_line(g("big", 0)), _line(big), _line(g("big", 2))], 3)
    depth = 200_000
    write("20260101_000000_nested", [_line(g("nest", 0)), b"[" * depth + b"]" * depth + b"\n",
                                     b'{"role": "user", "content": ' + b'{"text": ' * 5000 + b'"x"'
                                     + b"}" * 5000 + b"}\n",
                                     b'{"role": "user", "content": ' + b'{"text": ' * 900 + b'"deep"'
                                     + b"}" * 900 + b"}\n", _line(g("nest", 4))], 2)
    # a corrupt first line (within the 256 KiB format probe) must not hide the rest of the file
    write("20260101_000000_deep1s", [b"[" * 100_000 + b"]" * 100_000 + b"\n", _line(g("deep1st", 1))], 1)
    # ... nor a first line longer than the probe, in a file named like a Hermes session
    write("20260101_000000_0badf1", [b'{"role": "user", "content": "' + b"y" * 400_000 + b'"\n',
                                     _line(g("long1st", 1))], 1)
    (root / "session_20260101_000000_deepjs.json").write_bytes(b'{"messages": ' + b"[" * depth
                                                               + b"]" * depth + b"}")
    wrong = [
        {"role": 5, "content": "role is a number"},
        {"role": ["user"], "content": "role is a list"},
        {"role": "user", "content": 12345},
        {"role": "user", "content": None},
        {"role": "user", "content": {"unexpected": "object"}},
        {"role": "user", "content": "bad timestamp", "timestamp": "not a date"},
        {"role": "user", "content": "list timestamp", "timestamp": [1, 2]},
        {"role": "user", "content": "huge timestamp", "timestamp": 1e300},
        {"role": "assistant", "content": "calls", "tool_calls": "not a list"},
        {"role": "assistant", "content": "calls", "tool_calls": [1, None, {"id": 5, "function": 7}]},
        {"role": "tool", "content": "ids", "tool_call_id": {"x": 1}, "name": ["n"]},
        "a bare string line",
        [1, 2, 3],
        42,
        None,
    ]
    meta = {"role": "session_meta", "model": ["m"], "platform": 5, "title": {"t": 1},
            "parent_session_id": 7, "cwd": [], "timestamp": {}}
    write("20260101_000000_types1", [_line(meta), *[_line(w) for w in wrong], _line(g("types", 99))],
          # role-less / non-object lines are rejected; everything with a usable role is kept
          sum(1 for w in wrong if isinstance(w, dict) and isinstance(w.get("role"), str)) + 1)
    rng = random.Random(0)
    (root / "20260101_000000_binary.jsonl").write_bytes(bytes(rng.randrange(256) for _ in range(65536)))
    (root / "20260101_000000_empty0.jsonl").write_bytes(b"")
    sub = root / "nested_dir"
    sub.mkdir()
    (sub / "loop").symlink_to(root, target_is_directory=True)
    (sub / "20260101_000000_insub1.jsonl").write_bytes(b"".join(_line(g("sub", i)) for i in range(4)))
    expected["20260101_000000_insub1"] = 4
    return expected


def test_every_kind_of_bad_transcript(home, tmp_path):
    root = tmp_path / "sessions"
    expected = _build(root)
    summary = index_paths(home, [root])
    errors = summary["errors"]
    # every error names its path; line-level problems also their line
    assert errors and all(e["path"] and e["error"] for e in errors)
    by_file: dict[str, list] = {}
    for e in errors:
        by_file.setdefault(Path(e["path"]).stem, []).append(e)

    def lines(sid):
        return {e["line"] for e in by_file.get(sid, [])}

    assert 2 in lines("20260101_000000_trunc1")
    assert 2 in lines("20260101_000000_utf8aa")
    assert {1, 2} <= lines("20260101_000000_nul001")
    assert {1, 2} <= lines("20260101_000000_surr01")
    assert {2, 3} <= lines("20260101_000000_nested")
    assert len(lines("20260101_000000_types1")) >= 8
    assert by_file.get("20260101_000000_binary"), "binary file not reported"
    assert "20260101_000000_good01" not in by_file and "20260101_000000_insub1" not in by_file
    assert "20260101_000000_empty0" not in by_file or all(e["line"] is None for e in by_file["20260101_000000_empty0"])
    assert 1 in lines("20260101_000000_deep1s") and 1 in lines("20260101_000000_0badf1")
    assert by_file.get("session_20260101_000000_deepjs"), "deeply nested JSON file not reported"
    assert summary["files"] == 14  # the symlink loop did not make anything count twice

    # 900 levels parse as JSON: the message is imported or its line reported, never a crash
    expected["20260101_000000_nested"] += 0 if 4 in lines("20260101_000000_nested") else 1
    with SessionIndex(home) as index:
        for sid, good in expected.items():
            messages = index.get_messages(sid)
            assert len(messages) == good, (sid, len(messages), by_file.get(sid))
            for m in messages:
                assert "\x00" not in m["content"]
                m["content"].encode("utf-8")  # no lone surrogates survive
        big = index.get_messages("20260101_000000_big050")
        assert big[0]["content"] == "big good message 0" and big[2]["content"] == "big good message 2"
    assert db_problems(home.db_path) == []

    again = index_paths(home, [root])
    assert again["messages_added"] == 0 and again["sessions_added"] == 0
    db = Database(home.db_path)
    try:
        assert db.scalar("SELECT COUNT(*) FROM messages") >= sum(expected.values())
    finally:
        db.close()


def test_transcript_paths_never_written(home, tmp_path):
    """Session ids/paths inside transcripts never become write targets outside the home."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "t"
    root.mkdir()
    evil = [
        {"role": "session_meta", "cwd": "../../outside", "title": "../../../etc/passwd",
         "parent_session_id": "../../outside/pwned"},
        {"role": "user", "content": "hello", "tool_call_id": "../../outside/x"},
    ]
    (root / "20260101_000000_evil01.jsonl").write_bytes(b"".join(_line(o) for o in evil))
    claude = root / "claude" / "-tmp-proj"
    claude.mkdir(parents=True)
    (claude / "abc.jsonl").write_bytes(_line({
        "type": "user", "sessionId": "../../outside/owned", "cwd": str(outside),
        "message": {"role": "user", "content": "claude line"}, "uuid": "u1",
        "timestamp": "2026-01-01T00:00:00Z"}))
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    summary = index_paths(home, [root])
    assert summary["messages_added"] >= 2
    after = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    created = [p for p in after if p not in before and home.root not in p.parents and p != home.root]
    changed = [p for p in before if p.exists() and after.get(p) != before[p]
               and home.root not in p.parents and p != home.root and p.is_file()]
    assert created == [] and changed == []
    assert list(outside.iterdir()) == []
    assert not any(".." in p.name for p in home.root.rglob("*"))
