"""Session index upkeep: delete, lineage-aware prune, stats, and FTS health checks.

Deletes go through ordinary ``DELETE`` statements so the schema's triggers
keep ``messages_fts`` consistent (the external-content ``'delete'`` command
receives exactly the values that were indexed).
"""

from __future__ import annotations

import re
import time
from typing import Any

from hermes_store.db import Database
from hermes_store.sessions.rows import SessionNotFound, cjk_for

_FTS5 = re.compile(r"\busing\s+fts5\b", re.I)


def delete_session(db: Database, session_id: str) -> int:
    """Delete a session and its messages; its children are re-attached to its parent.

    Returns the number of messages removed. Raises SessionNotFound.
    """
    with db.write():
        row = db.query_one("SELECT parent_session_id FROM sessions WHERE id=?", (session_id,))
        if row is None:
            raise SessionNotFound(session_id)
        removed = int(db.scalar("SELECT COUNT(*) FROM messages WHERE session_id=?", (session_id,)))
        db.execute("DELETE FROM messages WHERE session_id=?", (session_id,))
        db.execute("UPDATE sessions SET parent_session_id=? WHERE parent_session_id=?",
                   (row["parent_session_id"], session_id))
        db.execute("DELETE FROM sessions WHERE id=?", (session_id,))
    return removed


def lineages(db: Database) -> list[list[dict[str, Any]]]:
    """Sessions grouped by lineage (connected through ``parent_session_id``).

    Each session dict has ``id``, ``parent_session_id``, ``origin_format``,
    ``ended_at`` and ``last_active`` (ended_at, else the newest message, else started_at).
    """
    rows = db.query(
        "SELECT s.id, s.parent_session_id, s.origin_format, s.ended_at, s.started_at,"
        " CASE WHEN s.ended_at IS NULL THEN (SELECT MAX(m.timestamp) FROM messages m"
        "   WHERE m.session_id = s.id) END AS last_message FROM sessions s")
    parent: dict[str, str] = {row["id"]: row["id"] for row in rows}

    def find(node: str) -> str:
        root = node
        while parent[root] != root:
            root = parent[root]
        while parent[node] != root:
            parent[node], node = root, parent[node]
        return root

    for row in rows:
        up = row["parent_session_id"]
        if up and up in parent:
            a, b = find(row["id"]), find(up)
            if a != b:
                parent[a] = b
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        candidates = [v for v in (row["ended_at"], row["last_message"], row["started_at"]) if v is not None]
        row["last_active"] = max(candidates) if candidates else None
        groups.setdefault(find(row["id"]), []).append(row)
    return list(groups.values())


def prune_sessions(db: Database, older_than: float, *, dry_run: bool = False,
                   now: float | None = None) -> list[str]:
    """Delete whole lineages whose every session was last active more than ``older_than``
    seconds ago. Live sessions that were never ended keep their lineage. Returns the ids
    deleted (or that would be, with ``dry_run``)."""
    cutoff = (now if now is not None else time.time()) - float(older_than)
    doomed: list[str] = []
    for group in lineages(db):
        if all(_prunable(row, cutoff) for row in group):
            doomed.extend(row["id"] for row in group)
    if dry_run or not doomed:
        return doomed
    for start in range(0, len(doomed), 500):
        chunk = doomed[start:start + 500]
        marks = ",".join("?" * len(chunk))
        with db.write():
            db.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", chunk)
            db.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
    return doomed


def _prunable(row: dict[str, Any], cutoff: float) -> bool:
    if row["origin_format"] == "live" and row["ended_at"] is None:
        return False
    return row["last_active"] is not None and row["last_active"] < cutoff


def stats(db: Database) -> dict[str, Any]:
    """``sessions``, ``messages``, ``per_source`` ({source: {sessions, messages}}),
    ``sources_indexed`` (files), ``db_bytes`` and ``index_bytes`` (the FTS shadow tables)."""
    per_source: dict[str, dict[str, int]] = {}
    for row in db.query("SELECT source, COUNT(*) AS sessions, COALESCE(SUM(message_count), 0)"
                        " AS messages FROM sessions GROUP BY source ORDER BY source"):
        per_source[row["source"]] = {"sessions": int(row["sessions"]), "messages": int(row["messages"])}
    try:
        index_bytes = int(db.scalar(
            "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name LIKE 'messages_fts%'") or 0)
    except Exception:  # dbstat missing from this SQLite build
        index_bytes = None
    return {
        "sessions": int(db.scalar("SELECT COUNT(*) FROM sessions")),
        "messages": int(db.scalar("SELECT COUNT(*) FROM messages")),
        "per_source": per_source,
        "sources_indexed": int(db.scalar("SELECT COUNT(*) FROM sources")),
        "db_bytes": db.size_bytes(),
        "index_bytes": index_bytes,
    }


# --------------------------------------------------------------------------- health


def fts_tables(db: Database) -> list[str]:
    """Names of every FTS5 table in the database."""
    rows = db.query("SELECT name, sql FROM sqlite_schema WHERE type='table' AND sql IS NOT NULL")
    return [row["name"] for row in rows if _FTS5.search(row["sql"] or "")]


def integrity_check(db: Database) -> list[str]:
    """Problems reported by ``PRAGMA integrity_check`` (empty when the file is sound)."""
    rows = [str(r[0]) for r in db.execute("PRAGMA integrity_check")]
    return [] if rows == ["ok"] else rows


def fts_integrity(db: Database, table: str) -> str | None:
    """Run FTS5's ``integrity-check`` (comparing against the content table); None when it passes."""
    try:
        db.execute(f'INSERT INTO "{table}"("{table}", rank) VALUES (\'integrity-check\', 1)')
    except Exception as exc:
        return str(exc)
    return None


def fts_rebuild(db: Database, table: str) -> None:
    """Rebuild one FTS5 index from its content table."""
    with db.write():
        db.execute(f'INSERT INTO "{table}"("{table}") VALUES (\'rebuild\')')


def match_probe(db: Database) -> str | None:
    """Search for a word of a stored message with MATCH + snippet; None when it is found."""
    row = db.query_one(
        "SELECT id, content FROM messages WHERE role <> 'tool' AND length(content) > 3"
        " ORDER BY id DESC LIMIT 1")
    if row is None:
        return None
    words = re.findall(r"[^\W_]{3,}", row["content"][:2000])
    if not words:
        return None
    term = '"' + words[0].replace('"', '""') + '"'
    try:
        hits = db.query(
            "SELECT rowid, snippet(messages_fts, 0, '[', ']', '...', 8) AS snip FROM messages_fts"
            " WHERE messages_fts MATCH ? AND rowid = ?", (f"content:{term}", row["id"]))
    except Exception as exc:
        return f"MATCH failed: {exc}"
    if not hits or "[" not in (hits[0]["snip"] or ""):
        return f"message {row['id']} is not found by searching for {words[0]!r}"
    return None


BACKFILL_KEY = "sessions_projection_backfill"
BACKFILL_CHUNK = 2000


def backfill_projection(db: Database, *, chunk: int = BACKFILL_CHUNK) -> int:
    """Recompute the ``cjk`` projection of stored messages when a migration asked for it.

    Migration 0007 records :data:`BACKFILL_KEY` in ``store_meta`` (emoji joined
    the projection). Only messages with non-ASCII text can change; they are
    visited in id order, in chunks of one transaction each, and updated where
    the projection differs (the update trigger re-indexes them). The key is
    removed at the end, so an interrupted backfill resumes from the start.
    Returns the number of messages updated.
    """
    if not db.table_exists("messages") or db.scalar(
            "SELECT value FROM store_meta WHERE key = ?", (BACKFILL_KEY,)) is None:
        return 0
    updated = 0
    last_id = 0
    while True:
        rows = db.query(
            "SELECT id, role, content, cjk FROM messages WHERE id > ?"
            " AND length(CAST(content AS BLOB)) <> length(content) ORDER BY id LIMIT ?",
            (last_id, chunk))
        if not rows:
            break
        last_id = int(rows[-1]["id"])
        changes = [(new, row["id"]) for row in rows
                   if (new := cjk_for(str(row["role"]), str(row["content"]))) != row["cjk"]]
        if changes:
            with db.write():
                db.executemany("UPDATE messages SET cjk = ? WHERE id = ?", changes)
            updated += len(changes)
    with db.write():
        db.execute("DELETE FROM store_meta WHERE key = ?", (BACKFILL_KEY,))
    return updated
