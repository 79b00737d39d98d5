"""Where indexed sessions came from, and which of those files are gone.

Agents delete and rotate their transcripts (Claude Code after ``cleanupPeriodDays``); the
index keeps every session it imported. These helpers tell the front ends which sessions'
source files no longer exist, so ``sessions list/show/sources`` can say "source deleted".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from hermes_store.sessions.storage import SessionStorage

SOURCE_DELETED = "source deleted"


def source_status(storage: SessionStorage, session_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``{session id: {"source_path", "source_deleted"}}`` for sessions imported from a file."""
    return {sid: {"source_path": path, "source_deleted": not os.path.lexists(path)}
            for sid, path in storage.session_source_paths(session_ids).items()}


def missing_sources(storage: SessionStorage) -> list[dict[str, Any]]:
    """Indexed files that no longer exist, each with the number of sessions kept from it."""
    gone = [row for row in storage.source_rows() if not os.path.lexists(row["path"])]
    counts = storage.session_counts([int(row["id"]) for row in gone])
    return [{"path": row["path"], "format": row["format"], "sessions": counts.get(int(row["id"]), 0)}
            for row in gone]
