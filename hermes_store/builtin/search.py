"""Full-text search over MEMORY.md / USER.md entries, through an index derived from the files.

The files stay the truth. Each search first compares every file's sha256 with
the hash recorded when it was last indexed and rebuilds that target's rows
when they differ, so hand edits are searchable at once. When the home's
database cannot be written, the same index is built in memory instead.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import apsw

from hermes_store.builtin.entries import TARGETS, file_name, parse_entries, read_raw_checked
from hermes_store.db import Database, DatabaseError
from hermes_store.query import HIGHLIGHT_OPEN, cjk_projection, highlight_excerpt, run_match


@dataclass
class EntryHit:
    """One matching built-in entry."""

    target: str  # "memory" or "user"
    index: int  # 1-based position in the file, as `memory show` numbers it
    content: str
    snippet: str  # matches wrapped in >>> <<<
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


def refresh_index(db: Database, memories_dir: Path, targets: tuple[str, ...] = TARGETS) -> list[str]:
    """Re-index every target whose file changed since it was last indexed; return those targets."""
    changed: list[str] = []
    for target in targets:
        digest, entries = _file_state(memories_dir, target)
        known = db.scalar("SELECT content_hash FROM builtin_index_files WHERE target=?", (target,))
        if known == digest:
            continue
        with db.write():
            db.execute("DELETE FROM builtin_index_entries WHERE target=?", (target,))
            db.executemany(
                "INSERT INTO builtin_index_entries(target, entry_index, content, cjk) VALUES (?,?,?,?)",
                [(target, i, entry, cjk_projection(entry)) for i, entry in enumerate(entries, start=1)],
            )
            db.execute(
                "INSERT INTO builtin_index_files(target, content_hash, refreshed_at) VALUES (?,?,?) "
                "ON CONFLICT(target) DO UPDATE SET content_hash=excluded.content_hash, "
                "refreshed_at=excluded.refreshed_at",
                (target, digest, time.time()),
            )
        changed.append(target)
    return changed


_SEARCH_SQL = """
SELECT e.target, e.entry_index, e.content,
       snippet(builtin_index_fts, 0, '>>>', '<<<', '…', 24) AS snippet,
       -bm25(builtin_index_fts, 1.0, 0.8) AS score
FROM builtin_index_fts JOIN builtin_index_entries AS e ON e.id = builtin_index_fts.rowid
WHERE builtin_index_fts MATCH ? AND e.target IN ({targets})
ORDER BY rank LIMIT ?
"""


def search_entries(db: Database | None, memories_dir: Path, query: str, *,
                   targets: tuple[str, ...] = TARGETS, limit: int = 10) -> EntrySearch:
    """Search the built-in entries of ``targets`` for ``query`` (never raises on query text).

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
            refresh_index(db, memories_dir, targets)
        except (DatabaseError, apsw.Error):
            own = db = Database(":memory:")
            refresh_index(db, memories_dir, targets)
        sql = _SEARCH_SQL.format(targets=",".join("?" * len(targets)))

        def fetch(expression: str, n: int) -> list[tuple]:
            return list(db.execute(sql, (expression, *targets, n)))

        outcome = run_match(fetch, query, limit, key=lambda row: (row[0], row[1]))
        hits = [EntryHit(r[0], int(r[1]), r[2], r[3] if HIGHLIGHT_OPEN in (r[3] or "") else
                         highlight_excerpt(r[2], outcome.plan or query), float(r[4])) for r in outcome.rows]
        return EntrySearch(hits, outcome.note)
    finally:
        if own is not None:
            own.close()
