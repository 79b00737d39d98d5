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

from hermes_store.query import clean_query_text
from hermes_store.sessions.rows import MESSAGE_COLUMNS, SESSION_COLUMNS, decode_meta, session_row
from hermes_store.sessions.storage import Filters, SessionStorage

#: The message columns every read of whole messages selects.
MESSAGE_SELECT = ", ".join(MESSAGE_COLUMNS)

#: Filter field -> column, over ``m`` (messages) and ``s`` (sessions).
FILTER_COLUMNS = {"role": "m.role", "source": "COALESCE(s.source, '')", "session_id": "m.session_id"}


@dataclass(frozen=True)
class FilterDialect:
    """How one engine writes what the filters need."""

    param: str  # one placeholder
    never: str  # a clause that is always false
    in_values: Callable[[str, Sequence[Any], bool], tuple[str, list[Any]]]  # (column, values, negate)
    no_limit: Any  # the LIMIT value that means "every row"


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


def message_clauses(dialect: FilterDialect, roles: Sequence[str] | None, before_seq: int | None,
                    after_seq: int | None, at_seq: int | None = None,
                    nonempty: bool = False) -> tuple[str, list[Any]]:
    """``AND ...`` clauses over one session's messages (roles, ``seq`` bounds, non-empty
    content) and their parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if roles is not None:
        if roles:
            clause, bound = dialect.in_values("role", list(roles), False)
            clauses.append(clause)
            params.extend(bound)
        else:
            clauses.append(dialect.never)
    for operator, value in (("<", before_seq), (">", after_seq), ("=", at_seq)):
        if value is not None:
            clauses.append(f"seq {operator} {dialect.param}")
            params.append(int(value))
    if nonempty:
        clauses.append("content <> ''")
    return "".join(f" AND {c}" for c in clauses), params


DELETE_CHUNK = 500  # ids per IN list of a delete
SESSION_SELECT = ", ".join(SESSION_COLUMNS)


class SqlSessionStorage(SessionStorage):
    """What both SQL engines do the same way; the engine modules subclass this and give their
    :attr:`dialect`."""

    dialect: FilterDialect

    # -- reading sessions and messages ------------------------------------------------

    def parent_of(self, session_id: str) -> str | None:
        """The parent session id, or None."""
        p = self.dialect.param
        return self.db.scalar(f"SELECT parent_session_id FROM sessions WHERE id = {p}", (session_id,)) or None

    def session_meta(self, session_id: str) -> dict[str, Any]:
        """The decoded ``meta`` ({} when absent or unreadable)."""
        p = self.dialect.param
        return decode_meta(self.db.scalar(f"SELECT meta FROM sessions WHERE id = {p}", (session_id,)))

    def delete_sessions(self, session_ids: Sequence[str]) -> None:
        """Delete the sessions and their messages in ONE transaction on every engine (all or
        nothing: an interrupted prune leaves every lineage whole), ``IN`` lists of
        :data:`DELETE_CHUNK` ids."""
        ids = list(dict.fromkeys(session_ids))
        sql = self.db.portable
        with self.db.write():
            for start in range(0, len(ids), DELETE_CHUNK):
                chunk = ids[start:start + DELETE_CHUNK]
                marks = ", ".join("?" * len(chunk))
                sql.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", chunk)
                sql.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)

    def sessions_titled(self, title: str) -> list[dict[str, Any]]:
        """Sessions titled ``title`` or ``title #anything`` (Hermes numbers repeats ``#2``),
        newest start first. Case is folded the same on both engines (Unicode ``str.lower``);
        diacritics count on both (``Déploy`` is not ``Deploy``); control characters in
        ``title`` are spaces (:func:`~hermes_store.query.clean_query_text`)."""
        wanted = clean_query_text(title).strip().lower()
        if not wanted:
            return []
        # pre-filter by the ASCII letters (lower() folds those alike on both engines); every
        # other character is ``_`` (one character); the exact comparison is made below
        shape = "".join(c if c.isascii() else "_" for c in wanted.replace("\\", "\\\\")
                        .replace("%", "\\%").replace("_", "\\_"))
        p = self.dialect.param
        rows = self.db.query(
            f"SELECT {SESSION_SELECT} FROM sessions WHERE title IS NOT NULL AND"
            f" (lower(title) LIKE {p} ESCAPE '\\' OR lower(title) LIKE {p} ESCAPE '\\')"
            " ORDER BY COALESCE(started_at, 0) DESC", (shape, shape + " #%"))
        return [session_row(r) for r in rows  # type: ignore[misc]
                if (t := str(r["title"]).lower()) == wanted or t.startswith(wanted + " #")]

    def get_messages(self, session_id: str, *, roles: Sequence[str] | None = None,
                     before_seq: int | None = None, after_seq: int | None = None,
                     at_seq: int | None = None, newest_first: bool = False,
                     limit: int | None = None, offset: int = 0,
                     nonempty: bool = False) -> list[dict[str, Any]]:
        """Messages in ``seq`` order (or newest first), narrowed as asked."""
        p = self.dialect.param
        where, params = message_clauses(self.dialect, roles, before_seq, after_seq, at_seq, nonempty)
        order = "DESC" if newest_first else "ASC"
        return self.db.query(
            f"SELECT {MESSAGE_SELECT} FROM messages WHERE session_id = {p}{where}"
            f" ORDER BY seq {order} LIMIT {p} OFFSET {p}",
            (session_id, *params, self.dialect.no_limit if limit is None else int(limit), int(offset)))

    def count_messages(self, session_id: str, *, roles: Sequence[str] | None = None,
                       before_seq: int | None = None, after_seq: int | None = None) -> int:
        """How many messages pass the narrowing."""
        p = self.dialect.param
        where, params = message_clauses(self.dialect, roles, before_seq, after_seq)
        return int(self.db.scalar(f"SELECT count(*) FROM messages WHERE session_id = {p}{where}",
                                  (session_id, *params)) or 0)

    def message_position(self, message_id: int) -> dict[str, Any] | None:
        """``{id, session_id, seq}`` or None."""
        p = self.dialect.param
        return self.db.query_one(f"SELECT id, session_id, seq FROM messages WHERE id = {p}",
                                 (int(message_id),))

    def message_content(self, message_id: int) -> str:
        """The content ("" when unknown)."""
        p = self.dialect.param
        return self.db.scalar(f"SELECT content FROM messages WHERE id = {p}", (int(message_id),)) or ""

    def last_message_timestamp(self, session_id: str) -> float | None:
        """The last message's timestamp by ``seq``."""
        p = self.dialect.param
        return self.db.scalar(
            f"SELECT timestamp FROM messages WHERE session_id = {p} ORDER BY seq DESC LIMIT 1",
            (session_id,))

    # -- health -----------------------------------------------------------------------

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
