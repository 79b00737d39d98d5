"""Dates and ages as users type them and as the store keeps them, parsed in one place.

* :func:`parse_when` — a user's date argument (``since``/``until``): epoch
  seconds, ``YYYY-MM-DD``, an ISO date-time (naive means UTC) or an age such as
  ``30m``, ``5h``, ``2d``, ``1w`` (that long before now).
* :func:`parse_age` — a duration such as ``--older-than 90d``.
* :func:`parse_bound` — a session-start bound (``after``/``before``) in Hermes'
  grammar and with Hermes' error message: ISO date/date-time or ``7d``/``24h``/``2w``.
* :func:`to_epoch` / :func:`parse_timestamp` — lenient readers for stored
  values (numbers, SQLite ``CURRENT_TIMESTAMP`` text); None when unreadable.
* :func:`shown_time` — a stored time as every human (non-JSON) output prints it: local time
  (``TZ`` respected) as ``YYYY-MM-DD HH:MM``, the one rule docs/cli.md states.
"""

from __future__ import annotations

import re
import time
from datetime import date, datetime, timedelta, timezone
from typing import Any

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.IGNORECASE)
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
DATE_HELP = "use YYYY-MM-DD, an ISO date-time, epoch seconds or an age like 7d"


class TimeParseError(ValueError):
    """A date or age argument that cannot be read (the message says what is accepted)."""


def age_seconds(text: Any, *, bare_unit: str | None = None) -> float | None:
    """Seconds in an age like ``30s``/``15m``/``5h``/``2d``/``1w``; None when ``text`` is no age.

    A bare number counts in ``bare_unit`` when given, else it is not an age.
    """
    match = _AGE.match(str(text))
    if not match:
        return None
    unit = match.group(2).lower() or bare_unit
    if unit is None:
        return None
    return float(match.group(1)) * UNIT_SECONDS[unit]


def parse_timestamp(value: Any) -> datetime | None:
    """An aware datetime from ISO or SQLite ``CURRENT_TIMESTAMP`` text (naive = UTC), else None."""
    if value is None or isinstance(value, bool) or not str(value).strip():
        return None
    try:
        moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def datetime_of(stamp: Any, tz: timezone | None = None) -> datetime | None:
    """Epoch seconds as a datetime (local time unless ``tz``); None when no date can show it
    (NaN, ``1e300``, not a number): a stored time like that must not fail the reader."""
    try:
        return datetime.fromtimestamp(float(stamp), tz)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


#: how human output shows a moment (local time); ``--json`` and tool payloads keep their own
SHOWN_FORMAT = "%Y-%m-%d %H:%M"
UNKNOWN_TIME = "?"


def shown_time(value: Any, *, seconds: bool = False) -> str:
    """A stored time (epoch seconds, or ISO/SQLite text) as human output prints it: in the
    user's local zone (``TZ`` respected) as ``YYYY-MM-DD HH:MM``, ``:SS`` added with ``seconds``.

    No time is :data:`UNKNOWN_TIME`; a stored value no date can show (``1e300``, unreadable
    text) is shown raw, so its reader never fails on it.
    """
    if value is None or value == "":
        return UNKNOWN_TIME
    moment = datetime_of(to_epoch(value))
    if moment is None:
        return str(value)
    return moment.strftime(SHOWN_FORMAT + (":%S" if seconds else ""))


def to_epoch(value: Any) -> float | None:
    """Epoch seconds from a stored number or timestamp text; None when unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    moment = parse_timestamp(value)
    return None if moment is None else moment.timestamp()


def parse_when(value: Any, *, end_of_day: bool = False, now: float | None = None,
               name: str | None = None) -> float | None:
    """A user's date argument as epoch seconds (UTC); None for None or empty.

    ``end_of_day`` makes a bare ``YYYY-MM-DD`` mean the end of that day (for
    ``until``). Raises :class:`TimeParseError`, its message starting ``"<name>: "``
    when the argument's ``name`` is given.
    """
    try:
        return _parse_when(value, end_of_day=end_of_day, now=now)
    except TimeParseError as exc:
        if name is None:
            raise
        raise TimeParseError(f"{name}: {exc}") from exc


def _parse_when(value: Any, *, end_of_day: bool, now: float | None) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise TimeParseError(f"not a date: {value!r} ({DATE_HELP})")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp()
    if isinstance(value, date):
        value = value.isoformat()
    text = str(value).strip()
    seconds = age_seconds(text)
    if seconds is not None:
        return (time.time() if now is None else now) - seconds
    try:
        return float(text)
    except ValueError:
        pass
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            moment = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
            if end_of_day:
                moment += timedelta(days=1) - timedelta(microseconds=1)
            return moment.timestamp()
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise TimeParseError(f"not a date: {text!r} ({DATE_HELP})") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def parse_age(text: Any, *, now: float | None = None) -> float:
    """Seconds from an age (``30s`` … ``1w``, a bare number of days) or from an ISO date
    (``now`` minus that moment). Raises :class:`TimeParseError`."""
    seconds = age_seconds(text, bare_unit="d")
    if seconds is not None:
        return seconds
    moment = parse_timestamp(text)
    if moment is None:
        raise TimeParseError(f"invalid age {text!r}: use 30s, 15m, 5h, 2d, 1w, a number of days, or an ISO date")
    return max(0.0, (now if now is not None else time.time()) - moment.timestamp())


#: Hermes' relative bound grammar (``session_search`` ``after``/``before``): N hours/days/weeks.
_RELATIVE_BOUND = re.compile(r"^(\d+)\s*(h|d|w)$", re.IGNORECASE)
BOUND_HELP = "expected ISO date/datetime like 2026-07-01, or a relative duration like 7d, 24h, 2w"


EARLIEST_EPOCH = -62135596800  # 0001-01-01T00:00:00Z, the earliest moment a date can show


def parse_bound(value: Any, *, now: float | None = None) -> int | None:
    """A session-start bound as Hermes reads it (``after`` inclusive, ``before`` exclusive), as
    whole epoch seconds; None for None or blank.

    ``7d``/``24h``/``2w`` mean that long before now; an ISO date or date-time (naive = UTC) is
    read with :meth:`datetime.fromisoformat`, so a date-only value is midnight UTC that day.
    A number is taken as epoch seconds already parsed (the tool passes text, so a model's
    number is read as text as Hermes does). Anything else raises :class:`TimeParseError` with
    Hermes' exact message
    ``invalid time bound: '...' (expected ...)``.
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)  # a bound parsed already (epoch seconds)
    text = str(value).strip()
    if not text:
        return None
    relative = _RELATIVE_BOUND.match(text)
    if relative:
        base = time.time() if now is None else now
        # no earlier than year 1: 9999999999999999d is "ever", not an integer SQL cannot hold
        return max(int(base) - int(relative.group(1)) * UNIT_SECONDS[relative.group(2).lower()], EARLIEST_EPOCH)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise TimeParseError(f"invalid time bound: {value!r} ({BOUND_HELP})") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp())


def in_bounds(started: float | None, after: float | None, before: float | None) -> bool:
    """``after <= started < before``; an unknown start fails any bound that is set."""
    if after is None and before is None:
        return True
    if started is None:
        return False
    return (after is None or started >= after) and (before is None or started < before)
