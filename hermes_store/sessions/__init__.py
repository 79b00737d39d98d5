"""Past sessions: transcript importers, the FTS5-indexed store, and the live write API.

Public API::

    from hermes_store.sessions import SessionIndex, index_paths

    index = SessionIndex(db)              # a Database, a Home, or a path to the .db
    sid = index.create_session(source="cli", model="m", title="t")
    index.append_message(sid, "user", "hello")
    index.end_session(sid)
    summary = index_paths(db, ["~/.hermes/sessions"], format="auto")
"""

from hermes_store.sessions.importers import FORMATS, detect_format
from hermes_store.sessions.index import SessionIndex, SessionNotFound, index_paths, new_session_id
from hermes_store.sessions.loader import BulkLoader, IndexSummary
from hermes_store.sessions.maintenance import delete_session, prune_sessions, stats
from hermes_store.timeutil import parse_age

__all__ = [
    "FORMATS",
    "BulkLoader",
    "IndexSummary",
    "SessionIndex",
    "SessionNotFound",
    "delete_session",
    "detect_format",
    "index_paths",
    "new_session_id",
    "parse_age",
    "prune_sessions",
    "stats",
]
