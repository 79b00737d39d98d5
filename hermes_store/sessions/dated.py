"""Dates a question names, and the sessions of those dates first.

"What did Nate do for Joanna on 25 May, 2022?" is about what was said that day: a question
that names a calendar date or a month *with its year* (``25 May, 2022``, ``May 25 2022``,
``2022-05-25``, ``October 2023``) gets a window — that day with a day's slack on either side
(the stored times are UTC, the asker's day may not be), or that month — and
:func:`dated_first` moves the sessions with a matching message inside it before the others,
each part in its own order. Without an absolute date, a relative one is read from :data:`clock`'s now
(the current time; an evaluation replaying old questions sets it to the question's date):
"N days / weeks / months ago" (a window around that day, wider the further back),
"yesterday", "last weekend", "last week", "last month", "the past month", "the past N days /
weeks / months", "the last N ..." (from that far back until now, with an eighth's slack). A date that does not parse
(``31 February 2022``) or a month without its year leaves the ranking as it is.

Both ``session_search``'s sessions and a message search's messages (over :data:`DATED_POOL`
of them) are ordered so (:func:`dated_first`). Measured on LoCoMo
(``scripts/eval_locomo.py``, both levels; 79 of 760 questions name a date): docs/retrieval.md,
"Dates named in the question".
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta, timezone
from typing import TypeVar

from hermes_store.sessions.storage import Hit

T = TypeVar("T")

_MONTHS = {name: n for n, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")), start=1) for name in names}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY} {_MONTH},? {_YEAR}\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH} {_DAY},? {_YEAR}\b", re.IGNORECASE)
_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH},? {_YEAR}\b", re.IGNORECASE)
SLACK = timedelta(days=1)  # on either side of a named day
_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3}
_AGO = re.compile(r"\b(\d{1,3}|a couple of|couple of|a few|an?|one|two|three|four|five|six|seven"
                  r"|eight|nine|ten) (day|week|month)s? ago\b", re.IGNORECASE)
_LAST = re.compile(r"\b(yesterday|last weekend|last week|last month)\b", re.IGNORECASE)
_COUNTS = r"(\d{1,3}|a couple of|couple of|a few|few|two|three|four|five|six|seven|eight|nine|ten)"
# "the past month", "the past few days", "the last two weeks" (a bare "last week" is _LAST's)
_PAST = re.compile(rf"\b(?:past(?: {_COUNTS})?|last {_COUNTS}) (day|week|month)s?\b", re.IGNORECASE)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30}
_LAST_DAYS = {"yesterday": (2, 0), "last weekend": (9, 0), "last week": (14, 0), "last month": (62, 0)}
#: the asker's now (epoch seconds) for relative dates; an evaluation replaying questions asked
#: in the past sets it to the question's date
clock: Callable[[], float] = time.time


def _day(year: str, month: int, day: str) -> datetime | None:
    try:
        return datetime(int(year), month, int(day), tzinfo=timezone.utc)
    except ValueError:
        return None


def named_window(query: str) -> tuple[float, float] | None:
    """``(start, end)`` epoch seconds of the first calendar date or month (with its year)
    ``query`` names (see the module docstring), or None."""
    text = " ".join((query or "")[:2000].split())
    found: list[tuple[int, datetime | None, bool]] = []  # (position, moment, whole month)
    for match in _DAY_MONTH_YEAR.finditer(text):
        found.append((match.start(), _day(match[3], _MONTHS[match[2].lower()], match[1]), False))
    for match in _MONTH_DAY_YEAR.finditer(text):
        found.append((match.start(), _day(match[3], _MONTHS[match[1].lower()], match[2]), False))
    for match in _ISO.finditer(text):
        month = int(match[2])
        found.append((match.start(), _day(match[1], month, match[3]) if 1 <= month <= 12 else None, False))
    if not found:
        for match in _MONTH_YEAR.finditer(text):
            found.append((match.start(), _day(match[2], _MONTHS[match[1].lower()], "1"), True))
    for _at, moment, whole_month in sorted(found, key=lambda item: item[0]):
        if moment is None:
            continue
        if whole_month:
            after = moment.replace(year=moment.year + 1, month=1) if moment.month == 12 \
                else moment.replace(month=moment.month + 1)
            return moment.timestamp(), after.timestamp()
        return (moment - SLACK).timestamp(), (moment + timedelta(days=1) + SLACK).timestamp()
    return _relative_window(text) if not found else None


def _relative_window(text: str) -> tuple[float, float] | None:
    """The window of "two weeks ago", "a couple of days ago", "yesterday", "last week" ... before
    :data:`clock`'s now (an N-units-ago window is wider the further back it lies)."""
    now = clock()
    match = _AGO.search(text)
    if match:
        count = _COUNT.get(match[1].lower()) or int(match[1])
        unit = _UNIT_DAYS[match[2].lower()]
        back, slack = count * unit, max(1, unit // 2) * max(1, count // 2)
        return now - (back + slack) * 86400.0, now - (back - slack) * 86400.0
    match = _LAST.search(text)
    if match:
        far, near = _LAST_DAYS[match[1].lower()]
        return now - far * 86400.0, now - near * 86400.0
    match = _PAST.search(text)
    if match:
        count = (match[1] or match[2] or "one").lower()
        span = (_COUNT.get(count) or int(count)) * _UNIT_DAYS[match[3].lower()]
        return now - (span + max(1, span // 8)) * 86400.0, now + 86400.0
    return None


#: messages a message search reads when the query names a date, to reorder them (a bound)
DATED_POOL = 50


def split_dated(items: Sequence[T], window: tuple[float, float] | None,
                hits_of: Callable[[T], Iterable[Hit]]) -> tuple[list[T], list[T]]:
    """``(inside, rest)``: the ``items`` holding a hit (``hits_of``) whose time lies inside
    ``window`` (:func:`named_window`), and the others, each part in its order (no window:
    everything is the rest)."""
    if window is None:
        return [], list(items)
    inside: list[T] = []
    rest: list[T] = []
    for item in items:
        dated = any(hit.timestamp is not None and window[0] <= hit.timestamp < window[1]
                    for hit in hits_of(item))
        (inside if dated else rest).append(item)
    return inside, rest


def dated_first(items: Sequence[T], window: tuple[float, float] | None,
                hits_of: Callable[[T], Iterable[Hit]]) -> list[T]:
    """``items`` with those holding a hit (``hits_of``) whose time lies inside ``window``
    (:func:`named_window`) moved first, each part in its order; unchanged for no window.
    ``session_search`` orders its session groups so, a message search its hits."""
    inside, rest = split_dated(items, window, hits_of)
    return inside + rest
