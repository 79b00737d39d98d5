"""SessionIndex: the session store's write path and the live API an agent calls.

An agent can record a conversation as it happens, without any file::

    index = SessionIndex(home.open_db())
    sid = index.create_session(source="cli", model="gpt-4o", title="deploy fix")
    index.append_message(sid, "user", "why does deploy.sh fail?")
    index.append_message(sid, "assistant", "", tool_calls=[{...}])
    index.end_session(sid)

Every write is one short transaction of the session storage
(:mod:`hermes_store.sessions.storage`; on SQLite ``BEGIN IMMEDIATE``, with the
FTS index kept in step by the schema's triggers).
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
from hermes_store.pgdb import PgDatabase
from hermes_store.redaction import Redactor, redactor_for
from hermes_store.sessions.importers.base import (
    MAX_CONTENT_CHARS,
    MAX_LABEL_CHARS,
    MAX_WORKSPACE_CHARS,
    cap_chars,
    cap_title,
    epoch_in_range,
    flatten_content,
    head_chars,
)
from hermes_store.sessions.loader import BulkLoader
from hermes_store.sessions.maintenance import delete_session as _delete_session
from hermes_store.sessions.maintenance import prune_sessions as _prune_sessions
from hermes_store.sessions.maintenance import stats as _stats
from hermes_store.sessions.rows import SessionNotFound, clean_tree, new_session_id, scrub
from hermes_store.sessions.storage import SessionStorage, open_session_storage
from hermes_store.tokens import message_projection

__all__ = ["SessionIndex", "SessionNotFound", "index_paths", "new_session_id", "open_database"]


def open_database(target: Database | Home | str | os.PathLike[str]) -> tuple[Database, bool]:
    """``(database, owned)``: reuse a Database, or open one for a Home / file path."""
    if isinstance(target, (Database, PgDatabase)):
        return target, False
    if isinstance(target, Home):
        return target.open_db(), True
    return Database(Path(target)), True


def _epoch(name: str, value: Any) -> float:
    """``value`` as epoch seconds; ValueError naming ``name`` for NaN or a time outside the years
    1 to 9999 (stored, ``1e300`` made ``sessions list`` and ``recall`` fail for the whole store)."""
    try:
        return epoch_in_range(float(value), value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: {exc}") from None


class SessionIndex:
    """Read/write access to the indexed sessions in one store database."""

    def __init__(self, db: Database | Home | str | os.PathLike[str]) -> None:
        self.db, self._owned = open_database(db)
        self.storage: SessionStorage = open_session_storage(self.db)
        self._redactor: Redactor | None = None

    @property
    def redactor(self) -> Redactor:
        """The store's redactor: every text this API stores passes through it first."""
        if self._redactor is None:
            self._redactor = redactor_for(self.db)
        return self._redactor

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
        started = _epoch("started_at", started_at) if started_at is not None else time.time()
        if session_id and ("\x00" in session_id or scrub(session_id) != session_id):
            raise ValueError(f"session id {session_id!r} contains NUL bytes or lone surrogates; refused")
        sid = session_id or new_session_id(started)
        redact = self.redactor.redact
        added = self.storage.add_session(
            sid, origin_format="live", source=cap_chars(redact(scrub(source) or "cli"), MAX_LABEL_CHARS),
            title=cap_title(redact(scrub(title))), model=cap_chars(redact(scrub(model)), MAX_LABEL_CHARS),
            workspace=cap_chars(redact(scrub(workspace)), MAX_WORKSPACE_CHARS), started_at=started, parent_session_id=parent_session_id,
            meta=self._clean_meta(meta or {}))
        if not added:
            raise ValueError(f"session already exists: {sid}")
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
        message_uid: str | None = None,
    ) -> int:
        """Append one message to ``session_id`` and return its message id.

        ``content`` may be a string or multimodal parts (flattened to text);
        ``tool_calls`` a list of OpenAI tool calls or JSON text. ``message_uid`` is the
        source's own id of the message (Hermes' ``message_uid``): a message already stored
        under it in this session is not appended again, its id is returned. Raises
        SessionNotFound for an unknown session and ValueError for an empty role.
        """
        if not role or not isinstance(role, str):
            raise ValueError("role: expected a non-empty string")
        uid = scrub(message_uid) or None
        if uid is not None and (known := self.storage.message_id_by_uid(session_id, uid)) is not None:
            return known
        text = scrub(flatten_content(content)) or ""
        if len(text) > MAX_CONTENT_CHARS:
            text = head_chars(text, MAX_CONTENT_CHARS)
        calls = tool_calls if tool_calls is None or isinstance(tool_calls, str) else json.dumps(
            tool_calls, ensure_ascii=False)
        when = _epoch("timestamp", timestamp) if timestamp is not None else time.time()
        redact = self.redactor.redact
        text = redact(text) or ""
        return self.storage.append_message(
            session_id, role=role, content=text, tool_name=scrub(tool_name), tool_calls=redact(scrub(calls)),
            tool_call_id=scrub(tool_call_id), timestamp=when, cjk=message_projection(role, text), message_uid=uid)

    def end_session(self, session_id: str, *, ended_at: float | None = None,
                    end_reason: str | None = None) -> None:
        """Mark ``session_id`` ended (now by default); ``end_reason`` goes into ``meta``."""
        when = float(ended_at) if ended_at is not None else time.time()
        self.storage.end_session(session_id, when, self.redactor.redact(scrub(end_reason)))

    def _clean_meta(self, meta: dict[str, Any]) -> dict[str, Any]:
        """``meta`` as stored: every string scrubbed and redacted like the session's title."""
        redact = self.redactor.redact
        return dict(clean_tree(dict(meta), lambda text: redact(scrub(text))))

    def set_title(self, session_id: str, title: str | None) -> None:
        """Set or clear a session's title (cut at ``MAX_TITLE_CHARS`` like an imported one)."""
        self.storage.set_title(session_id, cap_title(self.redactor.redact(scrub(title))))  # redacted whole, then cut

    # -- reading ----------------------------------------------------------------

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row (``meta`` decoded), or None."""
        return self.storage.get_session(session_id)

    def get_messages(self, session_id: str, *, limit: int | None = None,
                     offset: int = 0) -> list[dict[str, Any]]:
        """The session's messages in ``seq`` order (``tool_calls`` left as JSON text)."""
        return self.storage.get_messages(session_id, limit=limit, offset=offset)

    def list_sessions(self, *, source: str | None = None, limit: int | None = 20) -> list[dict[str, Any]]:
        """Sessions, most recently active first, optionally from one ``source``."""
        return self.storage.list_sessions(source=source, limit=limit)

    def resolve_id(self, session_id: str) -> list[str]:
        """``[session_id]`` when it exists, else up to two ids it is a prefix of (so a caller
        can tell unique, ambiguous and unknown apart)."""
        if self.storage.has_session(session_id):
            return [session_id]
        return self.storage.session_ids_with_prefix(session_id, 2)

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

    def known_sources(self) -> list[str]:
        """The distinct sources (cli, telegram, claude-code, ...) of the stored sessions."""
        return self.storage.known_sources()

    def counts(self) -> dict[str, int]:
        """``{"sessions": N, "messages": N}`` without the size scans of :meth:`stats`."""
        return self.storage.counts()

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
