"""Helpers shared by the session-index tests (imported by test modules)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
# the original six-format tree; the per-format directories added since have their own tests
CORE = ("hermes_home", "claude", "codex", "openai")


def core(fixtures: Path) -> list[Path]:
    """The six-format part of a fixtures copy (whole-tree counts stay stable as formats are added)."""
    return [fixtures / name for name in CORE]


def index_json(run, *args) -> tuple[int, dict]:
    """Run ``sessions index --json ARGS`` and return (exit code, summary)."""
    result = run("sessions", "index", "--json", *args)
    return result.exit_code, json.loads(result.stdout)


def write_jsonl(path: Path, objects, mode: str = "w") -> Path:
    """Write (or append) JSON objects one per line; ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as handle:
        for obj in objects:
            handle.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return path


def matching_ids(db, query: str) -> list[int]:
    """Ids of the messages the engine's full-text index finds for ``query``, ascending
    (through the storage seam, so the same assertion holds on every engine)."""
    from hermes_store.query import compile_query
    from hermes_store.sessions.storage import Filters, open_session_storage

    match = compile_query(query).strict_match
    hits = open_session_storage(db).hits(match, Filters(), sort="newest", budget=10_000)
    return sorted(h.message_id for h in hits)


def text_index_problems(db) -> list[str]:
    """Every problem the engine's own checks report for the database and its text indexes."""
    from hermes_store.sessions.storage import open_session_storage

    storage = open_session_storage(db)
    problems = list(storage.integrity_problems())
    for name in storage.text_indexes():
        problem = storage.check_text_index(name)
        if problem:
            problems.append(f"{name}: {problem}")
    return problems


@contextmanager
def both_engines(home, pg_url: str, fill: Callable[[Any], None]) -> Iterator[tuple[Any, Any]]:
    """The home's SQLite store and a PostgreSQL store at ``pg_url``, each filled by ``fill``
    (the parity tests' pair); both closed at the end."""
    from hermes_store.pgdb import PgDatabase

    sqlite = home.open_db()
    pg = PgDatabase(pg_url)
    try:
        for db in (sqlite, pg):
            fill(db)
        yield sqlite, pg
    finally:
        sqlite.close()
        pg.close()
