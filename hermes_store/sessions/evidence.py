"""Which of a session's matching messages a ``session_search`` result shows.

A discover result shows its anchor (with a ``±5`` slice when it is the full result) and up to
:data:`EXTRA_ANCHORS` further matching messages of the same session. Sessions are ranked by
their context-smoothed best message (:mod:`hermes_store.sessions.search`); *inside* a session
the messages are picked for being the evidence an agent needs, which is a different question:

- **Own words first when the question is about the user.** A question in the first person
  ("what did I say about ...", "my ...") is answered by what the user wrote, so the user's
  turns count double and context smoothing counts half (smoothing is what lets a long
  assistant reply next to a matching user turn outrank it). Measured on LongMemEval
  (``scripts/eval_longmemeval.py``): evidence share 82.6 -> 90.1 %.
- **Further anchors outside the window.** The full result's further anchors are taken from the
  matches its ``±5`` slice does not already show, so all of them add a message (before, a
  further anchor inside the slice was dropped and its place was lost).

Nothing here changes the order of sessions, Hermes' keys, slice counts or character budgets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_store.sessions.search import hits_at_positions
from hermes_store.sessions.storage import Hit, SessionStorage

if TYPE_CHECKING:
    from hermes_store.sessions.vectors import SemanticIndex

EXTRA_ANCHORS = 3  # further best-matching messages each result shows
USER_WEIGHT = 2.0  # a user turn's score multiplier when the question is about the user
SMOOTHING_SHARE = 0.5  # share of the context-smoothing bonus kept when it is

_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|i'd|i'll)\b", re.IGNORECASE)


def about_the_user(query: str) -> bool:
    """True when ``query`` is asked in the first person (its answer is in the user's turns)."""
    return bool(_FIRST_PERSON.search(query))


def evidence_score(hit: Hit, *, user_question: bool) -> float:
    """How strongly ``hit`` is the evidence its session holds for the question."""
    own = hit.score if hit.own_score is None else hit.own_score
    if not user_question:
        return hit.score
    score = own + SMOOTHING_SHARE * (hit.score - own)
    return score * USER_WEIGHT if hit.role == "user" else score


def evidence_order(group: Sequence[Hit], query: str) -> list[Hit]:
    """One session's hits, the best evidence first (its first becomes the result's anchor)."""
    user_question = about_the_user(query)
    indexed = list(enumerate(group))
    indexed.sort(key=lambda item: (-evidence_score(item[1], user_question=user_question), item[0]))
    return [hit for _index, hit in indexed]


def further_anchors(candidates: Sequence[int], shown: tuple[int, int] | None = None,
                    limit: int = EXTRA_ANCHORS) -> tuple[int, ...]:
    """The further anchors among ``candidates`` (a session's matching seqs after its anchor,
    best first): up to ``limit`` (:data:`EXTRA_ANCHORS`, more when :func:`with_nearest` added
    some), leaving out those in ``shown`` (the first and last seq of the full result's slice,
    which already shows them)."""
    out: list[int] = []
    for seq in candidates:
        if len(out) == limit:
            break
        if seq in out or (shown is not None and shown[0] <= seq <= shown[1]):
            continue
        out.append(seq)
    return tuple(out)


def with_nearest(group: Sequence[Hit], nearest: Sequence[Hit], count: int) -> tuple[list[Hit], int]:
    """``group`` (one session's hits, best evidence first) with up to ``count`` of ``nearest``
    (the session's messages nearest the question by meaning, nearest first) that its anchor and
    first :data:`EXTRA_ANCHORS` further anchors are not, placed right after those (moved up when
    the group holds them further down), and how many were placed (the result shows that many
    further anchors more; the semantic extra's ``anchors``, 0 leaves the group as it is)."""
    if count <= 0 or not group:
        return list(group), 0
    head = list(group[: 1 + EXTRA_ANCHORS])
    have = {hit.message_id for hit in head}
    owner = group[0].session_id
    added = [hit for hit in nearest if hit.message_id not in have and hit.session_id == owner][:count]
    moved = {hit.message_id for hit in added}
    rest = [hit for hit in group[1 + EXTRA_ANCHORS :] if hit.message_id not in moved]
    return [*head, *added, *rest], len(added)


def nearest_by_meaning(semantic: SemanticIndex | None, storage: SessionStorage, query: str,
                       anchors: Sequence[Hit], count: int, *, roles: Sequence[str],
                       exclude_sources: Sequence[str]) -> dict[str, list[Hit]]:
    """Per shown session (that of each of ``anchors``), its messages nearest the question by
    meaning, nearest first, as hits narrowed like the search's: what :func:`with_nearest`
    places (a few more than ``count``, as some are shown already). Empty without the extra."""
    if semantic is None or count <= 0 or not anchors:
        return {}
    found = semantic.nearest_in(query, [hit.session_id for hit in anchors], count + EXTRA_ANCHORS + 1)
    out: dict[str, list[Hit]] = {}
    for hit in hits_at_positions(storage, [row[1:] for near in found.values() for row in near],
                                 roles=list(roles), exclude_sources=list(exclude_sources)):
        out.setdefault(hit.session_id, []).append(hit)
    return out
