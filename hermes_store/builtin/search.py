"""Full-text search over MEMORY.md / USER.md entries, through an index derived from the files.

The files stay the truth. Each search first compares every file's sha256 with
the hash recorded when it was last indexed and rebuilds that target's rows
when they differ, so hand edits are searchable at once. When the home's
database cannot be written (or another process holds its write lock for more than
``REFRESH_PATIENCE``), the same index is built in memory instead.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_store.builtin.entries import TARGETS, file_name, parse_entries, read_raw_checked
from hermes_store.builtin.storage import BuiltinStorage, open_builtin_storage
from hermes_store.db import Database, DatabaseError
from hermes_store.excerpts import HIGHLIGHT_MARKS, highlight_excerpt
from hermes_store.query import compile_query
from hermes_store.redaction import redactor_for
from hermes_store.tooling import storable_text

#: Seconds a search waits to bring the stored index up to date while another process holds the
#: write lock; then it searches an index built in memory for the call instead.
REFRESH_PATIENCE = 0.5


@dataclass
class EntryHit:
    """One matching built-in entry."""

    target: str  # "memory" or "user"
    index: int  # 1-based position in the file, as `memory show` numbers it
    content: str
    snippet: str  # matches wrapped in the search's marks (>>> <<< by default)
    score: float  # higher is better (negated bm25)


@dataclass
class EntrySearch:
    """Hits in relevance order plus the query note (see ``hermes_store.query``)."""

    hits: list[EntryHit]
    note: str | None = None


def _file_state(memories_dir: Path, target: str) -> tuple[str, list[str]]:
    """``(sha256 of the file bytes, parsed entries)``; an unreadable file indexes as empty."""
    path = memories_dir / file_name(target)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        digest = "absent"
    text, readable = read_raw_checked(path)
    return digest, parse_entries(text) if readable else []


def refresh_index(db: Database | BuiltinStorage, memories_dir: Path,
                  targets: tuple[str, ...] = TARGETS) -> list[str]:
    """Re-index every target whose file changed since it was last indexed; return those targets."""
    storage = db if isinstance(db, BuiltinStorage) else open_builtin_storage(db)
    changed: list[str] = []
    for target in targets:
        digest, entries = _file_state(memories_dir, target)
        if storage.indexed_hash(target) == digest:
            continue
        redact = redactor_for(storage.db).redact  # the index holds only the redacted text
        storage.replace_index(target, digest, [redact(storable_text(e)) or "" for e in entries], time.time())
        changed.append(target)
    return changed


def search_entries(db: Database | None, memories_dir: Path, query: str, *,
                   targets: tuple[str, ...] = TARGETS, limit: int = 10,
                   marks: tuple[str, str] = HIGHLIGHT_MARKS) -> EntrySearch:
    """Search the built-in entries of ``targets`` for ``query`` (never raises on query text);
    each snippet's matched words are between ``marks`` (open, close).

    ``db`` is the home's database; pass None (or a read-only one) to search an
    in-memory index built from the files for this call only.
    """
    targets = tuple(t for t in targets if t in TARGETS)
    if not targets or limit <= 0:
        return EntrySearch([])
    own = None
    if db is None or db.readonly:
        own = db = Database(":memory:")
    try:
        try:
            storage = open_builtin_storage(db)
            with storage.lock_patience(REFRESH_PATIENCE):  # never wait long behind another writer
                refresh_index(storage, memories_dir, targets)
        except DatabaseError:
            own = db = Database(":memory:")
            storage = open_builtin_storage(db)
            refresh_index(storage, memories_dir, targets)
        plan = compile_query(query)
        rows, note = storage.search_index(plan, targets, limit, marks)
        hits = [EntryHit(r["target"], int(r["entry_index"]), r["content"],
                         r["snippet"] if marks[0] in (r["snippet"] or "") else
                         highlight_excerpt(r["content"], plan, open_mark=marks[0], close_mark=marks[1]),
                         float(r["score"])) for r in rows]
        return EntrySearch(hits, note)
    finally:
        if own is not None:
            own.close()
