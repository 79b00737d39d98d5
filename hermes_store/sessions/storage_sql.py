"""SQL the two session storage engines share: the search filters and engine-neutral statements.

The search filters (role, source, session, time): an engine differs only in how it writes a
placeholder, a bound list of values and "never"; the columns and the clauses are the same, so a
filter added to :class:`Filters` reaches both engines through :meth:`Filters.value_filters` and
the one builder here. :class:`SqlSessionStorage` holds the statements both engines run as they
are (no placeholders), under the engine-specific parts each implementation adds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_store.sessions.storage import Filters, SessionStorage

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


class SqlSessionStorage(SessionStorage):
    """What both SQL engines do the same way; the engine modules subclass this."""

    def probe_search(self) -> str | None:
        """Search for a word of the newest non-tool message and check it is found and
        highlighted; the problem, or None when it works (or there is nothing to probe)."""
        row = self.db.query_one(
            "SELECT id, content FROM messages WHERE role <> 'tool' AND length(content) > 3"
            " ORDER BY id DESC LIMIT 1")
        if row is None:
            return None
        words = re.findall(r"[^\W_]{3,}", row["content"][:2000])
        if not words:
            return None
        return self.probe_word(int(row["id"]), words[0])
