"""Facts as JSON Lines: ``facts export`` / ``facts import`` (every field, ids kept).

The file starts with a header line ``{"kind": "hermes_store.facts", "version": 1}``,
then one ``{"kind": "entity", ...}`` line per entity (id, name, type, aliases, created_at)
and one ``{"kind": "fact", ...}`` line per fact (id, content, category, tags, trust,
counters, timestamps, the author trio (null without one), ``entity_ids``). Vectors and CJK projections are derived and
rebuilt on import. Importing keeps ids where they are free, skips facts already stored,
and runs every fact through the threat scan (as every way in does).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from hermes_store.facts.store import FactStore, FactStoreError

FORMAT = "hermes_store.facts"
VERSION = 1
MAX_LINE_CHARS = 1_000_000
MAX_EXPORT_BYTES = 64 << 20  # a larger dump is refused before a line is parsed (all is held in memory)
MAX_EXPORT_ROWS = 200_000  # facts plus entities in one dump
FACT_FIELDS = ("fact_id", "content", "category", "tags", "trust_score", "retrieval_count", "helpful_count",
               "created_at", "updated_at", "author_id", "author_name", "author_is_bot")


def export_lines(store: FactStore) -> Iterator[str]:
    """The JSONL lines (without newlines) of every fact and entity in ``store``."""
    return _lines(*store.export_rows())


def _lines(facts: list[dict[str, Any]], entities: list[dict[str, Any]],
           links: dict[int, list[int]]) -> Iterator[str]:
    yield json.dumps({"kind": FORMAT, "version": VERSION, "facts": len(facts), "entities": len(entities)})
    for row in entities:
        aliases = [a for a in str(row.get("aliases") or "").split(",") if a.strip()]
        fields = {k: row[k] for k in ("entity_id", "name", "entity_type", "created_at")}
        yield json.dumps({"kind": "entity", **fields, "aliases": aliases}, ensure_ascii=False)
    for row in facts:
        yield json.dumps({"kind": "fact", **{k: row[k] for k in FACT_FIELDS},
                          "entity_ids": links.get(int(row["fact_id"]), [])}, ensure_ascii=False)


def export_facts(store: FactStore, out: IO[str]) -> dict[str, int]:
    """Write the export to ``out``; returns ``{"facts", "entities"}`` counts."""
    facts, entities, links = store.export_rows()
    for line in _lines(facts, entities, links):
        out.write(line + "\n")
    return {"facts": len(facts), "entities": len(entities)}


def read_export(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                      dict[int, list[int]]]:
    """Facts, entities and links of an export file; a bad line raises naming file and line."""
    path = Path(path)
    facts: list[dict[str, Any]] = []
    entities: list[dict[str, Any]] = []
    links: dict[int, list[int]] = {}
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise FactStoreError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_EXPORT_BYTES:
            raise FactStoreError(f"{path}: {size:,} bytes; a facts export may hold at most {MAX_EXPORT_BYTES:,} "
                                 "bytes (split it and import the parts); nothing imported")
        for number, line in enumerate(iter(lambda: handle.readline(MAX_LINE_CHARS + 1), ""), 1):
            if len(line) > MAX_LINE_CHARS:
                raise FactStoreError(f"{path}:{number}: line longer than {MAX_LINE_CHARS:,} characters")
            if not line.strip():
                continue
            if len(facts) + len(entities) >= MAX_EXPORT_ROWS:
                raise FactStoreError(f"{path}:{number}: more than {MAX_EXPORT_ROWS:,} facts and entities "
                                     "(split the export and import the parts); nothing imported")
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise FactStoreError(f"{path}:{number}: not JSON: {exc}") from exc
            if not isinstance(row, dict):
                raise FactStoreError(f"{path}:{number}: expected a JSON object")
            kind = row.get("kind")
            if number == 1 and kind != FORMAT:
                raise FactStoreError(f"{path}:1: not a hermes_store facts export (no header line)")
            if kind == FORMAT:
                if int(row.get("version") or 0) > VERSION:
                    raise FactStoreError(f"{path}:{number}: export version {row.get('version')} is newer "
                                         f"than this hermes_store reads ({VERSION})")
                continue
            try:
                if kind == "entity":
                    created = row.get("created_at")
                    if created is not None and not isinstance(created, str):
                        raise ValueError("'created_at' must be a string")
                    entities.append({"entity_id": int(row["entity_id"]), "name": str(row["name"]),
                                     "entity_type": row.get("entity_type") or "unknown",
                                     "aliases": ",".join(str(a) for a in row.get("aliases") or []),
                                     "created_at": created, "line": number})
                elif kind == "fact":
                    fact = {key: row.get(key) for key in FACT_FIELDS}
                    if not isinstance(fact["content"], str):
                        raise ValueError("'content' must be a string")
                    fact["fact_id"] = None if fact["fact_id"] is None else int(fact["fact_id"])
                    fact["line"] = number  # where a blocked record is reported
                    facts.append(fact)
                    if fact["fact_id"] is not None:
                        links[fact["fact_id"]] = [int(e) for e in row.get("entity_ids") or []]
                else:
                    raise ValueError(f"unknown kind {kind!r}")
            except (KeyError, TypeError, ValueError) as exc:
                raise FactStoreError(f"{path}:{number}: {exc}") from exc
    return facts, entities, links


def import_facts(store: FactStore, path: str | os.PathLike[str]) -> dict[str, Any]:
    """Import an export file into ``store`` (see :meth:`FactStore.import_rows` for the counts)."""
    return store.import_rows(str(path), *read_export(path))
