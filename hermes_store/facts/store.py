"""FactStore: facts, entities, trust and vectors in the shared ``hermes_store.db``.

All writes run in :meth:`Database.write` transactions. Retrieval lives in
:mod:`hermes_store.facts.retrieval` and :mod:`hermes_store.facts.conflicts`;
this module owns the rows, the entity links and the vector index.

Public API (used by the tools, the provider and the recall layer)::

    store = FactStore(db)                      # Database, Home, or a path to a .db file
    store.add_fact("Alice lives in Paris", category="general", tags="")
        -> {"fact_id": 1, "status": "added" | "exists"}
    store.search("where does alice live", limit=10, min_trust=0.3)
        -> [{fact_id, content, category, tags, trust_score, helpful_count,
             retrieval_count, entities, created_at, updated_at, score, fts_rank}, ...]
    store.probe("Alice") / store.related("Alice") / store.reason(["Alice", "Bob"])
    store.contradict() / store.update_fact(...) / store.remove_fact(...)
    store.list_facts(...) / store.record_feedback(fact_id, "helpful" | "unhelpful")
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hermes_store.facts import conflicts, hrr, retrieval, trust
from hermes_store.facts.entities import extract_entities
from hermes_store.facts.hermes_import import HermesFactsError, read_holographic
from hermes_store.facts.rows import (
    CACHE_BUDGET,
    META_DIM,
    META_ENCODING,
    SCAN_CHUNK,
    FactNotFound,
    FactRows,
    FactStoreError,
    entity_key,
    entity_keys,
    normalize_tags,
)
from hermes_store.facts.storage import FactAuthor, FactExists
from hermes_store.threats import scan_content

__all__ = ["CACHE_BUDGET", "META_DIM", "META_ENCODING", "SCAN_CHUNK", "FactBlocked", "FactNotFound",
           "FactStore", "FactStoreError", "check_fact_text"]
REENCODE_BATCH = 500


class FactBlocked(FactStoreError):
    """The fact holds an injection/exfiltration payload or invisible characters (the
    ``memory`` tool's ``Blocked: …`` message)."""


def check_fact_text(content: str, tags: str = "", *names: str | None) -> None:
    """Raise :class:`FactBlocked` when ``content``, ``tags`` or any of ``names`` (a category,
    entity names, an alias) fail the threat scan.

    Facts are recalled into the prompt as memory, so every way in (tool, CLI, Hermes
    import, extraction, mirroring, JSONL import) passes the memory tool's scan; entity
    names, aliases and categories are shown beside them, so they pass it too.
    """
    for text in (content, tags, *names):
        blocked = scan_content(text or "")
        if blocked:
            raise FactBlocked(blocked)


MAX_FACT_ENTITIES = 64  # entities given with one fact


def _record(path: str, row: dict[str, Any]) -> str:
    """Where an imported record came from: ``path:line`` for an export line, else ``path``."""
    return f"{path}:{row['line']}" if row.get("line") else path


class FactStore(FactRows):
    """The fact store over one :class:`~hermes_store.db.Database` (see :class:`FactRows`
    for how ``db`` and the settings are given).

    Opening reads only. Vectors whose dimension or encoding differs from the settings are
    re-encoded in memory when read and written back by :meth:`ensure_vectors`, which the
    first write of this store runs (``reencoded`` counts what it rewrote).
    """

    reencoded = 0
    _vectors_checked = False

    def __enter__(self) -> FactStore:
        return self

    def _writing(self) -> Any:
        """The write transaction of a content change (vectors brought up to date first)."""
        if not self._vectors_checked:
            self.ensure_vectors()
        return self.storage.transaction()

    def add_fact(self, content: str, category: str | None = "general", tags: str | None = "", *,
                 entities: Iterable[str] | None = None,
                 author: Mapping[str, Any] | FactAuthor | None = None) -> dict[str, Any]:
        """Store a fact; an identical content returns the existing id with ``status: exists``.

        Entities are extracted from the text (plus any given explicitly), linked,
        and the fact's vector is encoded in the same transaction. ``author`` (the turn's
        writer, ``{"id", "name", "is_bot"}``) is recorded on a new fact; an existing one
        keeps the author it has.
        """
        who = FactAuthor.of(author)
        if entities is not None:
            entities = list(entities)
            if len(entities) > MAX_FACT_ENTITIES:  # refused before any scan, lookup or write
                raise FactStoreError(f"too many entities: {len(entities):,} (at most {MAX_FACT_ENTITIES} per fact)")
        redact = self._redact
        content = redact((content or "").strip()) or ""
        if not content:
            raise FactStoreError("content must not be empty")
        category = redact((category or "general").strip()) or "general"
        tags = redact(normalize_tags(tags)) or ""
        entities = [redact(e) or "" for e in entities] if entities is not None else None
        check_fact_text(content, tags, category, *(entities or ()))
        with self._lock, self._writing():
            existing = self.find_by_content(content)
            if existing is not None:
                return {"fact_id": int(existing), "status": "exists"}
            try:
                fact_id = self.storage.insert_fact(content, category, tags, self.default_trust, author=who)
            except FactExists as exc:  # a concurrent writer (another host) added it first
                return {"fact_id": exc.fact_id, "status": "exists"}
            self._link_and_encode(fact_id, content, entities)
            self._touched()
        return {"fact_id": fact_id, "status": "added"}

    def update_fact(self, fact_id: int, *, content: str | None = None, category: str | None = None,
                    tags: str | None = None, trust_delta: float | None = None) -> bool:
        """Partially update a fact; False when the id does not exist.

        A content change relinks entities and re-encodes the vector; a content
        equal to another fact's raises :class:`FactStoreError`.
        """
        fact_id = int(fact_id)
        with self._lock, self._writing():
            row = self.storage.fact_rows([fact_id]).get(fact_id)
            if row is None:
                return False
            new_content = row["content"] if content is None else self._redact(content.strip()) or ""
            if not new_content:
                raise FactStoreError("content must not be empty")
            if new_content != row["content"]:
                other = self.find_by_content(new_content)
                if other is not None and int(other) != fact_id:
                    raise FactStoreError(f"another fact (#{other}) already has this content")
            new_tags = row["tags"] if tags is None else self._redact(normalize_tags(tags)) or ""
            changed = new_content != row["content"] or new_tags != row["tags"]
            if changed or category is not None:
                check_fact_text(new_content, new_tags, category)
            try:
                self.storage.update_fact(fact_id, content=new_content if changed else None,
                                         tags=new_tags if changed else None,
                                         category=self._redact(category.strip())
                                         if category is not None and category.strip() else None)
            except FactExists as exc:  # a concurrent writer (another host) took the content first
                raise FactStoreError(f"another fact (#{exc.fact_id}) already has this content") from exc
            if trust_delta is not None:
                self.storage.adjust_trust(fact_id, float(trust_delta))
            if new_content != row["content"]:
                self.storage.unlink_entities(fact_id)
                self._link_and_encode(fact_id, new_content, None)
            self._touched()
        return True

    def remove_fact(self, fact_id: int) -> bool:
        """Delete a fact and its entity links (entities are kept); False when absent."""
        with self._lock, self._writing():
            removed = self.storage.delete_fact(int(fact_id))
            self._touched()
        return removed

    def record_feedback(self, fact_id: int, action: str) -> dict[str, Any]:
        """Apply ``helpful`` (+0.05, helpful_count+1) or ``unhelpful`` (−0.10) to a fact.

        Returns ``{fact_id, old_trust, new_trust, helpful_count}``; raises
        :class:`FactNotFound` for an unknown id.
        """
        delta = trust.feedback_delta(action)
        with self._lock, self._writing():
            changed = self.storage.adjust_trust(int(fact_id), delta, helpful=action == "helpful")
            if changed is None:
                raise FactNotFound(f"fact_id {fact_id} not found")
            self._touched()
        old, new, helpful = changed
        return {"fact_id": int(fact_id), "old_trust": old, "new_trust": new, "helpful_count": helpful}

    def import_hermes(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Copy the facts of a Hermes holographic ``memory_store.db`` into this store.

        The file is opened read-only. Fact ids and entity ids are kept, so ids quoted
        in old sessions still name the same facts; content, category, tags, trust,
        counters and timestamps are kept too. Holographic's entity links are kept
        and our own extraction adds to them; vectors are re-encoded. A fact whose
        content is already stored is skipped; one whose id is taken by another fact
        gets a new id (counted in ``renumbered``; never the case on an empty store).
        A fact failing the threat scan is not imported (then ``blocked`` counts them and
        ``blocked_reasons`` names the file and the fact id of each).
        Returns ``{"imported", "skipped", "renumbered", "entities"[, "blocked", "blocked_reasons"]}``.
        """
        try:
            rows = read_holographic(path)
        except HermesFactsError as exc:
            raise FactStoreError(str(exc)) from exc
        return self.import_rows(str(path), *rows)

    def import_rows(self, label: str, facts: list[dict[str, Any]], entities: list[dict[str, Any]],
                    links: dict[int, list[int]]) -> dict[str, Any]:
        """Insert exported/foreign fact and entity rows keeping their ids where free (one transaction).

        ``facts`` rows carry ``fact_id, content, category, tags, trust_score, retrieval_count,
        helpful_count, created_at, updated_at`` and optionally ``author_id, author_name,
        author_is_bot`` (kept); ``entities`` rows ``entity_id, name,
        entity_type, aliases`` and optionally ``created_at`` (kept; else now); ``links`` maps a fact id to its entity ids. ``label`` (a path)
        prefixes each blocked reason. The counts are those of :meth:`import_hermes`.
        """
        path = label
        imported = skipped = renumbered = entities_kept = 0
        with self._lock, self._writing():
            entity_map: dict[int, int] = {}
            blocked: list[str] = []
            for row in entities:
                try:  # what fact_store add scans, an imported entity passes too
                    check_fact_text("", "", str(row["name"] or ""), str(row.get("entity_type") or ""),
                                    str(row.get("aliases") or ""), _text_or_none(row.get("created_at")))
                except FactBlocked as exc:
                    blocked.append(f"{_record(path, row)}: entity {row['entity_id']}: {exc}")
                    continue
                entity_id, kept = self._import_entity(row)
                entity_map[int(row["entity_id"])] = entity_id
                entities_kept += kept
            for row in facts:
                content = self._redact(str(row["content"] or "").strip()) or ""
                if not content or self.find_by_content(content) is not None:
                    skipped += 1
                    continue
                wanted = row["fact_id"]
                free = wanted is not None and not self.storage.fact_rows([int(wanted)])
                tags = self._redact(normalize_tags(row["tags"])) or ""
                try:
                    check_fact_text(content, tags, row.get("category"), _text_or_none(row.get("created_at")),
                                    _text_or_none(row.get("updated_at")), _text_or_none(row.get("author_id")),
                                    _text_or_none(row.get("author_name")))
                except FactBlocked as exc:
                    blocked.append(f"{_record(path, row)}: fact {row['fact_id']}: {exc}")
                    continue
                fact_id = self.storage.insert_fact(
                    content, self._redact(str(row["category"] or "").strip()) or "general", tags,
                    trust.clamp(self.default_trust if row["trust_score"] is None else float(row["trust_score"])),
                    retrieval_count=int(row["retrieval_count"] or 0),
                    helpful_count=int(row["helpful_count"] or 0),
                    created_at=None if row["created_at"] is None else str(row["created_at"]),
                    updated_at=None if row["updated_at"] is None else str(row["updated_at"]),
                    fact_id=int(wanted) if free else None, author=FactAuthor.from_fields(row))
                renumbered += 0 if free or wanted is None else 1
                linked = [entity_map[e] for e in links.get(int(wanted), []) if e in entity_map] \
                    if wanted is not None else []
                self._link_and_encode(fact_id, content, None, first=linked)
                imported += 1
            self._touched()
        counts = {"imported": imported, "skipped": skipped, "renumbered": renumbered, "entities": entities_kept}
        if blocked:
            counts.update(blocked=len(blocked), blocked_reasons=blocked)
        return counts

    def export_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, list[int]]]:
        """Every fact (all stored fields but derived vectors/projections), entity and link."""
        return self.storage.export_rows()

    def _import_entity(self, row: dict[str, Any]) -> tuple[int, int]:
        """Our id for a holographic entity row, keeping its id when free: ``(entity_id, 1 if kept)``."""
        name = self._redact(" ".join(str(row["name"] or "").split())) or ""
        existing = self.resolve_entity(name) if name else None
        if existing is not None:
            return int(existing["entity_id"]), 0
        wanted = int(row["entity_id"])
        free = not self.storage.entities_by_ids([wanted])
        entity_id = self.storage.insert_entity(name or f"entity {wanted}", entity_key(name) or f"entity {wanted}",
                                               entity_id=wanted if free else None,
                                               entity_type=row["entity_type"] or "unknown",
                                               created_at=_text_or_none(row.get("created_at")))
        for alias in str(row["aliases"] or "").split(","):
            if alias.strip():
                self._add_alias(entity_id, alias)
        return entity_id, 1 if free else 0

    # ------------------------------------------------------------------ entities

    def add_alias(self, entity: str, alias: str) -> bool:
        """Record ``alias`` for the entity ``entity`` (created if needed); False if taken.

        Raises :class:`FactBlocked` when either name fails the threat scan.
        """
        check_fact_text("", "", entity, alias)
        with self._lock, self._writing():
            entity_id = self._entity_id(entity, create=True)
            added = self._add_alias(entity_id, alias)
            if added:
                self._touched()
        return added

    def _entity_id(self, name: str, *, create: bool) -> int | None:
        name = self._redact(name) or ""  # an entity's name is stored text like the fact's
        found = self.resolve_entity(name)
        if found is not None:
            return int(found["entity_id"])
        if not create:
            return None
        name = " ".join(name.split())
        return self.storage.insert_entity(name, entity_key(name))

    def _add_alias(self, entity_id: int, alias: str) -> bool:
        alias = self._redact(" ".join((alias or "").split())) or ""
        key = entity_key(alias)
        if not key or any(self.storage.key_in_use(k) for k in entity_keys(alias)):
            return False
        return self.storage.add_alias(entity_id, alias, key)

    def _link_and_encode(self, fact_id: int, content: str, explicit: Iterable[str] | None, *,
                         first: Iterable[int] = ()) -> None:
        found = extract_entities(content)
        links: list[int] = list(dict.fromkeys(first))  # links an import keeps, before extracted ones
        for item in found:
            entity_id = self._entity_id(item.name, create=True)
            for alias in item.aliases:
                self._add_alias(entity_id, alias)
            if entity_id not in links:
                links.append(entity_id)
        for name in explicit or ():
            if isinstance(name, str) and name.strip():
                entity_id = self._entity_id(name.strip(), create=True)
                if entity_id not in links:
                    links.append(entity_id)
        self.storage.link_entities(fact_id, links)
        names = self.entity_names_for([fact_id]).get(fact_id, [])
        self.storage.put_vectors([(fact_id, hrr.to_blob(hrr.encode_fact(content, names, self.dim)))])

    # ------------------------------------------------------------------ vectors

    def ensure_vectors(self) -> int:
        """Re-encode stored vectors whose dimension/encoding differs from the settings (or
        that are missing); return how many were written (0 on a read-only database).

        The dimension and encoding version in force are recorded in ``store_meta``;
        changing ``hrr_dim`` re-encodes every fact instead of failing.
        """
        meta = self.storage.get_meta([META_DIM, META_ENCODING])
        current = meta.get(META_DIM) == str(self.dim) and meta.get(META_ENCODING) == hrr.ENCODING_VERSION
        if self.storage.readonly:
            return 0  # a read-only reader re-encodes in memory (see vector_index)
        self._vectors_checked = True
        if current and not self.storage.count_missing_vectors():
            return 0
        done = 0
        with self._lock, self.storage.transaction():
            ids = self.storage.vector_fact_ids(missing_only=current)
            for start in range(0, len(ids), REENCODE_BATCH):
                chunk = ids[start:start + REENCODE_BATCH]
                names = self.entity_names_for(chunk)
                contents = self.storage.fact_contents(chunk)
                self.storage.put_vectors([
                    (fid, hrr.to_blob(hrr.encode_fact(text, names.get(fid, []), self.dim)))
                    for fid, text in contents.items()])
                done += len(contents)
            self.storage.set_meta({META_DIM: str(self.dim), META_ENCODING: hrr.ENCODING_VERSION})
            self._touched()
        self.reencoded += done
        return done

    # ------------------------------------------------------------------ retrieval

    def search(self, query: str, *, category: str | None = None, min_trust: float | None = None,
               limit: int = 10, record: bool = True, min_coverage: float = 0.0) -> list[dict[str, Any]]:
        """Ranked facts for a text query (FTS + word coverage + entity links + HRR) × trust.

        Facts below ``min_trust`` (default: the store's threshold, 0.3) are hidden;
        ``record`` counts the returned facts in ``retrieval_count``.
        """
        return retrieval.search(self, query, category=category, min_trust=min_trust, limit=limit,
                                record=record, min_coverage=min_coverage)

    def probe(self, entity: str, *, category: str | None = None, limit: int = 10,
              min_trust: float = 0.0, record: bool = True) -> list[dict[str, Any]]:
        """Every fact about ``entity`` (name or alias), best first."""
        return retrieval.probe(self, entity, category=category, limit=limit, min_trust=min_trust,
                               record=record)

    def related(self, entity: str, *, category: str | None = None, limit: int = 10,
                min_trust: float = 0.0) -> list[dict[str, Any]]:
        """Facts connecting ``entity`` to other entities, then facts about those neighbours."""
        return retrieval.related(self, entity, category=category, limit=limit, min_trust=min_trust)

    def reason(self, entities: Sequence[str], *, category: str | None = None, limit: int = 10,
               min_trust: float = 0.0) -> list[dict[str, Any]]:
        """Facts in which all ``entities`` occur together, then chains linking them."""
        return retrieval.reason(self, entities, category=category, limit=limit, min_trust=min_trust)

    def contradict(self, *, category: str | None = None, limit: int = 10,
                   threshold: float = 0.5) -> list[dict[str, Any]]:
        """Pairs of facts with the same subject and relation but different values."""
        return conflicts.contradict(self, category=category, limit=limit, threshold=threshold)

    def contradict_report(self, *, category: str | None = None, limit: int = 10,
                          threshold: float = 0.5) -> conflicts.ContradictReport:
        """:meth:`contradict` within the time and work budget, with a note when it stopped early."""
        return conflicts.contradict_report(self, category=category, limit=limit, threshold=threshold)


def _text_or_none(value: Any) -> str | None:
    """An imported timestamp as text (None when absent or blank: the store stamps now)."""
    text = str(value).strip() if value is not None else ""
    return text or None
