"""Trust arithmetic: feedback deltas, clamping, float-safe thresholds and score decay.

Decision on float safety: every stored trust value is rounded to 6 decimals
(:func:`adjust`), and visibility compares with a tolerance of 1e-9
(:func:`visible`). So 0.5 − 0.1 − 0.1 is stored as exactly 0.3, and a fact at
0.3 *stays visible* with the default threshold 0.3 (the threshold is inclusive,
as in Hermes); a third ``unhelpful`` gives 0.2 and hides it.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

from hermes_store.timeutil import parse_timestamp

DEFAULT_TRUST = 0.5
MIN_TRUST_THRESHOLD = 0.3
HELPFUL_DELTA = 0.05
UNHELPFUL_DELTA = -0.10
TRUST_DECIMALS = 6
TOLERANCE = 1e-9


def clamp(value: float) -> float:
    """Clamp to [0, 1] and round to :data:`TRUST_DECIMALS` places."""
    if math.isnan(value):
        raise ValueError("trust must be a number, got NaN")
    return round(min(1.0, max(0.0, float(value))), TRUST_DECIMALS)


def adjust(old: float, delta: float) -> float:
    """The new trust after adding ``delta`` to ``old`` (clamped and rounded)."""
    return clamp(float(old) + float(delta))


def feedback_delta(action: str) -> float:
    """The trust delta of a feedback action: ``helpful`` +0.05, ``unhelpful`` −0.10."""
    if action == "helpful":
        return HELPFUL_DELTA
    if action == "unhelpful":
        return UNHELPFUL_DELTA
    raise ValueError(f"feedback action must be 'helpful' or 'unhelpful', got {action!r}")


def visible(trust: float, threshold: float) -> bool:
    """True when ``trust`` reaches ``threshold`` (inclusive, with a float tolerance)."""
    return float(trust) >= float(threshold) - TOLERANCE


def sql_threshold(threshold: float) -> float:
    """The value to compare with in SQL (``trust_score >= ?``) for :func:`visible` semantics."""
    return float(threshold) - TOLERANCE


def decay_factor(updated_at: str | None, half_life_days: float,
                 now: datetime | None = None) -> float:
    """``0.5 ** (age_days / half_life_days)``; 1.0 when disabled, unparseable or in the future."""
    if not half_life_days or half_life_days <= 0:
        return 1.0
    moment = parse_timestamp(updated_at)
    if moment is None:
        return 1.0
    now = now or datetime.now(timezone.utc)
    age_days = (now - moment).total_seconds() / 86400.0
    if age_days <= 0:
        return 1.0
    return 0.5 ** (age_days / float(half_life_days))
