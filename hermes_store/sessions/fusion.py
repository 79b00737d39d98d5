"""Fusing the lexical session ranking with the semantic one (``semantic`` in config.yaml).

Both rankings are lists of ``(session key, score)``, best first: the lexical score is the best
hit score of the session, the semantic one the cosine of its nearest message. The semantic half
only speaks where the words are unsure and the meaning is sure:

- **No lexical hit at all:** the semantic ranking is the answer (there is nothing to lower).
- **Promotion:** when the lexical first score leads the second by less than ``gate`` (the
  margin ``1 - second / first``), the session of the first ``window`` lexical ones whose
  nearest message is nearest the question moves to the first place (the sessions before it move
  down one) if its cosine exceeds the lexical first's by at least ``lead``. The lexical first
  must have a cosine itself (a session whose messages are not embedded yet is not judged), and
  so must the promoted one.
- **Reach:** the session of lexical places ``window + 1`` to ``reach`` nearest the question
  takes the window's last place (the sessions from there move down one) if its cosine exceeds
  that place's session's by at least ``reach_lead``; that session must have a cosine too. The
  first ``window - 1`` places never change by it, so hit@1 and all places before the last
  shown one are the promotion's; it is what lets the semantic half raise hit@5.
- **Reranking** (only with ``semantic.reranker``, :mod:`.reranker`): a cross-encoder reads the
  question beside the ``rerank_messages`` messages nearest it by meaning of each of the first
  ``rerank_depth`` fused sessions, and a session's score is its best message's. The session of
  the best score moves to the first place when that score leads the first session's by
  ``rerank_lead``; then the best of places ``window + 1`` to ``rerank_depth`` takes the
  window's last place when its score is at least ``rerank_sure`` (the model is sure it answers)
  and leads that place's by ``rerank_lead`` (:func:`promote_reranked`). Where the question
  names a date, only a session of that date may move.
- Otherwise the lexical ranking stands as it is. Sessions only the semantic half found never
  push a lexical one out: ``session_search`` shows them, nearest first, in the places the
  lexical sessions leave empty (before 2026-12-07 one weak shared word left those places empty).
- **A date the question names** (:mod:`.dated`): the sessions of that date and the others are
  fused each on their own (:func:`fuse_parts`), so the lexical margin and the ``window`` are
  those of the date's own sessions (before, the window of the whole ranking held other days'
  sessions and the date's session nearest by meaning could lie beyond it). Only a session of
  the first part reaches into the window, so another day's session never moves before one of
  the date.
- **Evidence** (``anchors``, not a ranking rule): each shown session also shows up to
  ``anchors`` of its messages nearest the question by meaning, after its lexical further
  anchors (:func:`hermes_store.sessions.evidence.with_nearest`).

Reciprocal rank fusion of the two rankings (and its gated variants: weights, rank offsets,
windows, cosine floors; 2 916 settings) lowered some lexical figure of some question type on
LongMemEval or LoCoMo in every setting tried; this rule, with the defaults below, lowered none
(docs/retrieval.md, "Semantic search", with the sensitivity table and the command). It replaced
an earlier promotion of the semantic first session of the whole store when it led the semantic
second by ``lead`` and stood among the first ``window`` lexical ones: comparing the lexical
window's own sessions with the lexical first raised both datasets' hit@1 with either model.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from hermes_store.sessions.embeddings import EMBEDDABLE_ROLES

Ranked = Sequence[tuple[Hashable, float]]


@dataclass(frozen=True)
class Fusion:
    """How the two rankings are fused (see the module docstring)."""

    gate: float = 0.3  # lexical margin under which the semantic half may move a session
    lead: float = 0.15  # cosine lead over the lexical first that a promoted session needs
    window: int = 5  # lexical places a session may be promoted from
    reach: int = 20  # lexical places a session may take the window's last place from
    reach_lead: float = 0.2  # cosine lead over the session in that place that it needs
    anchors: int = 5  # a shown session's messages nearest by meaning shown as well
    rerank_depth: int = 10  # first fused places the reranker judges (``semantic.reranker``)
    rerank_messages: int = 3  # a judged session's messages nearest by meaning that it reads
    rerank_lead: float = 2.0  # reranker score lead that moves a session first (or fifth)
    rerank_sure: float = 4.0  # reranker score a session from beyond the window needs to reach it

    @classmethod
    def from_config(cls, section: Any, defaults: dict[str, float] | None = None) -> Fusion:
        """The fusion of a ``semantic:`` config section (unknown or bad values: the default,
        ``defaults`` (the model's own, see ``Embedder.fusion_defaults``) over the class's)."""
        base = cls(**{k: v for k, v in (defaults or {}).items() if k in cls.__dataclass_fields__})
        if not isinstance(section, dict):
            return base
        values: dict[str, Any] = {}
        for field in fields(cls):
            kind = int if field.type in ("int", int) else float
            try:
                if field.name in section:
                    values[field.name] = kind(section[field.name])
            except (TypeError, ValueError):
                continue
        return cls(**{**base.__dict__, **values})


def lexical_margin(lexical: Ranked) -> float:
    """``1 - second / first`` of the lexical scores (1.0 for a single session, 0.0 for none or
    a first score that is not positive)."""
    if not lexical:
        return 0.0
    first = float(lexical[0][1])
    if first <= 0:
        return 0.0
    second = float(lexical[1][1]) if len(lexical) > 1 else 0.0
    return max(0.0, 1.0 - max(0.0, second) / first)


def _cosines(semantic: Ranked) -> dict[Hashable, float]:
    """Each session's cosine (its first, best, entry of the semantic ranking)."""
    cosine: dict[Hashable, float] = {}
    for key, score in semantic:
        cosine.setdefault(key, float(score))
    return cosine


def fuse(lexical: Ranked, semantic: Ranked, fusion: Fusion) -> list[Hashable]:
    """The fused ranking (see the module docstring): each session once."""
    order = list(dict.fromkeys(key for key, _score in lexical))
    semantic_order = list(dict.fromkeys(key for key, _score in semantic))
    if not order:
        return semantic_order
    if not semantic or lexical_margin(lexical) >= fusion.gate:
        return order
    cosine = _cosines(semantic)
    if order[0] not in cosine:  # not embedded yet, or far from the question: nothing to compare
        return order
    judged = [key for key in order[: max(0, fusion.window)] if key in cosine]
    if not judged:
        return order
    candidate = max(judged, key=lambda key: cosine[key])  # the first of equals (order[0] is judged)
    if candidate == order[0] or cosine[candidate] - cosine[order[0]] < fusion.lead:
        return order
    return [candidate] + [key for key in order if key != candidate]


def fuse_parts(parts: Sequence[Ranked], semantic: Ranked, fusion: Fusion,
               rerank: Callable[[list[Hashable]], dict[Hashable, float]] | None = None) -> list[Hashable]:
    """Each lexical part (e.g. the sessions of a date the question names, then the others)
    fused on its own (:func:`fuse`), in the parts' order, then a session of the first part may
    reach the window's last place (:func:`reach`); the semantic ranking alone only when no part
    holds a lexical session. ``rerank`` (the first ``rerank_depth`` sessions -> their reranker
    scores) lets a session of the first part move first (:func:`promote_reranked`)."""
    filled = [part for part in parts if part]
    if not filled:
        order = fuse((), semantic, fusion)
        allowed = set(order)
    else:
        order = [key for part in filled for key in fuse(part, semantic, fusion)]
        allowed = {key for key, _score in filled[0]}
        order = reach(order, allowed, semantic, fusion)
    if rerank is None or fusion.rerank_depth <= 1 or len(order) < 2:
        return order
    return promote_reranked(order, rerank(order[: fusion.rerank_depth]), allowed, fusion)


def reach(order: Sequence[Hashable], allowed: set[Hashable], semantic: Ranked, fusion: Fusion) -> list[Hashable]:
    """``order`` with the session of places ``window + 1`` to ``reach`` (one of ``allowed``)
    nearest the question in the window's last place, when its cosine leads that place's
    session's by ``reach_lead`` (see the module docstring)."""
    place = max(0, fusion.window) - 1
    order = list(order)
    if place < 0 or len(order) <= place + 1:
        return order
    cosine = _cosines(semantic)
    if order[place] not in cosine:  # not embedded yet, or far from the question: nothing to compare
        return order
    pool = [key for key in order[place + 1: max(place + 1, fusion.reach)] if key in allowed and key in cosine]
    if not pool:
        return order
    candidate = max(pool, key=lambda key: cosine[key])
    if cosine[candidate] - cosine[order[place]] < fusion.reach_lead:
        return order
    rest = [key for key in order if key != candidate]
    return rest[:place] + [candidate] + rest[place:]


def session_ranking(nearest: Sequence[tuple[Any, Hashable, Any, float]]) -> list[tuple[Hashable, float]]:
    """``(session, cosine of its best message)`` in the order of each session's best message
    among ``nearest`` (``(message_id, session, seq, cosine)`` rows, best first)."""
    best: dict[Hashable, float] = {}
    for _mid, sid, _seq, score in nearest:
        best.setdefault(sid, float(score))
    return list(best.items())


def promote_reranked(order: Sequence[Hashable], scores: dict[Hashable, float], allowed: set[Hashable],
                     fusion: Fusion) -> list[Hashable]:
    """``order`` after the reranker's two moves (see the module docstring): the session of the
    first ``rerank_depth`` (one of ``allowed``) of the best score first, when it leads the first
    session's by ``rerank_lead``; then the best of places ``window + 1`` to ``rerank_depth`` in
    the window's last place, when its score is at least ``rerank_sure`` and leads that place's
    by ``rerank_lead``. A session is only compared with one that has a score."""
    order = list(order)
    if not order:
        return order
    depth = max(1, fusion.rerank_depth)
    judged = [key for key in order[1:depth] if key in allowed and key in scores]
    if judged and order[0] in scores:
        candidate = max(judged, key=lambda key: scores[key])
        if scores[candidate] - scores[order[0]] >= fusion.rerank_lead:
            order = [candidate] + [key for key in order if key != candidate]
    place = max(0, fusion.window) - 1
    if place < 0 or len(order) <= place + 1 or order[place] not in scores:
        return order
    pool = [key for key in order[place + 1: depth] if key in allowed and key in scores]
    if not pool:
        return order
    candidate = max(pool, key=lambda key: scores[key])
    if scores[candidate] < fusion.rerank_sure or scores[candidate] - scores[order[place]] < fusion.rerank_lead:
        return order
    rest = [key for key in order if key != candidate]
    return rest[:place] + [candidate] + rest[place:]


#: Every key of ``semantic:`` in config.yaml (this package's own section: any other is a typo).
SEMANTIC_KEYS = frozenset({"model", "reranker", "roles", *(f.name for f in fields(Fusion))})


def semantic_problems(section: Any) -> list[str]:
    """What is wrong with a ``semantic:`` section, one ``semantic.<key>: problem`` each (the
    readers fall back to a default on these without a word, so ``status`` lists them)."""
    if section is None:
        return []
    if not isinstance(section, dict):
        return [f"semantic: expected a mapping (model:, reranker:, roles:, ...), got {section!r}"]
    problems = [f"semantic.{key}: expected a model name or path (a string), got {section[key]!r}"
                for key in ("model", "reranker") if section.get(key) is not None
                and not isinstance(section[key], str)]
    roles = section.get("roles")
    named = roles.split(",") if isinstance(roles, str) else roles
    if roles is not None and (not isinstance(named, list)
                              or any(str(r).strip().lower() not in EMBEDDABLE_ROLES for r in named)):
        problems.append(f"semantic.roles: expected {' or '.join(EMBEDDABLE_ROLES)}, or a list of them, "
                        f"got {roles!r}")
    for field in fields(Fusion):
        value = section.get(field.name)
        if value is None:
            continue
        kind = int if field.type in ("int", int) else float
        try:
            number = kind(value) if not isinstance(value, bool) else -1
        except (TypeError, ValueError):
            number = -1
        if number < 0:
            what = "a whole number" if kind is int else "a number"
            problems.append(f"semantic.{field.name}: expected {what} of 0 or more, got {value!r}")
    return problems
