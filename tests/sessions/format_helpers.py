"""Helpers for the per-format importer tests (new agents' formats)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from hermes_store.sessions import SessionIndex, index_paths

SQL_DIR = Path(__file__).parent / "fixture_sql"  # SQL scripts the binary database fixtures are built from


def ts(text: str) -> float:
    """Epoch seconds of an ISO-8601 UTC timestamp such as ``2026-01-20T08:15:09.310Z``."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def index(store, path: Path, fmt: str = "auto") -> dict:
    """Index one path and return the summary dict."""
    return index_paths(store, [path], format=fmt)


def messages(store, session_id: str) -> list[dict]:
    """The session's messages, ``tool_calls`` decoded to a list of (name, arguments) pairs."""
    rows = SessionIndex(store).get_messages(session_id)
    for row in rows:
        calls = json.loads(row["tool_calls"]) if row["tool_calls"] else []
        row["calls"] = [(c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"), c.get("id"))
                        for c in calls]
    return rows


def session(store, session_id: str) -> dict | None:
    """The stored session row."""
    return SessionIndex(store).get_session(session_id)


def roles(rows: list[dict]) -> list[str]:
    """The role of every message, in order."""
    return [row["role"] for row in rows]


def build_sqlite(sql_file: Path, target: Path) -> Path:
    """Create the SQLite database ``target`` from the SQL script ``sql_file`` (a fixture)."""
    from hermes_store.db import Database

    target.parent.mkdir(parents=True, exist_ok=True)
    db = Database(target, migrate=False)
    db.execute(sql_file.read_text(encoding="utf-8"))
    db.close()
    return target

