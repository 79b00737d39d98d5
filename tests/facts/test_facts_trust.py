"""Trust arithmetic: deltas, clamping, the float-safe threshold decision, decay."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hermes_store.facts import trust


def test_deltas_and_clamp():
    assert trust.adjust(0.5, trust.HELPFUL_DELTA) == 0.55
    assert trust.adjust(0.5, trust.UNHELPFUL_DELTA) == 0.4
    assert trust.adjust(0.98, 0.05) == 1.0
    assert trust.adjust(0.05, -0.1) == 0.0
    assert trust.adjust(0.5, 7) == 1.0


def test_two_unhelpful_votes_land_exactly_on_threshold_and_stay_visible():
    value = trust.adjust(trust.adjust(0.5, -0.1), -0.1)
    assert value == 0.3  # not 0.30000000000000004
    assert trust.visible(value, trust.MIN_TRUST_THRESHOLD)
    third = trust.adjust(value, -0.1)
    assert third == 0.2
    assert not trust.visible(third, trust.MIN_TRUST_THRESHOLD)


def test_ten_helpful_votes_reach_one():
    value = 0.5
    for _ in range(10):
        value = trust.adjust(value, trust.HELPFUL_DELTA)
    assert value == 1.0


def test_feedback_delta_rejects_other_actions():
    with pytest.raises(ValueError, match="helpful"):
        trust.feedback_delta("meh")


def test_decay_factor():
    now = datetime(2026, 1, 11, tzinfo=timezone.utc)
    ten_days_ago = (now - timedelta(days=10)).strftime("%Y-%m-%d %H:%M:%S")
    assert trust.decay_factor(ten_days_ago, 10, now) == pytest.approx(0.5)
    assert trust.decay_factor(ten_days_ago, 0, now) == 1.0
    assert trust.decay_factor("garbage", 10, now) == 1.0
    future = (now + timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    assert trust.decay_factor(future, 10, now) == 1.0
