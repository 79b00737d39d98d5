"""Session index upkeep: delete, lineage-aware prune, stats, and full-text health checks.

The policy lives here (which lineages may go, what counts as activity); the
reads and writes go through the session storage
(:mod:`hermes_store.sessions.storage`), whose SQLite implementation deletes
with ordinary ``DELETE`` statements so the schema's triggers keep
``messages_fts`` consistent.
"""

from __future__ import annotations

import time
from typing import Any

from hermes_store.db import Database
from hermes_store.sessions.storage import SessionStorage, open_session_storage


def _storage(db: Database | SessionStorage) -> SessionStorage:
    return db if isinstance(db, SessionStorage) else open_session_storage(db)


def delete_session(db: Database | SessionStorage, session_id: str) -> int:
    """Delete a session and its messages; its children are re-attached to its parent.

    Returns the number of messages removed. Raises SessionNotFound.
    """
    return _storage(db).delete_session(session_id)


def lineages(db: Database | SessionStorage) -> list[list[dict[str, Any]]]:
    """Sessions grouped by lineage (connected through ``parent_session_id``).

    Each session dict has ``id``, ``parent_session_id``, ``origin_format``,
    ``ended_at`` and ``last_active`` (ended_at, else the newest message, else started_at).
    """
    rows = _storage(db).lineage_rows()
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


def prune_sessions(db: Database | SessionStorage, older_than: float, *, dry_run: bool = False,
                   now: float | None = None) -> list[str]:
    """Delete whole lineages whose every session was last active more than ``older_than``
    seconds ago. Live sessions that were never ended keep their lineage. Returns the ids
    deleted (or that would be, with ``dry_run``)."""
    storage = _storage(db)
    cutoff = (now if now is not None else time.time()) - float(older_than)
    doomed: list[str] = []
    for group in lineages(storage):
        if all(_prunable(row, cutoff) for row in group):
            doomed.extend(row["id"] for row in group)
    if dry_run or not doomed:
        return doomed
    storage.delete_sessions(doomed)
    return doomed


def _prunable(row: dict[str, Any], cutoff: float) -> bool:
    if row["origin_format"] == "live" and row["ended_at"] is None:
        return False
    return row["last_active"] is not None and row["last_active"] < cutoff


def stats(db: Database | SessionStorage) -> dict[str, Any]:
    """``sessions``, ``messages``, ``per_source`` ({source: {sessions, messages}}),
    ``sources_indexed`` (files), ``db_bytes`` and ``index_bytes`` (the full-text index)."""
    return _storage(db).stats()


# --------------------------------------------------------------------------- health


def fts_tables(db: Database | SessionStorage) -> list[str]:
    """Names of every full-text index in the database (every area's)."""
    return _storage(db).text_indexes()


def integrity_check(db: Database | SessionStorage) -> list[str]:
    """Problems reported by the engine's consistency check (empty when the file is sound)."""
    return _storage(db).integrity_problems()


def fts_integrity(db: Database | SessionStorage, table: str) -> str | None:
    """Check one full-text index against its content; None when it passes."""
    return _storage(db).check_text_index(table)


def fts_rebuild(db: Database | SessionStorage, table: str) -> None:
    """Rebuild one full-text index from its content."""
    _storage(db).rebuild_text_index(table)


def index_ready(db: Database | SessionStorage) -> bool:
    """True when the session index exists in the database."""
    return _storage(db).ready()


def rebuild_message_index(db: Database | SessionStorage) -> None:
    """Rebuild the full-text index over messages."""
    _storage(db).rebuild_message_index()


def match_probe(db: Database | SessionStorage) -> str | None:
    """Search for a word of a stored message and check the hit is highlighted; None when found."""
    return _storage(db).probe_search()


BACKFILL_KEY = "sessions_projection_backfill"  # the store_meta marker migration 0007 writes
BACKFILL_CHUNK = 2000


def backfill_projection(db: Database | SessionStorage, *, chunk: int = BACKFILL_CHUNK) -> int:
    """Recompute the search projection of stored messages when a migration asked for it.

    Migration 0007 records :data:`BACKFILL_KEY` in ``store_meta`` when a store
    already holds messages (emoji joined the projection). Only messages with
    non-ASCII text can change; they are visited in id order, one transaction
    per chunk, and updated where the projection differs (the update trigger
    re-indexes them). The marker is removed at the end, so an interrupted
    backfill starts again next time. Returns the number of messages updated.
    """
    return _storage(db).backfill_projection(chunk)


def backfill_calls(db: Database | SessionStorage, *, chunk: int = BACKFILL_CHUNK) -> int:
    """Fill the tool-call text, tool names and boilerplate-free text of messages stored before
    they existed (SQLite migration 0010, PostgreSQL 0008 leave a marker in ``store_meta``);
    the number of messages updated. The marker goes at the end, so an interrupted backfill
    starts again next time."""
    return _storage(db).backfill_calls(chunk)
