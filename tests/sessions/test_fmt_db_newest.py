"""Other programs' databases in their newest schemas, read while their writer holds them open."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from format_helpers import SQL_DIR, index, messages, session


class Writer:
    """The agent itself: a WAL-mode connection holding a write transaction open during the read."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")

    def hold(self, sql: str) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute(sql)

    def close(self) -> None:
        self.conn.execute("ROLLBACK")
        self.conn.close()


def _untouched(path: Path) -> tuple[int, bytes, list[str]]:
    return path.stat().st_mtime_ns, path.read_bytes(), sorted(p.name for p in path.parent.iterdir())


def _index_while_held(store, path: Path, writer, statement: str) -> dict:
    """Index ``path`` while ``writer`` holds ``statement`` uncommitted; the file is left as it was."""
    writer.hold(statement)
    try:
        before = _untouched(path)
        result = index(store, path)
        assert _untouched(path) == before
    finally:
        writer.close()
    return result


def test_opencode_compaction_summary_is_a_system_row(store, tmp_path):
    """OpenCode's compaction (anomalyco/opencode ``packages/opencode/src/session/compaction.ts``): a user
    message holding a ``compaction`` part, then an assistant message ``{summary: true, mode:
    "compaction", agent: "compaction"}`` whose text parts are the summary. That summary is
    OpenCode's, not the model's answer to the user: a ``system`` row (it was an ``assistant`` row)."""
    path = tmp_path / "opencode" / "opencode.db"
    path.parent.mkdir()
    writer = Writer(path)
    writer.conn.executescript((SQL_DIR / "opencode_db.sql").read_text(encoding="utf-8"))
    sid = "ses_6a7b8c9d0ffeDbSess1"
    header = {"role": "assistant", "parentID": "msg_d0000001", "mode": "compaction", "agent": "compaction",
              "summary": True, "path": {"cwd": "/srv/api", "root": "/srv/api"}, "cost": 0,
              "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
              "modelID": "qwen/qwen3-coder", "providerID": "openrouter",
              "time": {"created": 1767001300000, "completed": 1767001310000}, "finish": "stop"}
    rows = [
        ("msg_d0000001", 1767001290000, {"role": "user", "time": {"created": 1767001290000}, "agent": "build",
                                          "model": {"providerID": "openrouter", "modelID": "qwen/qwen3-coder"}},
         [{"type": "compaction", "auto": True}]),
        ("msg_d0000002", 1767001300000, header,
         [{"type": "step-start"}, {"type": "text", "text": "## Goal\nPaginate /users with a cursor."},
          {"type": "step-finish", "reason": "stop", "cost": 0}]),
    ]
    for n, (mid, created, data, parts) in enumerate(rows):
        writer.conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, created, created, json.dumps(data)))
        for k, part in enumerate(parts):
            writer.conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                                (f"prt_9{n}{k}", mid, sid, created, created, json.dumps(part)))
    result = _index_while_held(store, path, writer, "UPDATE session SET title = 'uncommitted'")
    assert all("msg_b1000003" in str(e) for e in result["errors"])  # the fixture's one damaged row
    assert session(store, sid)["title"] == "Paginate /users"
    stored = messages(store, sid)
    assert [(r["role"], r["content"]) for r in stored if "Goal" in r["content"]] == [
        ("system", "## Goal\nPaginate /users with a cursor.")]


def test_cursor_subagents_and_all_thinking_blocks(store, tmp_path):
    """Cursor's state.vscdb (readers of real databases: a parent composer lists the subagent composers
    it started in ``subagentComposerIds`` / ``subComposerIds``, the child's header says
    ``isSubagent``; bubbles may carry their thinking as ``allThinkingBlocks: [{text}]``). The
    subagent is a child session of its parent whatever their key order (it was a top-level session),
    and that thinking is a ``reasoning`` row (it was lost). Read while Cursor holds a WAL transaction;
    a damaged bubble is reported naming its composer, the rest kept."""
    path = tmp_path / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    path.parent.mkdir(parents=True)
    writer = Writer(path)
    writer.conn.executescript("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
                              "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);")
    parent, child = "f1e2d3c4-0000-4000-8000-000000000001", "0a1b2c3d-0000-4000-8000-000000000002"

    def put(key: str, value: object) -> None:
        writer.conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key, json.dumps(value).encode()))

    put(f"composerData:{parent}", {"_v": 10, "composerId": parent, "name": "Speed up the build",
                                   "createdAt": 1796000000000, "lastUpdatedAt": 1796000900000,
                                   "subagentComposerIds": [child],
                                   "fullConversationHeadersOnly": [{"bubbleId": "p1", "type": 1},
                                                                   {"bubbleId": "p2", "type": 2},
                                                                   {"bubbleId": "p3", "type": 2}]})
    put(f"bubbleId:{parent}:p1", {"_v": 3, "type": 1, "bubbleId": "p1", "text": "why is the build slow?",
                                  "createdAt": "2026-12-07T10:00:00.000Z"})
    put(f"bubbleId:{parent}:p2", {"_v": 3, "type": 2, "bubbleId": "p2", "text": "Webpack runs twice.",
                                  "allThinkingBlocks": [{"text": "Check the CI log first.", "signature": "x"}],
                                  "createdAt": "2026-12-07T10:00:05.000Z"})
    writer.conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{parent}:p3", b'{"type": 2, "te'))
    put(f"composerData:{child}", {"_v": 10, "composerId": child, "name": "Explore the build config",
                                  "createdAt": 1796000100000,
                                  "fullConversationHeadersOnly": [{"bubbleId": "c1", "type": 1}]})
    put(f"bubbleId:{child}:c1", {"_v": 3, "type": 1, "bubbleId": "c1", "text": "find every webpack invocation",
                                 "createdAt": "2026-12-07T10:00:02.000Z"})
    result = _index_while_held(store, path, writer, "INSERT INTO ItemTable VALUES ('uncommitted', 'x')")
    assert [str(e) for e in result["errors"]] and all(parent in str(e) for e in result["errors"])
    assert session(store, child)["parent_session_id"] == parent
    assert session(store, parent)["parent_session_id"] is None
    assert [(r["role"], r["content"]) for r in messages(store, parent)] == [
        ("user", "why is the build slow?"), ("reasoning", "Check the CI log first."),
        ("assistant", "Webpack runs twice.")]


def test_commits_in_a_wal_without_its_shm_are_read_and_nothing_is_left_beside_it(tmp_path):
    """A copy of a stopped program's folder can hold ``x.db`` and ``x.db-wal`` (commits not yet
    checkpointed) without ``x.db-shm``. Those commits are read (an immutable open skipped them
    silently), from a private copy: no -shm is created beside the file, the copy is removed."""
    import tempfile

    from hermes_store.foreign_db import ForeignDB

    source, copy = tmp_path / "live", tmp_path / "copy"
    source.mkdir()
    copy.mkdir()
    conn = sqlite3.connect(source / "x.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE t (v TEXT)")
    conn.execute("INSERT INTO t VALUES ('checkpointed')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("INSERT INTO t VALUES ('only in the wal')")
    for name in ("x.db", "x.db-wal"):
        (copy / name).write_bytes((source / name).read_bytes())
    conn.close()
    before = sorted(p.name for p in copy.iterdir())
    temps = set(Path(tempfile.gettempdir()).glob("hermes-foreign-*"))
    db = ForeignDB(copy / "x.db")
    try:
        assert [r["v"] for r in db.query("SELECT v FROM t")] == ["checkpointed", "only in the wal"]
    finally:
        db.close()
    assert sorted(p.name for p in copy.iterdir()) == before == ["x.db", "x.db-wal"]
    assert set(Path(tempfile.gettempdir()).glob("hermes-foreign-*")) == temps
