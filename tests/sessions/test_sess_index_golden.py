"""The bulk loader's output is pinned: the whole fixture tree plus a generated awkward corpus,
indexed in every loader mode, gives exactly the recorded message rows, FTS index entries and
MATCH results (``golden/index_digest.json``).

Speed work on the loader (detection, batching, the writer thread) must not change what is stored
or found. When a change is meant to alter the index, re-record with
``HERMES_STORE_RECORD_GOLDEN=1 .venv/bin/python -m pytest tests/sessions/test_sess_index_golden.py``
and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from sess_helpers import FIXTURES, write_jsonl

from hermes_store.db import Database
from hermes_store.sessions.loader import BulkLoader

GOLDEN = Path(__file__).parent / "golden" / "index_digest.json"
FIXED_MTIME = 1767225600  # 2026-01-01T00:00:00Z, every corpus file
QUERIES = ("error", "file", "read", "tool", "服务器", "日志", "🚀", "emoji1f680", "assistant", "session",
           "timeout OR connection", '"hello world"', "cafe", "python", "rollout")
MESSAGE_COLUMNS = "session_id, seq, role, content, tool_name, tool_calls, tool_call_id, timestamp, cjk"


def _awkward(root: Path) -> None:
    """Hermes JSONL sessions with what the write path treats specially: CJK and emoji (the
    projection column), tool output past the 8 KiB index cap, NUL bytes, lone surrogates,
    tool calls, more rows than one multi-row INSERT holds, a session split over batches."""
    sessions = root / "sessions"
    long_output = "".join(f"line {i}: tail marker zebra{i} " for i in range(900))  # > 8 KiB
    messages = [{"role": "session_meta", "model": "nous/hermes-4", "platform": "cli", "timestamp": 1767225600}]
    for i in range(450):
        kind = i % 6
        stamp = 1767225600 + i * 7
        if kind == 0:
            messages.append({"role": "user", "content": f"question {i}: 请帮我检查一下服务器的日志文件 🚀 ok",
                             "timestamp": stamp})
        elif kind == 1:
            messages.append({"role": "assistant", "content": "", "timestamp": stamp, "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{i}.py"})}}]})
        elif kind == 2:
            messages.append({"role": "tool", "tool_call_id": f"call_{i - 1}", "content": long_output,
                             "timestamp": stamp})
        elif kind == 3:
            messages.append({"role": "assistant", "content": f"Café {i} with NUL\u0000inside and 😀 smile",
                             "timestamp": stamp})
        elif kind == 4:
            messages.append({"role": "user", "content": f"lone \ud800 surrogate {i}, timeout connection",
                             "timestamp": stamp})
        else:
            messages.append({"role": "assistant", "content": f"hello world {i} 今日は東京で雨が降っています",
                             "timestamp": stamp})
    sessions.mkdir(parents=True)
    with open(sessions / "20260101_000000_a0a0a0.jsonl", "w", encoding="utf-8") as handle:
        for obj in messages:  # raw UTF-8 where it can be, \u escapes for the lone surrogates
            try:
                handle.write(json.dumps(obj, ensure_ascii=False).encode("utf-8").decode("utf-8") + "\n")
            except UnicodeEncodeError:
                handle.write(json.dumps(obj) + "\n")
    write_jsonl(sessions / "20260101_000001_b1b1b1.jsonl",
                [{"role": "user", "content": f"short {i} python error", "timestamp": 1767229200 + i}
                 for i in range(30)])


def _root_free(root: Path):
    """A function that takes the corpus location out of a text: the root itself, and the
    path digests some importers build session ids from (Aider: sha1 of the directory)."""
    names = {str(root): "<root>"}
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        digest = hashlib.sha1(str(folder.resolve()).encode("utf-8")).hexdigest()[:10]
        names[digest] = f"<sha1:{folder.relative_to(root)}>"

    def clean(value):
        if isinstance(value, str):
            for name, label in names.items():
                value = value.replace(name, label)
        return value
    return clean


def _digest(db: Database, root: Path) -> dict:
    clean = _root_free(root)
    rows = [tuple(clean(v) for v in row) for row in
            db.iter_rows(f"SELECT {MESSAGE_COLUMNS} FROM messages ORDER BY session_id, seq").fetchall()]
    rows.sort(key=lambda row: (row[0], row[1]))
    messages = hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()
    seq_of = {mid: [clean(sid), seq] for mid, sid, seq in db.iter_rows("SELECT id, session_id, seq FROM messages")}
    db.execute("CREATE VIRTUAL TABLE temp.golden_vocab USING fts5vocab(main, messages_fts, 'instance')")
    try:
        entries = sorted((term, seq_of[doc], col, offset) for term, doc, col, offset
                         in db.iter_rows("SELECT term, doc, col, offset FROM temp.golden_vocab"))
    finally:
        db.execute("DROP TABLE temp.golden_vocab")
    index = hashlib.sha256(json.dumps(entries, ensure_ascii=False).encode("utf-8")).hexdigest()
    sessions = sorted(tuple(clean(v) for v in row) for row in db.iter_rows(
        "SELECT id, title, model, started_at, ended_at, parent_session_id, message_count FROM sessions"))
    return {
        "messages": len(rows),
        "messages_sha256": messages,
        "index_entries": len(entries),
        "index_sha256": index,
        "sessions_sha256": hashlib.sha256(json.dumps(sessions, ensure_ascii=False).encode()).hexdigest(),
        "matches": {q: _matches(db, q, seq_of) for q in QUERIES},
    }


def _matches(db: Database, query: str, seq_of: dict[int, list]) -> list[list]:
    from hermes_store.query import compile_query
    from hermes_store.sessions.storage import Filters, open_session_storage

    match = compile_query(query).strict_match
    hits = open_session_storage(db).hits(match, Filters(), sort="newest", budget=10_000)
    return sorted(seq_of[h.message_id] for h in hits)


@pytest.fixture
def corpus(tmp_path, state_db) -> list[Path]:
    """Every fixture file named explicitly (hidden agent directories included), a Hermes
    state.db and the awkward corpus as a directory walk."""
    root = tmp_path / "in"
    shutil.copytree(FIXTURES, root / "fixtures")
    _awkward(root / "awkward")
    # a file's mtime is checkout time; importers that read it (Gemini CLI checkpoints carry no
    # time of their own) would make the digest depend on when the tree was cloned
    for path in [root, *root.rglob("*")]:
        os.utime(path, (FIXED_MTIME, FIXED_MTIME), follow_symlinks=False)
    files = sorted(p for p in (root / "fixtures").rglob("*") if p.is_file() and p.suffix != ".sql")
    return [*files, state_db, root / "awkward"]


@pytest.mark.parametrize(("fts_mode", "pipeline", "batch"), [
    ("batch", True, 20_000), ("batch", False, 20_000), ("batch", True, 97), ("trigger", True, 20_000)])
def test_index_matches_recorded_digest(corpus, tmp_path, fts_mode, pipeline, batch):
    with Database(tmp_path / "store.db") as db:
        summary = BulkLoader(db, fts_mode=fts_mode, pipeline=pipeline, batch_messages=batch).run(corpus)
        assert summary.messages_added > 700
        got = _digest(db, tmp_path / "in")
        got["messages_added"] = summary.messages_added
        got["sessions_added"] = summary.sessions_added
    if os.environ.get("HERMES_STORE_RECORD_GOLDEN") and (fts_mode, pipeline, batch) == ("batch", True, 20_000):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert got["matches"] == expected["matches"]
    assert got == expected
