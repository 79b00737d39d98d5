"""timeutil: the one parser of dates and ages."""

from __future__ import annotations

import pytest

from hermes_store.timeutil import TimeParseError, parse_age, parse_timestamp, parse_when, to_epoch

DAY = 86400.0


def test_parse_when_forms():
    assert parse_when(None) is None and parse_when("") is None
    assert parse_when(1700000000) == 1700000000.0
    assert parse_when("1700000000.5") == 1700000000.5
    assert parse_when("2024-01-02") == 1704153600.0
    assert parse_when("2024-01-02", end_of_day=True) == pytest.approx(1704153600.0 + DAY, abs=0.001)
    assert parse_when("2024-01-02T03:04:05Z") == 1704164645.0
    assert parse_when("2024-01-02T03:04:05") == 1704164645.0  # naive means UTC
    assert parse_when("2d", now=1_000_000.0) == 1_000_000.0 - 2 * DAY
    assert parse_when("90m", now=10_000.0) == 10_000.0 - 5400


@pytest.mark.parametrize("bad", ["yesterday", "2024-13-40", True, "7x"])
def test_parse_when_rejects_with_help(bad):
    with pytest.raises(TimeParseError, match="YYYY-MM-DD"):
        parse_when(bad)


def test_parse_age():
    assert parse_age("30s") == 30 and parse_age("2w") == 14 * DAY
    assert parse_age("90") == 90 * DAY  # a bare number counts days
    assert parse_age("2026-01-01T00:00:00Z", now=1767225600 + 3600) == 3600
    with pytest.raises(ValueError, match="invalid age"):
        parse_age("soon")


def test_stored_values_are_read_leniently():
    assert to_epoch("2024-01-02 03:04:05") == 1704164645.0  # SQLite CURRENT_TIMESTAMP
    assert to_epoch(12.5) == 12.5
    assert to_epoch("garbage") is None and to_epoch(None) is None and to_epoch(True) is None
    assert parse_timestamp("2024-01-02").tzinfo is not None
