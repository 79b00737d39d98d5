"""Retrieval over the fact store: search, probe, related and reason.

Every operation combines exact SQL evidence (FTS5 matches through
:func:`hermes_store.query.run_match`, entity links) with the HRR terms that
carry signal (entity presence, content-role query affinity), then multiplies
by trust. ``search`` hides facts below the trust threshold; the entity
operations accept ``min_trust`` (default 0, as in Hermes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_store.facts import trust
from hermes_store.facts.entities import extract_entities
from hermes_store.facts.rows import FactRows
from hermes_store.facts.text import content_words, coverage, words
from hermes_store.query import STOPWORDS, bounded_query_text
from hermes_store.tokens import tokenize
from hermes_store.tooling import storable_text

PRESENCE_FLOOR = 0.12   # presence similarity of an absent entity is ~0 ± 0.03 at dim 1024
PRESENCE_FULL = 0.35    # presence at which the HRR term counts fully
AFFINITY_FULL = 0.30    # content-role query affinity at which the HRR term counts fully
SCORE_DECIMALS = 6


def _category_ids(store: FactRows, ids: Sequence[int], category: str | None,
                  min_trust: float) -> dict[int, dict[str, Any]]:
    """Rows (fact_id, category, trust_score, updated_at, content, tags) passing the filters."""
    return store.storage.filter_facts(ids, category=category, min_trust=min_trust)


def fts_ranks(store: FactRows, text: str, pool: int, *, category: str | None = None,
              min_trust: float = 0.0) -> tuple[dict[int, float], str | None]:
    """``fact_id -> relevance`` (|bm25| on SQLite) for the full-text matches of ``text``, and its note."""
    return store.storage.text_hits(text, pool, category=category, min_trust=min_trust)


def query_entities(store: FactRows, text: str) -> list[dict[str, Any]]:
    """Known entities named in ``text`` (by name or alias, 1-4 word spans, or extracted names).

    Each entity dict gets ``matched``: the words of ``text`` that named it.
    """
    tokens = [t.casefold() for t in tokenize(text)]
    spans = {" ".join(tokens[i:i + n]) for n in range(1, 5) for i in range(len(tokens) - n + 1)}
    spans.update(e.name for e in extract_entities(text))
    found: dict[int, dict[str, Any]] = {}
    for span in sorted(spans, key=len, reverse=True):
        if span.casefold() in STOPWORDS:
            continue
        entity = store.resolve_entity(span)
        if entity is not None:
            entry = found.setdefault(int(entity["entity_id"]), {**entity, "matched": set()})
            entry["matched"].update(words(span))
    return list(found.values())


def _finish(store: FactRows, scored: dict[int, float], limit: int, *, record: bool,
            extra: dict[int, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Sort, cut, attach rows (and extra keys), optionally count the retrieval."""
    order = sorted(scored, key=lambda fid: (-scored[fid], -fid))[: max(0, int(limit))]
    facts = store.facts_by_ids(order)
    for fact in facts:
        fact["score"] = round(scored[fact["fact_id"]], SCORE_DECIMALS)
        if extra and fact["fact_id"] in extra:
            fact.update(extra[fact["fact_id"]])
    if record and facts:
        store.mark_retrieved([f["fact_id"] for f in facts])
        for fact in facts:
            fact["retrieval_count"] += 1
    return facts


def search(store: FactRows, query: str, *, category: str | None = None,
           min_trust: float | None = None, limit: int = 10, record: bool = True,
           min_coverage: float = 0.0) -> list[dict[str, Any]]:
    """Facts matching ``query``, hiding those below ``min_trust`` (default: the store's threshold).

    ``relevance = (1-w)·(0.5·fts + 0.3·coverage + 0.2·entity) + w·hrr`` where
    ``fts`` is bm25 relative to the best match, ``coverage`` the share of the
    query's content words present, ``entity`` 1 when the fact is linked to an
    entity named in the query, ``hrr`` the content-role affinity and ``w`` the
    store's ``hrr_weight``. ``score = relevance × trust × decay``.
    ``min_coverage`` is a relevance floor (used by prefetch): a fact must hold
    that share of the question's words or be linked to an entity it names.
    """
    threshold = store.min_trust if min_trust is None else float(min_trust)
    limit = max(1, int(limit))
    pool = max(limit * 4, 40)
    query = storable_text(bounded_query_text(query or ""))
    ranks, _ = fts_ranks(store, query, pool, category=category, min_trust=threshold)
    linked: set[int] = set()
    named: set[str] = set()
    for entity in query_entities(store, query or ""):
        linked.update(int(r["fact_id"]) for r in store.entity_facts(entity["entity_id"]))
        named.update(entity["matched"])
    q_words = content_words(query) or words(query)
    # The rest of the question, for facts that name the entity differently (alias, pronoun).
    rest_words = [w for w in q_words if w not in named]
    rest: dict[int, float] = {}
    if named and rest_words:
        rest, _ = fts_ranks(store, " ".join(rest_words), pool * 4, category=category,
                            min_trust=threshold)
        rest = {f: r for f, r in rest.items() if f in linked}
    rows = _category_ids(store, list(ranks) + sorted(linked), category, threshold)
    if not rows:
        return []
    best = max(ranks.values(), default=0.0) or 1.0
    best_rest = max(rest.values(), default=0.0) or 1.0
    affinity = store.text_affinity(query) if store.hrr_weight > 0 else {}
    w = store.hrr_weight
    scored: dict[int, float] = {}
    extra: dict[int, dict[str, Any]] = {}
    for fid, row in rows.items():
        ent = 1.0 if fid in linked else 0.0
        if not ent and min_coverage > 0 and coverage(q_words, set(words(row["content"]))) < min_coverage:
            continue
        fts = max(ranks.get(fid, 0.0) / best, rest.get(fid, 0.0) / best_rest)
        fact_words = set(words(f"{row['content']} {row['tags'].replace(',', ' ')}"))
        if ent and named:
            cov = coverage(rest_words, fact_words) if rest_words else 1.0
        else:
            cov = coverage(q_words, fact_words)
        aff = min(1.0, max(0.0, affinity.get(fid, 0.0)) / AFFINITY_FULL)
        relevance = (1 - w) * (0.5 * fts + 0.3 * cov + 0.2 * ent) + w * aff
        decay = trust.decay_factor(row["updated_at"], store.half_life_days)
        scored[fid] = relevance * float(row["trust_score"]) * decay
        # holographic's fts_rank: |bm25| / the best |bm25| among the matches (floor 1e-6), so 1.0 is best
        extra[fid] = {"fts_rank": round(ranks[fid] / max(best, 1e-6), SCORE_DECIMALS) if fid in ranks else None}
    return _finish(store, scored, limit, record=record, extra=extra)


def _names_of(store: FactRows, entity: str) -> tuple[dict[str, Any] | None, list[str]]:
    entity = storable_text(entity or "")
    found = store.resolve_entity(entity)
    if found is None:
        return None, [" ".join(entity.split())]
    return found, [found["name"], *found["aliases"]]


def _mentions(store: FactRows, names: list[str], category: str | None, min_trust: float) -> set[int]:
    phrases = " OR ".join('"' + n.replace('"', " ") + '"' for n in names if n.strip())
    if not phrases:
        return set()
    ranks, _ = fts_ranks(store, phrases, 1000, category=category, min_trust=min_trust)
    return set(ranks)


def probe(store: FactRows, entity: str, *, category: str | None = None, limit: int = 10,
          min_trust: float = 0.0, record: bool = True) -> list[dict[str, Any]]:
    """All facts about ``entity`` (name or alias, case-insensitive).

    ``score = trust × (0.55·linked + 0.25·presence + 0.20·mentioned) + 0.01·is_subject`` where
    ``linked`` is the exact SQL link, ``presence`` the HRR test
    ``similarity(fact, bind(entity, ROLE_ENTITY))`` and ``mentioned`` an FTS
    phrase match of the name or an alias.
    """
    found, names = _names_of(store, entity or "")
    if not names[0]:
        return []
    linked = {}
    if found is not None:
        linked = {int(r["fact_id"]): int(r["position"]) for r in store.entity_facts(found["entity_id"])}
    presence = store.presence(names[0])
    mentioned = _mentions(store, names, category, min_trust)
    candidates = set(linked) | mentioned | {f for f, s in presence.items() if s >= PRESENCE_FLOOR}
    rows = _category_ids(store, candidates, category, min_trust)
    scored = {}
    for fid, row in rows.items():
        pres = min(1.0, max(0.0, presence.get(fid, 0.0)) / PRESENCE_FULL)
        base = 0.55 * (fid in linked) + 0.25 * pres + 0.20 * (fid in mentioned)
        scored[fid] = base * float(row["trust_score"]) + (0.01 if linked.get(fid) == 0 else 0.0)
    return _finish(store, scored, limit, record=record)


def related(store: FactRows, entity: str, *, category: str | None = None, limit: int = 10,
            min_trust: float = 0.0) -> list[dict[str, Any]]:
    """What connects to ``entity``: its facts that involve other entities, then its other facts,
    then facts about its neighbours (entities it co-occurs with), weighted by co-occurrence.

    Each result carries ``related_entities``: the other entities that connect it.
    """
    found, names = _names_of(store, entity or "")
    if found is None:
        hits = _mentions(store, names, category, min_trust)
        rows = _category_ids(store, hits, category, min_trust)
        return _finish(store, {f: 0.5 * float(r["trust_score"]) for f, r in rows.items()}, limit,
                       record=False)
    eid = int(found["entity_id"])
    direct = {int(r["fact_id"]) for r in store.entity_facts(eid)}
    others: dict[int, set[int]] = {}
    cooc: dict[int, int] = {}
    for fact_id, other in store.storage.co_entities(direct, eid):
        others.setdefault(fact_id, set()).add(other)
        cooc[other] = cooc.get(other, 0) + 1
    weight: dict[int, float] = {fid: (1.0 if fid in others else 0.55) for fid in direct}
    via: dict[int, set[int]] = {fid: set(ents) for fid, ents in others.items()}
    top = max(cooc.values(), default=1)
    for neighbour, count in sorted(cooc.items(), key=lambda kv: -kv[1])[:50]:
        for row in store.entity_facts(neighbour):
            fid = int(row["fact_id"])
            if fid in direct:
                continue
            w = 0.45 * (0.5 + 0.5 * count / top)
            if w > weight.get(fid, 0.0):
                weight[fid] = w
            via.setdefault(fid, set()).add(neighbour)
    rows = _category_ids(store, weight, category, min_trust)
    names_by_id = _entity_names(store, {e for ents in via.values() for e in ents})
    scored = {fid: weight[fid] * float(row["trust_score"]) for fid, row in rows.items()}
    extra = {fid: {"related_entities": sorted(names_by_id[e] for e in via.get(fid, ()))}
             for fid in rows}
    return _finish(store, scored, limit, record=False, extra=extra)


def _entity_names(store: FactRows, ids: set[int]) -> dict[int, str]:
    return {eid: row["name"] for eid, row in store.storage.entities_by_ids(ids).items()}


def reason(store: FactRows, entities: Sequence[str], *, category: str | None = None,
           limit: int = 10, min_trust: float = 0.0) -> list[dict[str, Any]]:
    """Facts in which all the given entities occur together (AND), best first.

    Full matches score ``trust × (0.75 + 0.25·min_i presence_i)``; with three or
    more entities, facts holding at least two of them follow; when fewer than
    ``limit`` facts remain, two-step chains (``A — X`` and ``X — B``) through a
    shared entity ``X`` are added with ``via`` naming it.
    """
    wanted = [e for e in dict.fromkeys(" ".join(e.split()) for e in entities) if e]
    if not wanted:
        return []
    sets: list[set[int]] = []
    canon: list[str] = []
    ids: list[int | None] = []
    for name in wanted:
        found, names = _names_of(store, name)
        if found is not None:
            sets.append({int(r["fact_id"]) for r in store.entity_facts(found["entity_id"])})
            ids.append(int(found["entity_id"]))
        else:
            sets.append(_mentions(store, names, category, min_trust))
            ids.append(None)
        canon.append(names[0])
    presences = [store.presence(n) for n in canon]
    counts: dict[int, int] = {}
    for s in sets:
        for fid in s:
            counts[fid] = counts.get(fid, 0) + 1
    need_partial = 2 if len(wanted) > 2 else len(wanted)
    weight: dict[int, float] = {}
    for fid, n in counts.items():
        if n == len(wanted):
            pres = min(min(1.0, max(0.0, p.get(fid, 0.0)) / PRESENCE_FULL) for p in presences)
            weight[fid] = 0.75 + 0.25 * pres
        elif n >= need_partial:
            weight[fid] = 0.5 * n / len(wanted)
    extra: dict[int, dict[str, Any]] = {}
    if len(weight) < limit and len(wanted) >= 2:
        _add_chains(store, ids, sets, weight, extra)
    rows = _category_ids(store, weight, category, min_trust)
    scored = {fid: weight[fid] * float(row["trust_score"]) for fid, row in rows.items()}
    return _finish(store, scored, limit, record=False, extra=extra)


def _add_chains(store: FactRows, ids: list[int | None], sets: list[set[int]],
                weight: dict[int, float], extra: dict[int, dict[str, Any]]) -> None:
    """Add facts of two-step paths between consecutive resolved entities through a shared neighbour."""

    def neighbours(facts: set[int], own: int) -> dict[int, set[int]]:
        out: dict[int, set[int]] = {}
        for fact_id, entity_id in store.storage.co_entities(facts, own):
            out.setdefault(entity_id, set()).add(fact_id)
        return out

    for i in range(len(ids) - 1):
        a, b = ids[i], ids[i + 1]
        if a is None or b is None:
            continue
        left, right = neighbours(sets[i], a), neighbours(sets[i + 1], b)
        shared = set(left) & set(right)
        names = _entity_names(store, shared)
        for x in sorted(shared):
            for fid in left[x] | right[x]:
                if fid not in weight:
                    weight[fid] = 0.35
                    extra[fid] = {"via": names.get(x, "")}
