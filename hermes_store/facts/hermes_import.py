"""Read a Hermes holographic ``memory_store.db`` (a foreign SQLite file) for ``import_hermes``.

The file is opened by the one foreign-database reader (:mod:`hermes_store.foreign_db`:
read-only, no trace, bounded; its errors are this file's, never our store's); missing optional columns come back as None. Writing the
rows into our store is :meth:`hermes_store.facts.store.FactStore.import_hermes`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from hermes_store.foreign_db import ForeignDB, ForeignDBError

logger = logging.getLogger(__name__)

FACT_COLUMNS = ("fact_id", "content", "category", "tags", "trust_score", "retrieval_count",
                "helpful_count", "created_at", "updated_at")
ENTITY_COLUMNS = ("entity_id", "name", "entity_type", "aliases")


class HermesFactsError(ValueError):
    """The file is not a Hermes holographic store (the message names the file)."""


def read_holographic(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                            dict[int, list[int]]]:
    """Facts, entities and ``fact_id -> [entity_id]`` links of a holographic ``memory_store.db``.

    Raises :class:`HermesFactsError` when the file has no ``facts`` table with a ``content``
    column; entities and links are empty when the file has none.
    """
    try:
        source = ForeignDB(Path(path))
    except ForeignDBError as exc:
        raise HermesFactsError(str(exc)) from exc
    try:
        if not source.table_exists("facts"):
            raise HermesFactsError(f"{path}: no 'facts' table (not a Hermes holographic store)")
        columns = set(source.columns("facts"))
        if "content" not in columns:
            raise HermesFactsError(f"{path}: the facts table has no 'content' column")
        select = ", ".join(c if c in columns else f"NULL AS {c}" for c in FACT_COLUMNS)
        order = "fact_id" if "fact_id" in columns else "rowid"
        facts = source.query(f"SELECT {select} FROM facts ORDER BY {order}")
        entities: list[dict[str, Any]] = []
        links: dict[int, list[int]] = {}
        if source.table_exists("entities") and source.table_exists("fact_entities"):
            ecols = set(source.columns("entities"))
            if {"entity_id", "name"} <= ecols:
                eselect = ", ".join(c if c in ecols else f"NULL AS {c}" for c in ENTITY_COLUMNS)
                entities = source.query(f"SELECT {eselect} FROM entities ORDER BY entity_id")
                for link in source.query("SELECT fact_id, entity_id FROM fact_entities ORDER BY rowid"):
                    if link["fact_id"] is not None and link["entity_id"] is not None:
                        links.setdefault(int(link["fact_id"]), []).append(int(link["entity_id"]))
    except ForeignDBError as exc:  # the holographic file's fault, never our store's ("run doctor")
        raise HermesFactsError(str(exc)) from exc
    finally:
        source.close()
    for row, message in source.drain_problems():
        logger.warning("%s: %s", path, message if row is None else f"{message} (row {row})")
    return facts, entities, links
