"""The fact store's storage seam: :class:`FactStorage`, one implementation per database engine.

Everything the fact store reads or writes goes through these plain methods (facts,
entities and aliases, entity links, trust, vectors, full-text hits). Rows are plain
dicts and Python values; no engine types or query syntax cross the interface, so a
second engine is one more class. :func:`open_fact_storage` picks the class named for
``db.engine`` in :data:`STORAGE_ENGINES` (``"module:Class"`` strings, loaded on use).

Row shapes:

* fact row: ``fact_id, content, category, tags, trust_score, retrieval_count,
  helpful_count, created_at, updated_at, author_id, author_name, author_is_bot``
  (timestamps as ``YYYY-MM-DD HH:MM:SS`` UTC text; the author columns None without one);
* filtered row (:meth:`FactStorage.filter_facts`): ``fact_id, category, trust_score,
  updated_at, content, tags``;
* entity: ``entity_id, name, entity_type, aliases`` (``aliases`` a list of names).

Trust values passed in and out are in [0, 1]; visibility thresholds are inclusive with
the tolerance of :func:`hermes_store.facts.trust.visible`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_store.engines import StoreDatabase, storage_registry
from hermes_store.query import QueryPlan
from hermes_store.storage_base import EngineStorage, engine_class

STORAGE_ENGINES: dict[str, str] = storage_registry("facts")  # from the one engine registry
AUTHOR_FIELDS = ("author_id", "author_name", "author_is_bot")  # a fact row's author columns


@dataclass(frozen=True)
class FactAuthor:
    """Who wrote the turn a fact was stored in (Hermes' ``on_turn_start`` author trio)."""

    id: str | None = None
    name: str | None = None
    is_bot: bool | None = None

    @classmethod
    def of(cls, value: Mapping[str, Any] | FactAuthor | None) -> FactAuthor | None:
        """An author from ``{"id", "name", "is_bot"}`` (the manager's turn author) or
        ``{"author_id", "author_name", "author_is_bot"}`` (a row, a mirrored write's metadata);
        None when neither an id nor a name is given."""
        if value is None or isinstance(value, FactAuthor):
            return value
        prefix = "author_" if any(key in value for key in AUTHOR_FIELDS) else ""
        author_id, name, is_bot = (value.get(prefix + key) for key in ("id", "name", "is_bot"))
        if author_id in (None, "") and name in (None, ""):
            return None
        return cls(None if author_id in (None, "") else str(author_id),
                   None if name in (None, "") else str(name), None if is_bot is None else bool(is_bot))

    @classmethod
    def from_fields(cls, row: Mapping[str, Any]) -> FactAuthor | None:
        """The author in a mapping's ``author_id``/``author_name``/``author_is_bot`` keys (other
        keys ignored); None when it names none."""
        return cls.of({key: row.get(key) for key in AUTHOR_FIELDS})

    def fields(self) -> dict[str, Any]:
        """``{"author_id", "author_name", "author_is_bot"}`` (the column values)."""
        return {"author_id": self.id, "author_name": self.name, "author_is_bot": self.is_bot}


class FactExists(Exception):
    """:meth:`FactStorage.insert_fact` lost a race: another writer stored the same content."""

    def __init__(self, fact_id: int) -> None:
        super().__init__(f"fact {fact_id} already has this content")
        self.fact_id = fact_id


class FactStorage(EngineStorage):
    """Facts, entities, links, trust and vectors of one database (see the module docstring);
    ``db``, ``readonly`` and ``transaction`` come from :class:`~hermes_store.storage_base.EngineStorage`."""

    # ---- lifecycle and transactions ------------------------------------------------------

    @abstractmethod
    def change_token(self) -> Hashable:
        """A value that changes whenever another connection commits (cache invalidation)."""

    # ---- store metadata ------------------------------------------------------------------

    @abstractmethod
    def get_meta(self, keys: Sequence[str]) -> dict[str, str]:
        """``key -> value`` of the recorded store settings among ``keys``."""

    @abstractmethod
    def set_meta(self, values: dict[str, str]) -> None:
        """Record (insert or overwrite) store settings."""

    # ---- facts ---------------------------------------------------------------------------

    @abstractmethod
    def count_facts(self) -> int:
        """Number of stored facts."""

    @abstractmethod
    def fact_rows(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """``fact_id -> fact row`` for the ids that exist (any number of ids)."""

    @abstractmethod
    def fact_writers(self, ids: Sequence[int]) -> dict[int, str]:
        """``fact_id -> "host:home"`` of the home that wrote each fact, for the ids whose writer
        the engine records (a shared server does; a SQLite file belongs to one home: ``{}``)."""

    @abstractmethod
    def fact_id_by_content(self, content: str) -> int | None:
        """The id of the fact whose content is exactly ``content``, or None."""

    @abstractmethod
    def facts_containing(self, category: str, fragment: str, limit: int) -> list[int]:
        """Ids of up to ``limit`` facts of ``category`` whose content contains ``fragment``."""

    @abstractmethod
    def insert_fact(self, content: str, category: str, tags: str, trust_score: float, *,
                    retrieval_count: int = 0, helpful_count: int = 0,
                    created_at: str | None = None, updated_at: str | None = None,
                    fact_id: int | None = None, author: FactAuthor | None = None) -> int:
        """Insert a fact (timestamps default to now, the id to a new one); returns its id.

        ``author`` is who wrote the turn the fact was stored in (NULL columns without one).

        A given ``fact_id`` must be free (the caller checks with :meth:`fact_rows`). Without
        one, a content another writer stored meanwhile raises :class:`FactExists` (with its id).
        """

    @abstractmethod
    def update_fact(self, fact_id: int, *, content: str | None = None, tags: str | None = None,
                    category: str | None = None) -> None:
        """Overwrite the given fields (``content`` and ``tags`` together) and stamp ``updated_at``;
        a ``content`` another writer gave a fact after the caller looked raises
        :class:`FactExists` (with that fact's id)."""

    @abstractmethod
    def adjust_trust(self, fact_id: int, delta: float, *,
                     helpful: bool = False) -> tuple[float, float, int] | None:
        """Atomically add ``delta`` to the fact's trust (clamped to [0, 1], 6 decimals),
        count one ``helpful`` vote if asked and stamp ``updated_at``.

        Returns ``(old_trust, new_trust, helpful_count)``, or None when the id is unknown.
        """

    @abstractmethod
    def delete_fact(self, fact_id: int) -> bool:
        """Delete a fact and its entity links; False when it did not exist."""

    @abstractmethod
    def top_fact_ids(self, *, min_trust: float, category: str | None, limit: int) -> list[int]:
        """Ids of visible facts (optionally one category), highest trust, then newest, first."""

    @abstractmethod
    def increment_retrievals(self, ids: Sequence[int]) -> None:
        """Add one to ``retrieval_count`` of each id (does not stamp ``updated_at``)."""

    @abstractmethod
    def filter_facts(self, ids: Iterable[int], *, category: str | None,
                     min_trust: float) -> dict[int, dict[str, Any]]:
        """``fact_id -> filtered row`` for the ids that pass the category and trust filters."""

    @abstractmethod
    def text_hits(self, query: str | QueryPlan, limit: int, *, category: str | None = None,
                  min_trust: float = 0.0) -> tuple[dict[int, float], str | None]:
        """Full-text matches of a user query: ``({fact_id: relevance > 0}, note)``.

        ``query`` is the text a person typed (the :mod:`hermes_store.query` language) or its
        compiled :class:`~hermes_store.query.QueryPlan`, whose engine-neutral
        :class:`~hermes_store.query.Match` trees the implementation renders in its own syntax. Higher relevance is better; ``note`` explains a
        fallback or relaxation (None when the query ran as written).
        """

    # ---- entities and links --------------------------------------------------------------

    @abstractmethod
    def entity_by_key(self, key: str) -> dict[str, Any] | None:
        """The entity whose name key or one of whose alias keys is ``key``, or None."""

    @abstractmethod
    def key_in_use(self, key: str) -> bool:
        """True when ``key`` is an entity's name key or an alias key."""

    @abstractmethod
    def insert_entity(self, name: str, key: str, *, entity_id: int | None = None,
                      entity_type: str = "unknown", created_at: str | None = None) -> int:
        """Create an entity (a given ``entity_id`` must be free; ``created_at`` defaults to
        now, an import keeps the exported one); returns its id."""

    @abstractmethod
    def add_alias(self, entity_id: int, alias: str, key: str) -> bool:
        """Record an alias of an entity (its ``aliases`` list grows in insertion order); False
        when another writer recorded ``key`` after the caller's :meth:`key_in_use`."""

    @abstractmethod
    def link_entities(self, fact_id: int, entity_ids: Sequence[int]) -> None:
        """Link a fact to entities, ``position`` = index in ``entity_ids`` (existing links kept)."""

    @abstractmethod
    def unlink_entities(self, fact_id: int) -> None:
        """Remove every entity link of a fact."""

    @abstractmethod
    def entity_names_for(self, fact_ids: Sequence[int]) -> dict[int, list[str]]:
        """``fact_id -> [entity names in link position order]``."""

    @abstractmethod
    def entity_facts(self, entity_id: int) -> list[dict[str, Any]]:
        """``[{fact_id, position}]`` linked to an entity."""

    @abstractmethod
    def list_entities(self, limit: int) -> list[dict[str, Any]]:
        """Entities with ``fact_count``, most linked first, then by name."""

    @abstractmethod
    def entities_by_ids(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """``entity_id -> entity`` for the ids that exist."""

    @abstractmethod
    def co_entities(self, fact_ids: Iterable[int], exclude: int) -> list[tuple[int, int]]:
        """``(fact_id, entity_id)`` links of ``fact_ids`` to entities other than ``exclude``."""

    @abstractmethod
    def subject_entity_ids(self) -> set[int]:
        """Entities that are the first-mentioned (position 0) entity of some fact."""

    @abstractmethod
    def subject_entities(self, entity_ids: Iterable[int]) -> set[int]:
        """Those of ``entity_ids`` that are the first-mentioned entity of some fact (index look-ups)."""

    @abstractmethod
    def shared_entity_ids(self, category: str | None, *, after: int, limit: int) -> list[int]:
        """Up to ``limit`` entity ids above ``after``, ascending, each linked to two or more facts
        (of ``category``), read in order from the entity index."""

    @abstractmethod
    def entity_recent_facts(self, entity_ids: Sequence[int], per_entity: int,
                            category: str | None = None) -> list[tuple[int, int, str]]:
        """``(entity_id, fact_id, content)`` of each entity's ``per_entity`` most recently updated
        facts (then higher id first; optionally one category), by entity id, newest first."""

    @abstractmethod
    def entity_fact_links(self, category: str | None = None) -> list[tuple[int, int]]:
        """Every ``(entity_id, fact_id)`` link (optionally one category), grouped by entity,
        each entity's facts most recently updated first (then higher id first)."""

    # ---- vectors -------------------------------------------------------------------------

    @abstractmethod
    def count_missing_vectors(self) -> int:
        """Number of facts without a stored vector."""

    @abstractmethod
    def vector_fact_ids(self, *, missing_only: bool) -> list[int]:
        """Ids of every fact (or of those without a vector), ascending."""

    @abstractmethod
    def fact_contents(self, ids: Sequence[int]) -> dict[int, str]:
        """``fact_id -> content`` for the ids that exist."""

    @abstractmethod
    def put_vectors(self, items: Sequence[tuple[int, bytes]]) -> None:
        """Store ``(fact_id, vector blob)`` pairs."""

    @abstractmethod
    def vectors(self, after_id: int = -1, limit: int | None = None) -> list[dict[str, Any]]:
        """``[{fact_id, content, hrr_vector}]`` with ``fact_id > after_id`` ascending
        (``hrr_vector`` bytes or None), at most ``limit`` rows."""

    @abstractmethod
    def export_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, list[int]]]:
        """Every fact (stored fields, not vectors/projections) by id, every entity
        ``{entity_id, name, entity_type, aliases, created_at}`` by id, and
        ``fact_id -> [entity_id]`` links in mention order (``facts export``)."""

    def iter_vectors(self, chunk: int) -> Iterator[list[dict[str, Any]]]:
        """All vectors in ascending chunks of at most ``chunk`` rows."""
        last = -1
        while True:
            rows = self.vectors(last, chunk)
            if not rows:
                return
            yield rows
            last = int(rows[-1]["fact_id"])


def storage_class(engine: str) -> type[FactStorage]:
    """The :class:`FactStorage` implementation registered for ``engine``."""
    return engine_class(STORAGE_ENGINES, engine, "fact storage")


def open_fact_storage(db: StoreDatabase) -> FactStorage:
    """The fact storage over ``db`` (chosen by ``db.engine``)."""
    return storage_class(db.engine)(db)
