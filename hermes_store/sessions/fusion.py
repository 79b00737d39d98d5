"""Fusing the lexical session ranking with the semantic one (``semantic`` in config.yaml).

Both rankings are lists of session keys, best first. :func:`fuse` scores a session
``1/(k + lexical rank) + weight/(k + semantic rank)`` (reciprocal rank fusion; a session
absent from a ranking gets nothing from it) and keeps the first ``keep_top`` lexical
sessions where they are, so the lexical hit@``keep_top`` cannot drop. The defaults are the
setting measured on LongMemEval and LoCoMo (docs/retrieval.md); plain fusion with equal
weights lowered hit@1 there.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Fusion:
    """How the two rankings are fused."""

    weight: float = 0.75  # of the semantic ranking, against 1 for the lexical one
    k: int = 1  # rank offset of reciprocal rank fusion
    keep_top: int = 1  # lexical sessions kept at their place
    depth: int = 30  # semantic sessions considered

    @classmethod
    def from_config(cls, section: Any) -> Fusion:
        """The fusion of a ``semantic:`` config section (unknown or bad values: the default)."""
        base = cls()
        if not isinstance(section, dict):
            return base
        values: dict[str, Any] = {}
        for name, kind in (("weight", float), ("k", int), ("keep_top", int), ("depth", int)):
            try:
                if name in section:
                    values[name] = kind(section[name])
            except (TypeError, ValueError):
                continue
        return cls(**{**base.__dict__, **values})


def fuse(
    lexical: Sequence[Hashable], semantic: Sequence[Hashable], fusion: Fusion
) -> list[Hashable]:
    """The fused ranking of the sessions of both lists (each session once)."""
    scores: dict[Hashable, float] = {}
    for rank, key in enumerate(lexical):
        scores[key] = scores.get(key, 0.0) + 1.0 / (fusion.k + rank + 1)
    for rank, key in enumerate(semantic[: fusion.depth]):
        scores[key] = scores.get(key, 0.0) + fusion.weight / (fusion.k + rank + 1)
    kept = list(dict.fromkeys(lexical))[: max(0, fusion.keep_top)]
    rest = sorted((key for key in scores if key not in kept), key=lambda key: -scores[key])
    return kept + rest


def session_ranking(nearest: Sequence[tuple[Any, Hashable, Any, float]]) -> list[Hashable]:
    """Sessions in the order of their best message among ``nearest`` (best first)."""
    return list(dict.fromkeys(sid for _mid, sid, *_rest in nearest))
