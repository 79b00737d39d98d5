"""Forgetting for good: messages or whole sessions removed and tombstoned.

A tombstone keeps the identity of what was removed -- the session id, and for a single
message the sha256 of its stored (redacted) content and its position -- never the text, so the
bulk loader skips it when the same source is indexed again (:class:`~hermes_store.sessions.loader.BulkLoader`
counts those as ``forgotten``). ``sessions show`` and ``sessions sources`` report what was
forgotten from :meth:`~hermes_store.sessions.storage_sql.SqlSessionStorage.forgotten_summary`.
"""

from __future__ import annotations

import re
import time
from typing import Any

from hermes_store.redaction import rules_redactor
from hermes_store.sessions.rows import SessionNotFound
from hermes_store.sessions.storage import SessionStorage

MAX_MATCHING = 10_000  # messages one --matching run may forget
_REF = re.compile(r"^(?P<sid>[^#\s]+)#(?P<seq>\d+)$")


class ForgetError(ValueError):
    """A reference that names nothing in the store (the message says what was looked for)."""


def resolve_session(storage: SessionStorage, ref: str) -> str:
    """The session id ``ref`` names (exact, or a unique prefix)."""
    if storage.has_session(ref):
        return ref
    matches = storage.session_ids_with_prefix(ref, 2)
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionNotFound(ref)
    raise ForgetError(f"session id prefix {ref!r} is ambiguous ({', '.join(matches)}, ...)")


def resolve_message(storage: SessionStorage, ref: str) -> int | None:
    """The message id of ``SESSION_ID#N`` (N: the position ``sessions search`` prints), or None
    when ``ref`` is not a message reference."""
    found = _REF.match(ref.strip())
    if found is None:
        return None
    sid = resolve_session(storage, found["sid"])
    rows = storage.get_messages(sid, at_seq=int(found["seq"]), limit=1)
    if not rows:
        raise ForgetError(f"session {sid} has no message #{found['seq']}")
    return int(rows[0]["id"])


def forget(storage: Any, *, ref: str | None = None, session_id: str | None = None,
           matching: str | None = None, now: float | None = None) -> dict[str, Any]:
    """Remove and tombstone what is named: a ``SESSION_ID#N`` reference or session id (``ref``),
    a whole session (``session_id``), or every message holding the text ``matching``.

    Returns ``{"sessions": [...ids forgotten whole], "messages": count removed,
    "message_ids": [...row ids of the single messages named]}``.
    """
    stamp = time.time() if now is None else now
    sessions: list[str] = []
    removed = 0
    named: list[int] = []
    if ref:
        message_id = resolve_message(storage, ref)
        if message_id is not None:
            removed += storage.forget_messages([message_id], stamp)
            named.append(message_id)
        else:
            session_id = ref if session_id is None else session_id
    if session_id:
        sid = resolve_session(storage, session_id)
        removed += storage.forget_session(sid, stamp)
        sessions.append(sid)
    if matching is not None:
        if not matching.strip():
            raise ForgetError("--matching: the text must not be empty")
        ids = storage.messages_containing(matching, MAX_MATCHING)
        stored_form = rules_redactor(storage.db).redact(matching) or ""
        if stored_form != matching:  # a text holding a secret: the stored messages hold its marker
            ids = list(dict.fromkeys([*ids, *storage.messages_containing(stored_form, MAX_MATCHING)]))[:MAX_MATCHING]
        removed += storage.forget_messages(ids, stamp)
        named.extend(ids)
    return {"sessions": sessions, "messages": removed, "message_ids": named}
