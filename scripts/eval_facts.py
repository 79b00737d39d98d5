#!/usr/bin/env python3
"""Evaluate the fact store against a re-implementation of the Hermes holographic formulas.

Plants 1,000 facts about 100 people (each with a one-word nickname introduced
by an ``aka`` fact and used in some facts), 20 shared cities and other values,
person-to-person relation facts, and 50 contradictions (same subject and
relation, different value; some phrased with "now", through the nickname, or
paraphrased: "moved to X" against "lives in Y", "now earns a living as X" against
"works as Y"), plus 50 harmless second values of multi-valued relations
("speaks French" / "speaks German"). Then reports, for ``hermes_store`` and for the anchor formulas
(reference §1 extraction, §3 encoding, §3.1 probe/related/reason/contradict):

* probe precision@5 (query = full name; and by nickname),
* reason (2 entities) precision@3 over pairs that share at least one fact,
* related precision@5 (relevant = facts linking the person to another entity),
* contradict recall over the 50 planted pairs and the false-positive share of
  the reported pairs, plus a held-out check on 20 hand-written contradicting
  and 20 compatible pairs that were never used to tune the detector,
* HRR signal: mean presence similarity of linked vs unlinked facts, and probe
  precision when ranking by HRR presence alone;
* search hit@1 for natural-language questions ("where does X live") with and
  without the HRR content-role term, and that term's mean affinity for the
  answer vs other facts (ours only: the anchor's FTS search is not re-implemented).

precision@k = hits in the top k / min(k, number of relevant facts).
Usage: ``python scripts/eval_facts.py [--seed 7] [--dim 1024] [--json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hermes_store.facts import FactStore  # noqa: E402

CITIES = ["Paris", "Berlin", "Lisbon", "Oslo", "Madrid", "Rome", "Vienna", "Prague", "Dublin", "Warsaw",
          "Athens", "Helsinki", "Zurich", "Porto", "Krakow", "Seville", "Munich", "Lyon", "Bergen", "Riga"]
JOBS = ["nurse", "teacher", "plumber", "pilot", "chemist", "lawyer", "carpenter", "baker", "architect",
        "dentist", "journalist", "farmer", "librarian", "surgeon", "translator"]
COLORS = ["blue", "green", "red", "yellow", "purple", "orange", "teal", "black", "white", "silver"]
CARS = ["hatchback", "pickup truck", "minivan", "convertible", "station wagon", "sedan", "scooter"]
SUBJECTS = ["physics", "history", "biology", "economics", "music", "philosophy", "law", "medicine"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
LANGUAGES = ["French", "German", "Spanish", "Italian", "Polish", "Greek", "Finnish", "Dutch"]
INSTRUMENTS = ["piano", "violin", "cello", "drums", "flute", "guitar", "trumpet"]
FOODS = ["sushi", "lasagne", "dumplings", "tacos", "curry", "risotto", "falafel", "ramen"]
PETS = ["cat", "dog", "parrot", "tortoise", "rabbit", "hamster"]
HOBBIES = ["climbing", "chess", "knitting", "sailing", "running", "painting", "birdwatching"]

# (template, value pool, functional?) — contradictions are planted on functional relations only.
ATTRIBUTES = [
    ("{s} lives in {v}", CITIES, True),
    ("{s} works as a {v}", JOBS, True),
    ("{s} was born in {v}", CITIES, True),
    ("{s}'s favourite colour is {v}", COLORS, True),
    ("{s} drives a {v}", CARS, True),
    ("{s} is {v} years old", [str(n) for n in range(21, 70)], True),
    ("{s}'s birthday is in {v}", MONTHS, True),
    ("{s} studied {v} at university", SUBJECTS, True),
    ("{s} speaks {v}", LANGUAGES, False),
    ("{s} plays the {v}", INSTRUMENTS, False),
    ("{s} likes {v}", FOODS, False),
    ("{s} owns a {v}", PETS, False),
    ("{s} has visited {v}", CITIES, False),
    ("{s} enjoys {v}", HOBBIES, False),
]
SEARCH_QUERIES = {
    "{s} lives in {v}": "where does {s} live",
    "{s} works as a {v}": "what does {s} work as",
    "{s} was born in {v}": "where was {s} born",
    "{s}'s favourite colour is {v}": "{s} favourite colour",
    "{s} drives a {v}": "what car does {s} drive",
    "{s} is {v} years old": "how old is {s}",
    "{s}'s birthday is in {v}": "when is the birthday of {s}",
    "{s} studied {v} at university": "what did {s} study",
}
RELATIONS = ["{a} works with {b}", "{a} went hiking with {b}", "{a} mentors {b}",
             "{a} shares an office with {b}", "{a} borrowed a book from {b}",
             "{a} and {b} play tennis together", "{a} is neighbours with {b}"]
SYLLABLES = ["ka", "lo", "mi", "ra", "ve", "no", "ta", "si", "be", "du", "fe", "go", "ha", "ju", "ki",
             "le", "ma", "ni", "po", "ru", "sa", "te", "vi", "za", "bo", "ce", "di", "el", "an", "or"]


@dataclass
class Person:
    name: str
    nickname: str


@dataclass
class Fact:
    content: str
    people: list[int]                      # indices of persons mentioned
    other_entities: int = 0                # named non-person entities mentioned (cities, etc.)
    relation: str | None = None            # template key for attribute facts
    value: str | None = None


@dataclass
class Dataset:
    people: list[Person]
    facts: list[Fact]
    contradictions: list[tuple[int, int]] = field(default_factory=list)  # fact indices


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(syllables)).capitalize()


def build_dataset(seed: int) -> Dataset:
    """1,000 facts: 100 aka facts, 550 attributes, 50 second values of multi-valued relations,
    250 person relations, 50 contradictions (some paraphrased: "moved to", "now earns a living as")."""
    rng = random.Random(seed)
    used: set[str] = set()
    people: list[Person] = []
    while len(people) < 100:
        first, last, nick = _word(rng, 2), _word(rng, 3), _word(rng, 2) + "o"
        if {first, last, nick} & used or first == nick:
            continue
        used.update({first, last, nick})
        people.append(Person(f"{first} {last}", nick))
    facts: list[Fact] = []
    for i, p in enumerate(people):
        facts.append(Fact(f"{p.name} aka {p.nickname} joined the book club", [i]))
    attribute_slots: list[tuple[int, int, str]] = []
    per_person = [5] * 50 + [6] * 50
    rng.shuffle(per_person)
    for i, p in enumerate(people):
        chosen = rng.sample(range(len(ATTRIBUTES)), per_person[i])
        for k in chosen:
            template, pool, _ = ATTRIBUTES[k]
            value = rng.choice(pool)
            subject = p.nickname if rng.random() < 0.2 else p.name
            named = 1 if value in CITIES + MONTHS + LANGUAGES else 0
            facts.append(Fact(template.format(s=subject, v=value), [i], named, template, value))
            attribute_slots.append((len(facts) - 1, k, value))
    # distractors: a second value of a multi-valued relation (both true, not a contradiction)
    multi = [s for s in attribute_slots if not ATTRIBUTES[s[1]][2]]
    for idx, k, value in rng.sample(multi, 50):
        template, pool, _ = ATTRIBUTES[k]
        person = facts[idx].people[0]
        other = rng.choice([v for v in pool if v != value])
        named = 1 if other in CITIES + MONTHS + LANGUAGES else 0
        facts.append(Fact(template.format(s=people[person].name, v=other), [person], named, template, other))
    pairs: set[tuple[int, int, int]] = set()
    while len(pairs) < 250:
        a, b = rng.sample(range(100), 2)
        r = rng.randrange(len(RELATIONS))
        if (a, b, r) in pairs or (b, a, r) in pairs:
            continue
        pairs.add((a, b, r))
        facts.append(Fact(RELATIONS[r].format(a=people[a].name, b=people[b].name), [a, b]))
    functional = [s for s in attribute_slots if ATTRIBUTES[s[1]][2]]
    planted: list[tuple[int, int]] = []
    for idx, k, value in rng.sample(functional, 50):
        template, pool, _ = ATTRIBUTES[k]
        person = facts[idx].people[0]
        new_value = rng.choice([v for v in pool if v != value])
        style = rng.random()
        subject = people[person].nickname if style < 0.2 else people[person].name
        text = template.format(s=subject, v=new_value)
        if 0.2 <= style < 0.45:
            text = re.sub(r" (lives|works|drives|is) ", lambda m: f" now {m.group(1)} ", text, count=1)
        elif style >= 0.8 and template == "{s} lives in {v}":
            text = f"{subject} moved to {new_value}"
        elif style >= 0.8 and template == "{s} works as a {v}":
            text = f"{subject} now earns a living as a {new_value}"
        named = 1 if new_value in CITIES + MONTHS + LANGUAGES else 0
        facts.append(Fact(text, [person], named, template, new_value))
        planted.append((idx, len(facts) - 1))
    assert len(facts) == 1000, len(facts)
    return Dataset(people, facts, planted)


# Hand-written pairs, written once and never used to tune the detector (a held-out check).
HELD_OUT_CONTRADICTIONS = [
    ("Priya's laptop runs Ubuntu", "Priya's laptop runs Windows"),
    ("The staging database is Postgres 14", "The staging database is Postgres 16"),
    ("Marco's phone number ends in 4471", "Marco's phone number ends in 9902"),
    ("Jonas is vegetarian", "Jonas is not vegetarian"),
    ("Elena prefers tabs for indentation", "Elena prefers spaces for indentation"),
    ("The deploy window is on Tuesday", "The deploy window is on Thursday"),
    ("Kofi's manager is Sarah", "Kofi's manager is Daniel"),
    ("Lucia lives in Montreal", "Lucia moved to Toronto"),
    ("The API rate limit is 100 requests per minute", "The API rate limit is 500 requests per minute"),
    ("Hana's birthday is on March 3", "Hana's birthday is on May 12"),
    ("Tom drinks his coffee black", "Tom drinks his coffee with milk"),
    ("Project Atlas uses React", "Project Atlas uses Vue"),
    ("Amir works at Spotify", "Amir works at Shopify"),
    ("The office wifi password is sunflower42", "The office wifi password is bluebird17"),
    ("Nina's cat is called Miso", "Nina's cat is called Tofu"),
    ("Oscar is allergic to peanuts", "Oscar is not allergic to peanuts"),
    ("The backup job runs at 2am", "The backup job runs at 4am"),
    ("Greta speaks fluent Japanese", "Greta does not speak Japanese"),
    ("Ravi's favourite editor is Vim", "Ravi's favourite editor is Emacs"),
    ("The main branch is called master", "The main branch is called main"),
]
HELD_OUT_COMPATIBLE = [
    ("Priya's laptop runs Ubuntu", "Priya's laptop has 32 GB of RAM"),
    ("Marco lives in Turin", "Marco works in Milan"),
    ("Elena prefers tabs for indentation", "Elena prefers dark themes"),
    ("Kofi's manager is Sarah", "Kofi's mentor is Daniel"),
    ("Lucia lives in Montreal", "Lucia was born in Toronto"),
    ("Amir works at Spotify", "Amir worked at Shopify before 2020"),
    ("Hana speaks Korean", "Hana speaks English"),
    ("Tom plays football on Sundays", "Tom plays chess on Fridays"),
    ("Project Atlas uses React", "Project Atlas uses Postgres"),
    ("Nina has a cat called Miso", "Nina has a dog called Rex"),
    ("Oscar is allergic to peanuts", "Oscar is allergic to shellfish"),
    ("The backup job runs at 2am", "The cleanup job runs at 4am"),
    ("Greta visited Kyoto in 2019", "Greta visited Osaka in 2021"),
    ("Ravi likes Vim", "Ravi likes Neovim"),
    ("Jonas is vegetarian", "Jonas is training for a marathon"),
    ("The API rate limit is 100 requests per minute", "The API timeout is 30 seconds"),
    ("Sam met Alice in Paris", "Sam met Bob in Paris"),
    ("Leo owns a Tesla", "Leo owns a bicycle"),
    ("Mira studied physics", "Mira teaches physics"),
    ("Ivan drinks tea in the morning", "Ivan drinks coffee in the afternoon"),
]


def held_out(dim: int) -> dict[str, dict[str, float]]:
    """Flag rate of each implementation on the hand-written pairs (each pair in a fresh store)."""
    out: dict[str, dict[str, float]] = {}
    flagged = {"hermes_store": {"c": 0, "n": 0}, "anchor": {"c": 0, "n": 0}}
    with tempfile.TemporaryDirectory() as tmp:
        for n, (pairs, key) in enumerate(((HELD_OUT_CONTRADICTIONS, "c"), (HELD_OUT_COMPATIBLE, "n"))):
            for i, (a, b) in enumerate(pairs):
                with FactStore(Path(tmp) / f"pair{n}_{i}.db", hrr_dim=dim) as store:
                    store.add_fact(a)
                    store.add_fact(b)
                    flagged["hermes_store"][key] += bool(store.contradict(limit=5))
                anchor = Anchor(dim)
                anchor.add(a)
                anchor.add(b)
                anchor.finalize()
                flagged["anchor"][key] += bool(anchor.contradict())
    for name, counts in flagged.items():
        out[name] = {"held_out_recall": counts["c"] / len(HELD_OUT_CONTRADICTIONS),
                     "held_out_fp_rate": counts["n"] / len(HELD_OUT_COMPATIBLE)}
    return out


# --------------------------------------------------------------------------- anchor formulas


class Anchor:
    """The Hermes holographic formulas as the reference describes them (§1, §3, §3.1)."""

    STRIP = '.,!?;:"\'()[]{}'

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._atoms: dict[str, np.ndarray] = {}
        self.role_content = self.atom("__hrr_role_content__")
        self.role_entity = self.atom("__hrr_role_entity__")
        self.contents: list[str] = []
        self.entity_names: dict[str, str] = {}  # lower -> name (LIKE is case-insensitive)
        self.links: list[list[str]] = []
        self.vectors: np.ndarray | None = None
        self.content_keys: np.ndarray | None = None

    def atom(self, word: str) -> np.ndarray:
        if word not in self._atoms:
            blocks = math.ceil(self.dim / 16)
            raw = b"".join(hashlib.sha256(f"{word}:{i}".encode()).digest() for i in range(blocks))
            vals = np.array(struct.unpack(f"<{blocks * 16}H", raw)[: self.dim], dtype=np.float64)
            self._atoms[word] = vals * (2 * math.pi / 65536)
        return self._atoms[word]

    @staticmethod
    def bundle(vectors: list[np.ndarray]) -> np.ndarray:
        return np.mod(np.angle(np.exp(1j * np.stack(vectors)).sum(axis=0)), 2 * math.pi)

    def encode_text(self, text: str) -> np.ndarray:
        tokens = [t.strip(self.STRIP) for t in text.lower().split()]
        tokens = [t for t in tokens if t]
        if not tokens:
            return self.atom("__hrr_empty__")
        return self.bundle([self.atom(t) for t in tokens])

    @staticmethod
    def extract(text: str) -> list[str]:
        found: list[str] = []
        for pattern, flags in ((r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)\b", 0), (r'"([^"]+)"', 0),
                               (r"'([^']+)'", 0)):
            found += re.findall(pattern, text, flags)
        for m in re.finditer(r"(\w+(?:\s+\w+)*)\s+(?:aka|also known as)\s+(\w+(?:\s+\w+)*)", text,
                             re.IGNORECASE):
            found += [m.group(1), m.group(2)]
        out: list[str] = []
        for name in found:
            if name.lower() not in {o.lower() for o in out}:
                out.append(name)
        return out

    def add(self, content: str) -> None:
        names = []
        for name in self.extract(content):
            canonical = self.entity_names.setdefault(name.lower(), name)
            if canonical not in names:
                names.append(canonical)
        self.contents.append(content)
        self.links.append(names)

    def finalize(self) -> None:
        vecs, keys = [], []
        for content, names in zip(self.contents, self.links, strict=True):
            text_key = np.mod(self.encode_text(content) + self.role_content, 2 * math.pi)
            parts = [text_key] + [np.mod(self.atom(n.lower()) + self.role_entity, 2 * math.pi) for n in names]
            vecs.append(self.bundle(parts))
            keys.append(text_key)
        self.vectors = np.stack(vecs)
        self.content_keys = np.stack(keys)

    def _rank(self, sims: np.ndarray, limit: int) -> list[int]:
        score = (sims + 1) / 2 * 0.5  # × trust (all 0.5)
        return [int(i) for i in np.argsort(-score, kind="stable")[:limit]]

    def probe(self, entity: str, limit: int) -> list[int]:
        key = np.mod(self.atom(entity.lower()) + self.role_entity, 2 * math.pi)
        sims = np.mean(np.cos(self.vectors - key - self.content_keys), axis=1)
        return self._rank(sims, limit)

    def related(self, entity: str, limit: int) -> list[int]:
        e = self.atom(entity.lower())
        residual = self.vectors - e
        sims = np.maximum(np.mean(np.cos(residual - self.role_entity), axis=1),
                          np.mean(np.cos(residual - self.role_content), axis=1))
        return self._rank(sims, limit)

    def reason(self, entities: list[str], limit: int) -> list[int]:
        sims = None
        for name in entities:
            key = np.mod(self.atom(name.lower()) + self.role_entity, 2 * math.pi)
            s = np.mean(np.cos(self.vectors - key - self.role_content), axis=1)
            sims = s if sims is None else np.minimum(sims, s)
        return self._rank(sims, limit)

    def contradict(self, threshold: float = 0.3) -> list[tuple[int, int]]:
        ids = list(range(len(self.contents)))[-500:]  # the 500 most recently updated
        ents = {i: {n.lower() for n in self.links[i]} for i in ids}
        z = np.exp(1j * self.vectors[ids])
        sims = (z @ z.conj().T).real / self.dim  # similarity(v_x, v_y) for every pair
        out = []
        for x_pos, x in enumerate(ids):
            if not ents[x]:
                continue
            for y_pos in range(x_pos + 1, len(ids)):
                y = ids[y_pos]
                if not ents[y]:
                    continue
                overlap = len(ents[x] & ents[y]) / len(ents[x] | ents[y])
                if overlap < 0.3:
                    continue
                if overlap * (1 - (sims[x_pos, y_pos] + 1) / 2) >= threshold:
                    out.append((x, y))
        return out


# --------------------------------------------------------------------------- metrics


def precision_at(ranked: list[int], relevant: set[int], k: int) -> float:
    if not relevant:
        return 1.0
    return len(set(ranked[:k]) & relevant) / min(k, len(relevant))


def ground_truth(data: Dataset) -> dict[str, object]:
    about: dict[int, set[int]] = {i: set() for i in range(len(data.people))}
    linking: dict[int, set[int]] = {i: set() for i in range(len(data.people))}
    pair_facts: dict[tuple[int, int], set[int]] = {}
    for idx, fact in enumerate(data.facts):
        for p in fact.people:
            about[p].add(idx)
            if len(fact.people) > 1 or fact.other_entities:
                linking[p].add(idx)
        if len(fact.people) == 2:
            key = tuple(sorted(fact.people))
            pair_facts.setdefault(key, set()).add(idx)
    return {"about": about, "linking": linking, "pairs": pair_facts}


def evaluate(seed: int, dim: int) -> dict[str, dict[str, float]]:
    data = build_dataset(seed)
    truth = ground_truth(data)
    rng = random.Random(seed + 1)
    pairs = rng.sample(sorted(truth["pairs"]), 100)
    planted = {tuple(sorted(p)) for p in data.contradictions}
    results: dict[str, dict[str, float]] = {}

    # ---- ours
    with tempfile.TemporaryDirectory() as tmp:
        store = FactStore(Path(tmp) / "eval.db", hrr_dim=dim)
        started = time.perf_counter()
        to_fact: dict[int, int] = {}
        for idx, fact in enumerate(data.facts):
            to_fact[store.add_fact(fact.content)["fact_id"]] = idx
        add_seconds = time.perf_counter() - started

        def ours(items: list[dict]) -> list[int]:
            return [to_fact[r["fact_id"]] for r in items]

        about, linking = truth["about"], truth["linking"]
        started = time.perf_counter()
        probe = [precision_at(ours(store.probe(p.name, limit=5, record=False)), about[i], 5)
                 for i, p in enumerate(data.people)]
        probe_nick = [precision_at(ours(store.probe(p.nickname, limit=5, record=False)), about[i], 5)
                      for i, p in enumerate(data.people)]
        related = [precision_at(ours(store.related(p.name, limit=5)), linking[i], 5)
                   for i, p in enumerate(data.people)]
        reason = [precision_at(ours(store.reason([data.people[a].name, data.people[b].name], limit=3)),
                               truth["pairs"][(a, b)], 3) for a, b in pairs]
        query_seconds = time.perf_counter() - started
        search_cases: dict[tuple[int, str], set[int]] = {}
        for idx, fact in enumerate(data.facts):
            if fact.relation in SEARCH_QUERIES:
                search_cases.setdefault((fact.people[0], fact.relation), set()).add(idx)
        search_hits = {}
        for weight in (store.hrr_weight, 0.0):
            store.hrr_weight = weight
            hits = [bool(set(ours(store.search(SEARCH_QUERIES[rel].format(s=data.people[p].name),
                                                limit=1, record=False))) & relevant)
                    for (p, rel), relevant in search_cases.items()]
            search_hits[weight] = float(np.mean(hits))
        affinity_pos, affinity_neg = [], []
        for (p, rel), relevant in list(search_cases.items())[:100]:
            aff = store.text_affinity(SEARCH_QUERIES[rel].format(s=data.people[p].name))
            scores = {to_fact[f]: v for f, v in aff.items()}
            affinity_pos += [scores[f] for f in relevant]
            affinity_neg += [v for f, v in scores.items() if f not in relevant]
        found = {tuple(sorted((to_fact[c["fact_a"]["fact_id"]], to_fact[c["fact_b"]["fact_id"]])))
                 for c in store.contradict(limit=100000)}
        # HRR signal: presence of linked vs unlinked facts; ranking by presence alone
        pos, neg, hrr_only = [], [], []
        for i, p in enumerate(data.people):
            canonical = store.resolve_entity(p.name)["name"]
            presence = store.presence(canonical)
            scores = {to_fact[f]: s for f, s in presence.items()}
            pos += [scores[f] for f in about[i]]
            neg += [s for f, s in scores.items() if f not in about[i]]
            ranked = sorted(scores, key=lambda f: -scores[f])
            hrr_only.append(precision_at(ranked, about[i], 5))
        store.close()
    results["hermes_store"] = {
        "probe_p@5": float(np.mean(probe)), "probe_alias_p@5": float(np.mean(probe_nick)),
        "reason_p@3": float(np.mean(reason)), "related_p@5": float(np.mean(related)),
        "contradict_recall": len(found & planted) / len(planted),
        "contradict_fp_share": len(found - planted) / len(found) if found else 0.0,
        "contradict_reported": len(found),
        "hrr_presence_pos": float(np.mean(pos)), "hrr_presence_neg": float(np.mean(neg)),
        "hrr_only_probe_p@5": float(np.mean(hrr_only)),
        "add_seconds": add_seconds, "query_seconds": query_seconds,
        "search_hit@1": search_hits[max(search_hits)], "search_hit@1_no_hrr": search_hits[0.0],
        "search_cases": len(search_cases), "hrr_weight": max(search_hits),
        "hrr_affinity_pos": float(np.mean(affinity_pos)), "hrr_affinity_neg": float(np.mean(affinity_neg)),
    }

    # ---- anchor
    anchor = Anchor(dim)
    for fact in data.facts:
        anchor.add(fact.content)
    anchor.finalize()
    probe = [precision_at(anchor.probe(p.name, 5), truth["about"][i], 5) for i, p in enumerate(data.people)]
    probe_nick = [precision_at(anchor.probe(p.nickname, 5), truth["about"][i], 5)
                  for i, p in enumerate(data.people)]
    related = [precision_at(anchor.related(p.name, 5), truth["linking"][i], 5)
               for i, p in enumerate(data.people)]
    reason = [precision_at(anchor.reason([data.people[a].name, data.people[b].name], 3),
                           truth["pairs"][(a, b)], 3) for a, b in pairs]
    found = {tuple(sorted(p)) for p in anchor.contradict()}
    results["anchor"] = {
        "probe_p@5": float(np.mean(probe)), "probe_alias_p@5": float(np.mean(probe_nick)),
        "reason_p@3": float(np.mean(reason)), "related_p@5": float(np.mean(related)),
        "contradict_recall": len(found & planted) / len(planted),
        "contradict_fp_share": len(found - planted) / len(found) if found else 0.0,
        "contradict_reported": len(found),
    }
    for name, numbers in held_out(dim).items():
        results[name].update(numbers)
    return results


ROWS = [("probe precision@5 (full name)", "probe_p@5"), ("probe precision@5 (nickname)", "probe_alias_p@5"),
        ("reason (2 entities) precision@3", "reason_p@3"), ("related precision@5", "related_p@5"),
        ("contradict recall (50 planted)", "contradict_recall"),
        ("contradict false-positive share", "contradict_fp_share"),
        ("contradict pairs reported", "contradict_reported"),
        ("held-out hand-written pairs: contradictions flagged (of 20)", "held_out_recall"),
        ("held-out hand-written pairs: compatible pairs flagged (of 20)", "held_out_fp_rate")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args()
    results = evaluate(args.seed, args.dim)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    ours, anchor = results["hermes_store"], results["anchor"]
    print(f"eval_facts: 1000 facts, 100 people, 50 planted contradictions, seed {args.seed}, dim {args.dim}\n")
    print("| metric | hermes_store | anchor formulas |\n|---|---|---|")
    for label, key in ROWS:
        fmt = "{:.0f}" if key == "contradict_reported" else "{:.3f}"
        print(f"| {label} | {fmt.format(ours[key])} | {fmt.format(anchor[key])} |")
    print(f"\nHRR presence similarity, linked facts {ours['hrr_presence_pos']:.3f} vs others "
          f"{ours['hrr_presence_neg']:.3f}; probe precision@5 ranking by HRR presence alone "
          f"{ours['hrr_only_probe_p@5']:.3f}")
    print(f"search hit@1 over {ours['search_cases']} natural-language questions: "
          f"{ours['search_hit@1']:.3f} with the HRR term (weight {ours['hrr_weight']}), "
          f"{ours['search_hit@1_no_hrr']:.3f} without; content-role affinity of the answer "
          f"{ours['hrr_affinity_pos']:.3f} vs other facts {ours['hrr_affinity_neg']:.3f}")
    print(f"timing: 1000 adds {ours['add_seconds']:.2f}s; 300 probe/related/reason queries "
          f"{ours['query_seconds']:.2f}s")


if __name__ == "__main__":
    main()
