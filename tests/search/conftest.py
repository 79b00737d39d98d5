"""Fixtures for search tests: a store filled by direct SQL (no importer needed)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from hermes_store.query import cjk_projection

DAY = 86400.0
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def add_session(db, sid: str, messages: Sequence[tuple[str, str]], *, source: str = "cli",
                title: str | None = None, parent: str | None = None, start: float = T0,
                meta: dict | None = None, step: float = 60.0, model: str | None = "test-model",
                ended_at: float | None = None) -> list[int]:
    """Insert a session and its messages (role, content[, {tool_name, tool_calls, tool_call_id}]);
    returns the message ids in order."""
    ids = []
    with db.write():
        db.execute(
            "INSERT INTO sessions(id, origin_format, source, title, model, started_at, ended_at, "
            "parent_session_id, message_count, meta) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (sid, "live", source, title, model, start, ended_at, parent, len(messages), json.dumps(meta or {})),
        )
        for seq, (role, content, *extra) in enumerate(messages):
            fields = extra[0] if extra else {}
            db.execute(
                "INSERT INTO messages(session_id, seq, role, content, tool_name, tool_calls, tool_call_id, "
                "timestamp, cjk) VALUES (?,?,?,?,?,?,?,?,?)",
                (sid, seq, role, content, fields.get("tool_name"), fields.get("tool_calls"),
                 fields.get("tool_call_id"), start + seq * step, cjk_projection(content)),
            )
            ids.append(db.conn.last_insert_rowid())
        db.execute("INSERT INTO messages_fts(messages_fts) VALUES('rebuild')")
    return ids


@pytest.fixture
def db(home):
    """The home's store database (migrated, empty)."""
    database = home.open_db()
    yield database
    database.close()
