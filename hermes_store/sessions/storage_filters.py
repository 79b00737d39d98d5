"""The search filters (role, source, session, time) as SQL clauses, one builder for both engines.

An engine differs only in how it writes a placeholder, a bound list of values and "never"; the
columns and the clauses are the same, so a filter added to :class:`Filters` reaches both
engines through :meth:`Filters.value_filters` and this one builder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_store.sessions.storage import Filters

#: Filter field -> column, over ``m`` (messages) and ``s`` (sessions).
FILTER_COLUMNS = {"role": "m.role", "source": "COALESCE(s.source, '')", "session_id": "m.session_id"}


@dataclass(frozen=True)
class FilterDialect:
    """How one engine writes what the filters need."""

    param: str  # one placeholder
    never: str  # a clause that is always false
    in_values: Callable[[str, Sequence[Any], bool], tuple[str, list[Any]]]  # (column, values, negate)


def filter_clauses(filters: Filters, dialect: FilterDialect) -> tuple[str, list[Any]]:
    """``AND ...`` clauses over ``m`` (messages) and ``s`` (sessions), and their parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    for field, values, negate in filters.value_filters():
        if not values:
            if not negate:
                clauses.append(dialect.never)
            continue
        clause, bound = dialect.in_values(FILTER_COLUMNS[field], values, negate)
        clauses.append(clause)
        params.extend(bound)
    if filters.since is not None:
        clauses.append(f"m.timestamp >= {dialect.param}")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append(f"m.timestamp <= {dialect.param}")
        params.append(filters.until)
    return "".join(f" AND {c}" for c in clauses), params
