"""Read the facts of a Hermes holographic ``memory_store.db`` (a foreign SQLite file).

The file is opened read-only and only its ``facts`` table is read; missing optional
columns come back as None. Writing them into our store is :meth:`FactStore.import_hermes`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hermes_store.db import Database

WANTED = ("content", "category", "tags", "trust_score", "retrieval_count", "helpful_count",
          "created_at", "updated_at")


class HermesFactsError(ValueError):
    """The file is not a Hermes holographic store (message names the file)."""


def read_hermes_facts(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows ``{content, category, tags, trust_score, retrieval_count, helpful_count,
    created_at, updated_at}`` of the file's ``facts`` table, in storage order."""
    source = Database(Path(path), readonly=True)
    try:
        if not source.table_exists("facts"):
            raise HermesFactsError(f"{path}: no 'facts' table (not a Hermes holographic store)")
        columns = {r["name"] for r in source.query("PRAGMA table_info(facts)")}
        if "content" not in columns:
            raise HermesFactsError(f"{path}: the facts table has no 'content' column")
        select = ", ".join(c if c in columns else f"NULL AS {c}" for c in WANTED)
        return source.query(f"SELECT {select} FROM facts ORDER BY rowid")
    finally:
        source.close()
