"""SessionIndex: the session store's write path and the live API an agent calls.

An agent can record a conversation as it happens, without any file::

    index = SessionIndex(home.open_db())
    sid = index.create_session(source="cli", model="gpt-4o", title="deploy fix")
    index.append_message(sid, "user", "why does deploy.sh fail?")
    index.append_message(sid, "assistant", "", tool_calls=[{...}])
    index.end_session(sid)

Every write is one short ``BEGIN IMMEDIATE`` transaction; the FTS index is
kept in step by the schema's triggers.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hermes_store.db import Database
from hermes_store.home import Home
from hermes_store.sessions.importers.base import MAX_CONTENT_CHARS, flatten_content
from hermes_store.sessions.loader import BulkLoader
from hermes_store.sessions.maintenance import delete_session as _delete_session
from hermes_store.sessions.maintenance import prune_sessions as _prune_sessions
from hermes_store.sessions.maintenance import stats as _stats
from hermes_store.sessions.rows import (
    SESSION_COLUMNS,
    SessionNotFound,
    cjk_for,
    new_session_id,
    scrub,
    session_row,
)

__all__ = ["SessionIndex", "SessionNotFound", "index_paths", "new_session_id", "open_database"]


def open_database(target: Database | Home | str | os.PathLike[str]) -> tuple[Database, bool]:
    """``(database, owned)``: reuse a Database, or open one for a Home / file path."""
    if isinstance(target, Database):
        return target, False
    if isinstance(target, Home):
        return target.open_db(), True
    return Database(Path(target)), True


class SessionIndex:
    """Read/write access to the indexed sessions in one store database."""

    def __init__(self, db: Database | Home | str | os.PathLike[str]) -> None:
        self.db, self._owned = open_database(db)

    def close(self) -> None:
        """Close the database if this object opened it."""
        if self._owned:
            self.db.close()

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- live API ---------------------------------------------------------------

    def create_session(
        self,
        session_id: str | None = None,
        *,
        source: str = "cli",
        title: str | None = None,
        model: str | None = None,
        workspace: str | None = None,
        started_at: float | None = None,
        parent_session_id: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """Create a live session and return its id (a Hermes-style id when none is given).

        Raises ValueError if ``session_id`` is already taken.
        """
        started = float(started_at) if started_at is not None else time.time()
        sid = session_id or new_session_id(started)
        with self.db.write():
            if self.db.scalar("SELECT 1 FROM sessions WHERE id=?", (sid,)):
                raise ValueError(f"session already exists: {sid}")
            self.db.execute(
                "INSERT INTO sessions(id, origin_format, source, title, model, workspace, started_at,"
                " parent_session_id, meta) VALUES (?,?,?,?,?,?,?,?,?)",
                (sid, "live", source or "cli", scrub(title), scrub(model), scrub(workspace), started,
                 parent_session_id, json.dumps(meta or {}, ensure_ascii=False)),
            )
        return sid

    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any,
        *,
        tool_name: str | None = None,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        timestamp: float | None = None,
    ) -> int:
        """Append one message to ``session_id`` and return its message id.

        ``content`` may be a string or multimodal parts (flattened to text);
        ``tool_calls`` a list of OpenAI tool calls or JSON text. Raises
        SessionNotFound for an unknown session and ValueError for an empty role.
        """
        if not role or not isinstance(role, str):
            raise ValueError("role: expected a non-empty string")
        text = scrub(flatten_content(content)) or ""
        if len(text) > MAX_CONTENT_CHARS:
            text = text[:MAX_CONTENT_CHARS]
        calls = tool_calls if tool_calls is None or isinstance(tool_calls, str) else json.dumps(
            tool_calls, ensure_ascii=False)
        when = float(timestamp) if timestamp is not None else time.time()
        with self.db.write():
            if not self.db.scalar("SELECT 1 FROM sessions WHERE id=?", (session_id,)):
                raise SessionNotFound(session_id)
            seq = self.db.scalar(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE session_id=?", (session_id,))
            self.db.execute(
                "INSERT INTO messages(session_id, seq, role, content, tool_name, tool_calls,"
                " tool_call_id, timestamp, cjk) VALUES (?,?,?,?,?,?,?,?,?)",
                (session_id, seq, role, text, scrub(tool_name), scrub(calls), scrub(tool_call_id),
                 when, cjk_for(role, text)),
            )
            message_id = self.db.conn.last_insert_rowid()
            self.db.execute(
                "UPDATE sessions SET message_count = message_count + 1,"
                " started_at = COALESCE(started_at, ?) WHERE id=?", (when, session_id))
        return int(message_id)

    def end_session(self, session_id: str, *, ended_at: float | None = None,
                    end_reason: str | None = None) -> None:
        """Mark ``session_id`` ended (now by default); ``end_reason`` goes into ``meta``."""
        when = float(ended_at) if ended_at is not None else time.time()
        with self.db.write():
            row = self.db.query_one("SELECT meta FROM sessions WHERE id=?", (session_id,))
            if row is None:
                raise SessionNotFound(session_id)
            meta = json.loads(row["meta"] or "{}")
            if end_reason:
                meta["end_reason"] = end_reason
            self.db.execute("UPDATE sessions SET ended_at=?, meta=? WHERE id=?",
                            (when, json.dumps(meta, ensure_ascii=False), session_id))

    def set_title(self, session_id: str, title: str | None) -> None:
        """Set or clear a session's title."""
        with self.db.write():
            self.db.execute("UPDATE sessions SET title=? WHERE id=?", (scrub(title), session_id))
            if self.db.conn.changes() == 0:
                raise SessionNotFound(session_id)

    # -- reading ----------------------------------------------------------------

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row (``meta`` decoded), or None."""
        return session_row(self.db.query_one(
            f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions WHERE id=?", (session_id,)))

    def get_messages(self, session_id: str, *, limit: int | None = None,
                     offset: int = 0) -> list[dict[str, Any]]:
        """The session's messages in ``seq`` order (``tool_calls`` left as JSON text)."""
        sql = ("SELECT id, seq, role, content, tool_name, tool_calls, tool_call_id, timestamp"
               " FROM messages WHERE session_id=? ORDER BY seq LIMIT ? OFFSET ?")
        return self.db.query(sql, (session_id, -1 if limit is None else int(limit), int(offset)))

    def list_sessions(self, *, source: str | None = None, limit: int | None = 20) -> list[dict[str, Any]]:
        """Sessions, most recently active first, optionally from one ``source``."""
        where, params = ("WHERE source=?", [source]) if source else ("", [])
        params.append(-1 if limit is None else int(limit))
        rows = self.db.query(
            f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions {where}"
            " ORDER BY COALESCE(ended_at, started_at) DESC, id LIMIT ?", params)
        return [session_row(row) for row in rows]  # type: ignore[misc]

    # -- bulk and maintenance (thin wrappers) -----------------------------------------

    def index_paths(self, paths: Iterable[str | os.PathLike[str]], format: str = "auto",
                    **options: Any) -> dict[str, Any]:
        """Import transcript files/directories; returns the summary dict (see :func:`index_paths`)."""
        return BulkLoader(self.db, **options).run(paths, format).as_dict()

    def delete_session(self, session_id: str) -> int:
        """Delete one session and its messages; returns the number of messages removed."""
        return _delete_session(self.db, session_id)

    def prune(self, older_than: float, *, dry_run: bool = False, now: float | None = None) -> list[str]:
        """Delete whole lineages inactive for ``older_than`` seconds; returns the session ids."""
        return _prune_sessions(self.db, older_than, dry_run=dry_run, now=now)

    def stats(self) -> dict[str, Any]:
        """Counts and sizes (see :func:`hermes_store.sessions.maintenance.stats`)."""
        return _stats(self.db)


def index_paths(db: Database | Home | str | os.PathLike[str],
                paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
                format: str = "auto", **options: Any) -> dict[str, Any]:
    """Import transcripts from ``paths`` into ``db``.

    Returns ``{"files", "sessions_added", "messages_added", "skipped", "errors"}``
    where ``errors`` is a list of ``{"path", "line", "error"}``.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    with SessionIndex(db) as index:
        return index.index_paths(paths, format, **options)
