"""Past sessions: transcript importers, the indexed session store, and the live write API.

What the package holds, top-down (a module imports only those below it):

* ``session_search.py`` -- the ``session_search`` tool (discover/scroll/read/browse).
* ``live.py`` -- :class:`SessionIndex`, the live write API an agent calls
  (create_session / append_message / end_session) and thin read/maintenance
  wrappers; :func:`index_paths`.
* ``search.py`` -- message search policy (ordering, smoothing, snippets, lineage).
* ``loader.py`` -- the bulk loader behind ``hermes-store sessions index`` (what to read,
  what is new); ``importers/`` -- one reader per transcript format (a registry).
* ``maintenance.py`` -- delete, lineage-aware prune, stats, full-text health checks.
* ``storage.py`` -- :class:`~hermes_store.sessions.storage.SessionStorage`, the one door to
  the data, and :func:`~hermes_store.sessions.storage.open_session_storage`, which picks the
  implementation by ``db.engine``; ``storage_sqlite.py`` (with ``rank.py``, the ``hs_bm25``
  rank function) is the APSW/FTS5 implementation and holds every SQL statement of the
  package (the importers read foreign files with their own read-only SQL).
* ``rows.py`` -- shared row helpers (storable text, the CJK column, session rows).
* The optional semantic half of ``session_search``: ``vectors.py`` (what a search uses: the
  model, the vectors, the fusion and the reranker), ``fusion.py`` (its rules, pure functions),
  ``embeddings.py`` and ``reranker.py`` (loading the embedding model and the cross-encoder,
  each a registry of loaders and of packages that ship models), ``storage_vectors*.py`` and
  ``vector_index.py`` (where the vectors live and how they are searched).

It may import the lowest layer (``db``, ``home``, ``query``, ``tooling``,
``fsutil``, ``timeutil``) and nothing above it; never ``builtin``, ``facts``,
``recall``, ``providers``, ``tools`` or ``cli``.

Public API::

    from hermes_store.sessions import SessionIndex, index_paths

    index = SessionIndex(db)              # a Database, a Home, or a path to the .db
    sid = index.create_session(source="cli", model="m", title="t")
    index.append_message(sid, "user", "hello")
    index.end_session(sid)
    summary = index_paths(db, ["~/.hermes/sessions"], format="auto")
"""

from hermes_store.sessions.importers import FORMATS, detect_format
from hermes_store.sessions.live import SessionIndex, index_paths
from hermes_store.sessions.loader import BulkLoader, IndexSummary
from hermes_store.sessions.maintenance import delete_session, prune_sessions, stats
from hermes_store.sessions.rows import SessionNotFound, new_session_id
from hermes_store.sessions.storage import SessionStorage, open_session_storage
from hermes_store.timeutil import parse_age

__all__ = [
    "FORMATS",
    "BulkLoader",
    "IndexSummary",
    "SessionIndex",
    "SessionNotFound",
    "SessionStorage",
    "delete_session",
    "detect_format",
    "index_paths",
    "new_session_id",
    "open_session_storage",
    "parse_age",
    "prune_sessions",
    "stats",
]
