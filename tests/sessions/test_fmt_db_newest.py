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
    writer.hold("UPDATE session SET title = 'uncommitted'")
    try:
        before = _untouched(path)
        result = index(store, path)
        assert _untouched(path) == before
    finally:
        writer.close()
    assert all("msg_b1000003" in str(e) for e in result["errors"])  # the fixture's one damaged row
    assert session(store, sid)["title"] == "Paginate /users"
    stored = messages(store, sid)
    assert [(r["role"], r["content"]) for r in stored if "Goal" in r["content"]] == [
        ("system", "## Goal\nPaginate /users with a cursor.")]
