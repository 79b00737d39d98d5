"""Contradiction detection: same subject, same relation, different value.

Two facts are compared only when they share an entity, found through the
``fact_entities`` index a page of entities at a time (:func:`index_candidates`;
:func:`scan_candidates` is the reference full scan giving the same groups), so
the work is per entity rather than all pairs and bounded by a time and work
budget (:func:`contradict_report`); within an entity only the
pairs that can score (``candidate_pairs``: a fact about another named subject
that merely mentions the entity is compared only with facts whose frame starts
with the same word). For each shared entity the
entity's own words are removed from both texts; what remains is a *frame*
(stemmed words, articles dropped, prepositions and negations kept). The pair
is a contradiction when

* the frames share a leading and/or trailing part (the relation: "lives in",
  "favourite colour", "… years old") holding at least one content word that is
  not a name, together covering at least half of the longer frame, and both
  differ in a short middle (the value: at most 4 words each, neither empty — a
  pure addition is a refinement); a difference in leading names is a different
  subject, and relations that normally hold several values ("works with",
  "speaks", "likes", "visited") are not flagged, or
* the frames are equal except for negation ("likes tea" / "does not like tea").

``content_similarity`` reports the HRR similarity of the two texts bound to the
content role; ``entity_overlap`` the Jaccard overlap of the linked entities.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from hermes_store.budget import current_budget
from hermes_store.facts import hrr
from hermes_store.facts.rows import FactRows
from hermes_store.facts.text import NEGATIONS, normalize, stem, words
from hermes_store.query import STOPWORDS

MAX_FACTS_PER_ENTITY = 300  # most recently updated facts compared per entity (bounds O(n²))
ENTITY_PAGE = 500  # entities whose groups are read from the index at a time
MAX_WORK = 5_000_000  # rows read plus pairs compared by one contradict call
MAX_VALUE_WORDS = 4
MIN_SHARED = 0.3          # share of the longer frame the relation context must cover
AGENT_VALUE_SCORE = 0.45  # values that are both agents: reported only below the default threshold
# Relation words after which several values are normal (stems, as frames store them).
MULTI_VALUED = frozenset(stem(w) for w in (
    "with", "and", "together", "visited", "visits", "met", "meets", "knows", "likes", "loves",
    "enjoys", "speaks", "plays", "owns", "friend", "friends", "also", "sometimes", "collects"))
_DROP = frozenset({"a", "an", "the", "s", "is", "are", "was", "were", "be", "been", "am",
                   "do", "does", "did", "has", "have", "had", "currently", "now", "still", "really",
                   "very", "also", "just"})


# Common paraphrases of functional relations, rewritten to one form before framing.
SYNONYMS = [
    (re.compile(r"\b(?:moved|relocated|has moved|has relocated)\s+to\b"), "lives in"),
    (re.compile(r"\b(?:resides|is based|is living|now lives)\s+in\b"), "lives in"),
    (re.compile(r"\b(?:is employed|is working|has a job|got a job|now works)\s+as\b"), "works as"),
]

_ALIAS_MARKER = re.compile(r"(?<!\w)(?:aka|a\.k\.a\.?|also known as|also called)(?!\w)")


# A negation's comparable form: a mark no stem or index token can carry ("note" stems to "not",
# which must not read as a negation), followed by the word itself.
NEGATION_MARK = "\u00ac"
NEGATION_FORMS = frozenset(NEGATION_MARK + w for w in NEGATIONS)


def frame_words(text: str) -> list[tuple[str, str]]:
    """``(word, comparable form)`` of every word of ``text`` that a frame may keep, in order:
    synonyms rewritten, alias markers and :data:`_DROP` words taken out, stems for all but
    negations. The same for every entity of a fact (see :func:`frame`)."""
    text = normalize(text)
    for pattern, replacement in SYNONYMS:
        text = pattern.sub(replacement, text)
    text = _ALIAS_MARKER.sub(" ", text)
    return [(w, NEGATION_MARK + w if w in NEGATIONS else stem(w)) for w in words(text) if w not in _DROP]


def frame(text: str, remove: set[str]) -> list[str]:
    """The comparable words of ``text`` with the words of ``remove`` (an entity's names) taken out."""
    return [form for w, form in frame_words(text) if w not in remove]


def compare(a: list[str], b: list[str], names: frozenset[str] | set[str] = frozenset(),
            agents: frozenset[str] | set[str] = frozenset()) -> float:
    """Contradiction strength of two frames in [0, 1] (0 = not a contradiction).

    ``names`` are the (stemmed) words of the facts' entities: shared context made
    only of names is a shared subject, not a shared relation. ``agents`` are the
    words of entities that are the subject of some fact (people, teams): two
    facts relating the same subject to *different agents* ("borrowed a book from
    X / from Y") are usually both true, so they score below the default threshold.
    """
    if not a or not b or a == b:
        return 0.0
    neg_a = [w for w in a if w in NEGATION_FORMS]
    neg_b = [w for w in b if w in NEGATION_FORMS]
    core_a = [w for w in a if w not in NEGATION_FORMS]
    core_b = [w for w in b if w not in NEGATION_FORMS]
    if core_a and core_a == core_b and bool(neg_a) != bool(neg_b):
        return 0.9
    if bool(neg_a) != bool(neg_b):
        return 0.0
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    mid_a, mid_b = a[prefix:len(a) - suffix], b[prefix:len(b) - suffix]
    context = a[:prefix] + a[len(a) - suffix:]
    if not mid_a or not mid_b or not any(w not in names and w not in STOPWORDS for w in context):
        return 0.0
    if prefix == 0 and any(w in names for w in mid_a + mid_b):
        return 0.0  # the leading words differ by a name: different subjects, not different values
    if any(w in MULTI_VALUED for w in a[:prefix]):
        return 0.0  # "works with Bob" / "works with Carol" can both be true
    if len(mid_a) > MAX_VALUE_WORDS or len(mid_b) > MAX_VALUE_WORDS:
        return 0.0
    if set(mid_a) & set(mid_b) or mid_a[0] in STOPWORDS or mid_b[0] in STOPWORDS:
        return 0.0  # a differing preposition means a different relation ("works as" / "works at")
    shared = (prefix + suffix) / max(len(a), len(b))
    if shared < MIN_SHARED:
        return 0.0
    if agents and set(mid_a) <= agents and set(mid_b) <= agents:
        return AGENT_VALUE_SCORE
    return round(0.5 + 0.5 * shared, 3)


def _lead(words_: list[str]) -> str | None:
    """The first word of a frame that is not a negation (None for a frame of negations only)."""
    return next((w for w in words_ if w not in NEGATION_FORMS), None)


def candidate_pairs(eid: int, frames: dict[int, list[str]], links: dict[int, set[int]],
                    stemmed: dict[int, set[str]]) -> list[tuple[int, int]]:
    """The pairs of one entity's facts that ``compare`` can score above 0, in id order.

    A frame that *starts with a name* of another of its fact's entities ("Bob
    lives in", in the facts of "Paris") can only contradict a frame with the
    same first word: otherwise the leading words differ by a name, which is a
    different subject (see ``compare``), and a negation pair has equal cores.
    So such facts are compared only within their bucket of that first word,
    and the many facts that merely mention a popular entity ("… lives in
    Paris") cost one bucket look-up each instead of one comparison per fact of
    the entity. Facts whose frame starts with any other word are compared with
    each other and with the name-led facts of their own first word, as before.
    The pairs kept are a superset of those scoring above 0: results are the
    same as comparing every pair.
    """
    free: list[int] = []
    free_by_lead: dict[str, list[int]] = {}
    led_by_lead: dict[str, list[int]] = {}
    for fid in sorted(frames):
        words_ = frames[fid]
        if not words_:
            continue  # an empty frame never scores
        names = set().union(*(stemmed.get(e, set()) for e in links.get(fid, set()) - {eid}))
        lead = _lead(words_)
        if words_[0] not in NEGATION_FORMS and words_[0] in names:
            led_by_lead.setdefault(words_[0], []).append(fid)
        else:
            free.append(fid)
            if lead is not None:
                free_by_lead.setdefault(lead, []).append(fid)
    pairs = set(combinations(free, 2))
    for lead, led in led_by_lead.items():
        pairs.update(combinations(led, 2))
        pairs.update((min(x, y), max(x, y)) for x in led for y in free_by_lead.get(lead, ()))
    return sorted(pairs)


@dataclass
class CandidateBatch:
    """Entity groups to compare (each entity's most recent facts, ids in id order) with what
    comparing them needs: contents, every entity link of those facts, entity words, subjects."""

    groups: list[tuple[int, list[int]]]
    contents: dict[int, str]
    links: dict[int, set[int]]
    entity_words: dict[int, set[str]]
    subjects: set[int]
    rows: int  # rows read from the store for this batch
    fresh: list[int] = field(default_factory=list)  # entities of ``entity_words`` first seen in this batch
    # fact_id -> frame_words, filled as facts are framed (None: frame every link from scratch)
    frame_cache: dict[int, list[tuple[str, str]]] | None = None


class _EntityWords:
    """Words of entities and which entities are subjects, looked up once per entity."""

    def __init__(self, store: FactRows) -> None:
        self.store = store
        self.words: dict[int, set[str]] = {}
        self.subjects: set[int] = set()

    def load(self, ids: set[int]) -> list[int]:
        """Look up the entities of ``ids`` not seen before; returns them."""
        missing = sorted(ids - self.words.keys())
        if not missing:
            return []
        for eid in missing:
            self.words[eid] = set()
        for eid, row in self.store.storage.entities_by_ids(missing).items():
            self.words[eid] = set(words(f"{row['name']} {' '.join(row['aliases'])}"))
        self.subjects |= self.store.storage.subject_entities(missing)
        return missing


def index_candidates(store: FactRows, category: str | None) -> Iterator[CandidateBatch]:
    """Candidate groups found through the ``fact_entities`` index, one page of entities at a time.

    A page is the next ``ENTITY_PAGE`` entities linked to two or more facts (of ``category``);
    for them the index gives each entity's ``MAX_FACTS_PER_ENTITY`` most recently updated
    facts, then those facts' other links and the linked entities' words. Memory holds one
    page; the work is the links of the entities compared, nothing else of the store.
    """
    storage = store.storage
    known = _EntityWords(store)
    after = -1
    while True:
        page = storage.shared_entity_ids(category, after=after, limit=ENTITY_PAGE)
        if not page:
            return
        after = page[-1]
        members = storage.entity_recent_facts(page, MAX_FACTS_PER_ENTITY, category)
        contents: dict[int, str] = {}
        grouped: dict[int, list[int]] = {}
        for eid, fid, content in members:
            grouped.setdefault(eid, []).append(fid)
            contents[fid] = content
        links: dict[int, set[int]] = {fid: set() for fid in contents}
        co = storage.co_entities(contents, exclude=-1)
        for fid, eid in co:
            links[fid].add(eid)
        fresh = known.load({e for es in links.values() for e in es})
        yield CandidateBatch([(e, grouped[e]) for e in page if len(grouped.get(e, ())) >= 2],
                             contents, links, known.words, known.subjects, len(members) + len(co) + len(fresh),
                             fresh=fresh, frame_cache={})


def scan_candidates(store: FactRows, category: str | None) -> Iterator[CandidateBatch]:
    """The reference full scan: every link of the store loaded, then grouped by entity.

    Same groups as :func:`index_candidates`, in one batch, each link framed from scratch
    (the code before the index path); kept to check the index path against (``tests/facts``)
    and to measure it (``scripts/bench_contradict.py``).
    """
    storage = store.storage
    subjects = storage.subject_entity_ids()
    groups: dict[int, list[int]] = {}
    links: dict[int, set[int]] = {}
    count = 0
    for entity_id, fact_id in storage.entity_fact_links(category):
        count += 1
        links.setdefault(fact_id, set()).add(entity_id)
        members = groups.setdefault(entity_id, [])
        if len(members) < MAX_FACTS_PER_ENTITY:
            members.append(fact_id)
    groups = {e: f for e, f in groups.items() if len(f) >= 2}
    fact_ids = sorted({f for facts in groups.values() for f in facts})
    contents = storage.fact_contents(fact_ids)
    entity_words: dict[int, set[str]] = {}
    for eid, row in storage.entities_by_ids(e for f in fact_ids for e in links.get(f, ())).items():
        entity_words[eid] = set(words(f"{row['name']} {' '.join(row['aliases'])}"))
    yield CandidateBatch(sorted(groups.items()), contents, links, entity_words, subjects,
                         count + len(contents) + len(entity_words), fresh=list(entity_words))


CANDIDATE_SOURCES: dict[str, Callable[[FactRows, str | None], Iterator[CandidateBatch]]] = {
    "index": index_candidates,
    "scan": scan_candidates,
}


@dataclass
class ContradictReport:
    """What :func:`contradict_report` found, and why it stopped early (``note``; None when complete)."""

    results: list[dict[str, Any]]
    note: str | None = None
    entities: int = 0      # entity groups compared
    comparisons: int = 0   # fact pairs scored
    rows: int = 0          # rows read from the store


def _budget_note(report: ContradictReport, reason: str) -> str:
    return (f"contradict stopped at its {reason} after {report.entities} entities "
            f"({report.comparisons} comparisons, {report.rows} rows read); results are partial")


def contradict(store: FactRows, *, category: str | None = None, limit: int = 10,
               threshold: float = 0.5) -> list[dict[str, Any]]:
    """Pairs of facts that contradict each other, strongest first (see :func:`contradict_report`).

    Items: ``{fact_a, fact_b, entity_overlap, content_similarity,
    contradiction_score, shared_entities}`` (numbers rounded to 3 places).
    """
    return contradict_report(store, category=category, limit=limit, threshold=threshold).results


def contradict_report(store: FactRows, *, category: str | None = None, limit: int = 10,
                      threshold: float = 0.5, source: str = "index", seconds: float | None = None,
                      max_work: int = MAX_WORK) -> ContradictReport:
    """Contradicting pairs (as :func:`contradict`) within a time and work budget.

    ``seconds`` defaults to the current query budget (:func:`hermes_store.budget.current_budget`:
    the tool or CLI budget); ``max_work`` bounds rows read plus pairs compared. When either is
    spent, the pairs found so far are returned with a ``note`` saying so. ``source`` names the
    candidate generator in :data:`CANDIDATE_SOURCES` (the same pairs either way).
    """
    seconds = current_budget() if seconds is None else seconds
    deadline = None if not seconds or seconds <= 0 else time.monotonic() + seconds
    report = ContradictReport([])
    best: dict[tuple[int, int], float] = {}
    stemmed: dict[int, set[str]] = {}

    def spent() -> str | None:
        if deadline is not None and time.monotonic() > deadline:
            return f"{seconds:.1f} s time budget"
        if report.rows + report.comparisons > max_work:
            return f"work budget ({max_work} rows and comparisons)"
        return None

    for batch in CANDIDATE_SOURCES[source](store, category):
        report.rows += batch.rows
        for eid in batch.fresh:
            ws = batch.entity_words[eid]
            stemmed[eid] = {stem(w) for w in ws} | ws
        for eid, facts in batch.groups:
            reason = spent()
            if reason:
                report.note = _budget_note(report, reason)
                break
            report.entities += 1
            report.comparisons += _score_group(eid, facts, batch, stemmed, threshold, best)
        if report.note:
            break
    report.results = _pair_items(store, best, limit)
    return report


def _score_group(eid: int, facts: list[int], batch: CandidateBatch, stemmed: dict[int, set[str]],
                 threshold: float, best: dict[tuple[int, int], float]) -> int:
    """Score the candidate pairs of one entity's facts into ``best``; returns the pairs scored."""
    contents, links = batch.contents, batch.links
    remove = batch.entity_words.get(eid, set())
    cache = batch.frame_cache
    if cache is None:
        frames = {fid: frame(contents[fid], remove) for fid in facts}
    else:
        for fid in facts:
            if fid not in cache:
                cache[fid] = frame_words(contents[fid])
        frames = {fid: [form for w, form in cache[fid] if w not in remove] for fid in facts}
    scored = 0
    same: dict[int, str] = {}
    for x, y in candidate_pairs(eid, frames, links, stemmed):
        for fid in (x, y):
            if fid not in same:
                same[fid] = normalize(contents[fid])
        if same[x] == same[y]:
            continue
        scored += 1
        linked = (links[x] | links[y]) - {eid}
        names = set().union(*(stemmed.get(e, set()) for e in linked))
        agents = set().union(*(stemmed.get(e, set()) for e in linked if e in batch.subjects))
        strength = compare(frames[x], frames[y], names, agents)
        if strength >= threshold:
            best[(x, y)] = max(best.get((x, y), strength), strength)
    return scored


def _pair_items(store: FactRows, best: dict[tuple[int, int], float], limit: int) -> list[dict[str, Any]]:
    """The ``limit`` strongest pairs of ``best`` as result items."""
    if not best:
        return []
    pairs = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[: max(0, int(limit))]
    involved = sorted({f for (x, y), _ in pairs for f in (x, y)})
    facts_by_id = {f["fact_id"]: f for f in store.facts_by_ids(involved)}
    results = []
    for (x, y), score in pairs:
        fa, fb = facts_by_id[x], facts_by_id[y]
        ents_a = {e.casefold() for e in fa["entities"]}
        ents_b = {e.casefold() for e in fb["entities"]}
        union = ents_a | ents_b
        overlap = len(ents_a & ents_b) / len(union) if union else 0.0
        sim = hrr.similarity(hrr.encode_text(fa["content"], store.dim), hrr.encode_text(fb["content"], store.dim))
        results.append({
            "fact_a": fa,
            "fact_b": fb,
            "entity_overlap": round(overlap, 3),
            "content_similarity": round(sim, 3),
            "contradiction_score": round(score, 3),
            "shared_entities": sorted(e for e in fa["entities"] if e.casefold() in ents_b),
        })
    return results
