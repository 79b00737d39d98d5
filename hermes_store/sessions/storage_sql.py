"""SQL the two session storage engines share: the search filters and engine-neutral statements.

The search filters (role, source, session, time): an engine differs only in how it writes a
placeholder, a bound list of values and "never"; the columns and the clauses are the same, so a
filter added to :class:`Filters` reaches both engines through :meth:`Filters.value_filters` and
the one builder here. :class:`SqlSessionStorage` holds the statements both engines run as they
are (no placeholders), under the engine-specific parts each implementation adds.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_store.query import clean_query_text
from hermes_store.sessions.calltext import derived
from hermes_store.sessions.rows import (
    CALLS_BACKFILL_KEY,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    decode_meta,
    session_row,
)
from hermes_store.sessions.storage import Filters, SessionStorage

#: The message columns every read of whole messages selects.
MESSAGE_SELECT = ", ".join(MESSAGE_COLUMNS)
#: The columns a read with ``head`` cuts (in :data:`MESSAGE_COLUMNS` order).
_LONG_COLUMNS = ("content", "tool_calls")

#: Filter field -> column, over ``m`` (messages) and ``s`` (sessions).
FILTER_COLUMNS = {"role": "m.role", "source": "COALESCE(s.source, '')", "session_id": "m.session_id"}


@dataclass(frozen=True)
class FilterDialect:
    """How one engine writes what the filters need."""

    param: str  # one placeholder
    never: str  # a clause that is always false
    in_values: Callable[[str, Sequence[Any], bool], tuple[str, list[Any]]]  # (column, values, negate)
    no_limit: Any  # the LIMIT value that means "every row"
    contains: Callable[[str], str] = lambda column: f"instr({column}, ?) > 0"  # holds the (portable ?) text


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
    if filters.tools is not None:
        names = [str(name).lower() for name in filters.tools if str(name)]
        if not names:
            clauses.append(dialect.never)
        else:  # m.tools holds "\nName\n..." (sessions.calltext.tool_names)
            clauses.append("(" + " OR ".join(
                f"lower(m.tools) LIKE {dialect.param} ESCAPE '\\'" for _ in names) + ")")
            params.extend(f"%\n{_like_escape(name)}\n%" for name in names)
    if filters.since is not None:
        clauses.append(f"m.timestamp >= {dialect.param}")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append(f"m.timestamp <= {dialect.param}")
        params.append(filters.until)
    p = dialect.param
    if filters.started_after is not None:  # Hermes' session-start window (session_search after/before)
        clauses.append(f"EXISTS (SELECT 1 FROM sessions sb WHERE sb.id = m.session_id AND sb.started_at >= {p})")
        params.append(filters.started_after)
    if filters.started_before is not None:
        clauses.append(f"EXISTS (SELECT 1 FROM sessions sb WHERE sb.id = m.session_id AND sb.started_at < {p})")
        params.append(filters.started_before)
    return "".join(f" AND {c}" for c in clauses), params


def _like_escape(text: str) -> str:
    """``text`` as a literal inside a LIKE pattern (escape character: backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


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

    def known_sources(self) -> list[str]:
        """Distinct session sources (the ``sessions_source`` index answers it)."""
        return [str(r["source"]) for r in self.db.query("SELECT DISTINCT source FROM sessions ORDER BY source")]

    def counts(self) -> dict[str, int]:
        """Sessions and messages stored."""
        return {"sessions": int(self.db.scalar("SELECT count(*) FROM sessions") or 0),
                "messages": int(self.db.scalar("SELECT count(*) FROM messages") or 0)}

    def parent_of(self, session_id: str) -> str | None:
        """The parent session id, or None."""
        p = self.dialect.param
        return self.db.scalar(f"SELECT parent_session_id FROM sessions WHERE id = {p}", (session_id,)) or None

    def parents_of(self, session_ids: Iterable[str]) -> dict[str, str | None]:
        """The parent session id of each known session of ``session_ids`` (one statement per
        chunk of ids; an unknown session is left out)."""
        rows = self.db.portable.query_in("SELECT id, parent_session_id FROM sessions WHERE id IN ({marks})",
                                         list(dict.fromkeys(session_ids)))
        return {str(r["id"]): (r["parent_session_id"] or None) for r in rows}

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

    def drop_messages(self, session_id: str) -> int:
        """Delete every message of the session, keeping the session (count 0); see the base class."""
        sql = self.db.portable
        with self.db.write():
            removed = sql.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            sql.execute("UPDATE sessions SET message_count = 0 WHERE id = ?", (session_id,))
        return removed

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
                     nonempty: bool = False, head: int | None = None) -> list[dict[str, Any]]:
        """Messages in ``seq`` order (or newest first), narrowed as asked (``head``: the long
        texts cut in the database, their lengths beside them)."""
        p = self.dialect.param
        where, params = message_clauses(self.dialect, roles, before_seq, after_seq, at_seq, nonempty)
        order = "DESC" if newest_first else "ASC"
        select, heads = MESSAGE_SELECT, ()
        if head is not None:
            select = ", ".join(f"substr({c}, 1, {p}) AS {c}, length({c}) AS {c}_chars" if c in _LONG_COLUMNS
                               else c for c in MESSAGE_COLUMNS)
            heads = (int(head),) * len(_LONG_COLUMNS)
        return self.db.query(
            f"SELECT {select} FROM messages WHERE session_id = {p}{where}"
            f" ORDER BY seq {order} LIMIT {p} OFFSET {p}",
            (*heads, session_id, *params, self.dialect.no_limit if limit is None else int(limit), int(offset)))

    def message_uids(self, session_id: str) -> dict[str, str]:
        """``{message_uid: content}`` of a session's messages stored with a source uid."""
        p = self.dialect.param
        rows = self.db.query(f"SELECT message_uid, content FROM messages WHERE session_id = {p}"
                             " AND message_uid IS NOT NULL", (session_id,))
        return {str(r["message_uid"]): r["content"] or "" for r in rows}

    def message_id_by_uid(self, session_id: str, message_uid: str) -> int | None:
        """The id of the session's message stored under ``message_uid``, or None."""
        p = self.dialect.param
        found = self.db.scalar(f"SELECT id FROM messages WHERE session_id = {p} AND message_uid = {p}",
                               (session_id, message_uid))
        return None if found is None else int(found)

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

    def message_contents(self, message_ids: Iterable[int], head: int | None = None) -> dict[int, str]:
        """``{id: content}`` of the existing ones of ``message_ids``, 500 ids a statement
        (``head``: each cut to its first ``head`` characters in the database)."""
        ids = list(dict.fromkeys(int(i) for i in message_ids))
        found: dict[int, str] = {}
        p = self.dialect.param
        column, heads = ("content", ()) if head is None else (f"substr(content, 1, {p}) AS content", (int(head),))
        for start in range(0, len(ids), 500):
            clause, params = self.dialect.in_values("id", ids[start:start + 500], False)
            for row in self.db.query(f"SELECT id, {column} FROM messages WHERE {clause}", (*heads, *params)):
                found[int(row["id"])] = row["content"] or ""
        return found

    def session_source_paths(self, session_ids: Sequence[str]) -> dict[str, str]:
        """``{session id: sources.path}`` for the sessions imported from a file."""
        found: dict[str, str] = {}
        ids = list(dict.fromkeys(session_ids))
        for start in range(0, len(ids), 500):
            clause, params = self.dialect.in_values("s.id", ids[start:start + 500], False)
            for row in self.db.query("SELECT s.id, src.path FROM sessions s"
                                     f" JOIN sources src ON src.id = s.source_id WHERE {clause}", params):
                found[row["id"]] = row["path"]
        return found

    def source_rows(self) -> list[dict[str, Any]]:
        """Every ``sources`` row's id, path and format, by path."""
        return self.db.query("SELECT id, path, format FROM sources ORDER BY path")

    def message_calls(self, message_id: int) -> str:
        """The indexed tool-call text ("" when none)."""
        p = self.dialect.param
        return self.db.scalar(f"SELECT calls FROM messages WHERE id = {p}", (int(message_id),)) or ""

    def backfill_calls(self, chunk: int) -> int:
        """After SQLite 0010 / pg 0008: fill ``calls``, ``tools`` and ``search_text`` of the
        messages stored before, chunk by chunk in id order, then drop the marker (an
        interrupted backfill starts again next time). A marker valued ``escapes`` (SQLite 0013 /
        pg 0015) refreshes only the messages holding a terminal escape."""
        p = self.dialect.param
        marker = self.db.scalar(f"SELECT value FROM store_meta WHERE key = {p}",
                                (CALLS_BACKFILL_KEY,)) if self.ready() else None
        if marker is None:
            return 0
        narrow = marker == "escapes"
        which = f"content LIKE {p}" if narrow else \
            f"(tool_calls IS NOT NULL OR tool_name IS NOT NULL OR content LIKE {p} OR content LIKE {p})"
        patterns = ("%\x1b%",) if narrow else ("%<%", "%\x1b%")
        updated, last_id = 0, 0
        while True:
            rows = self.db.query(
                "SELECT id, role, content, tool_name, tool_calls FROM messages"
                f" WHERE id > {p} AND {which} ORDER BY id LIMIT {p}", (last_id, *patterns, int(chunk)))
            if not rows:
                break
            last_id = int(rows[-1]["id"])
            changes = [(*values, row["id"]) for row in rows
                       if any(values := derived(str(row["role"]), str(row["content"] or ""),
                                                row["tool_name"], row["tool_calls"]))]
            if changes:
                self.write_many(f"UPDATE messages SET calls = {p}, tools = {p}, search_text = {p}"
                                f" WHERE id = {p}", changes)
                updated += len(changes)
        self.write_many(f"DELETE FROM store_meta WHERE key = {p}", [(CALLS_BACKFILL_KEY,)])
        return updated

    def write_many(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for every row of parameters in one transaction."""
        self.db.executemany(statement, rows)

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

    # -- forgetting for good (tombstones) ----------------------------------------------

    def _forget_transaction(self) -> Any:
        return self.db.write()

    def forget_messages(self, message_ids: Sequence[int], now: float) -> int:
        """Delete these messages and tombstone each (session id + hash of its content); the
        sessions' message counts follow. Returns how many were removed."""
        sql = self.db.portable
        removed = 0
        with self._forget_transaction():
            for message_id in message_ids:
                row = sql.query_one(
                    "SELECT m.session_id, m.seq, m.content, src.path FROM messages m JOIN sessions s"
                    " ON s.id = m.session_id LEFT JOIN sources src ON src.id = s.source_id WHERE m.id = ?",
                    (int(message_id),))
                if row is None:
                    continue
                sql.execute("INSERT INTO forgotten (session_id, message_hash, seq, source_path, forgotten_at)"
                            " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                            (row["session_id"], content_hash(row["content"]), row["seq"], row["path"], now))
                self._uncount_from_source(row["session_id"], 1)
                sql.execute("DELETE FROM messages WHERE id = ?", (int(message_id),))
                sql.execute("UPDATE sessions SET message_count = message_count - 1 WHERE id = ?"
                            " AND message_count > 0", (row["session_id"],))
                removed += 1
        return removed

    def _uncount_from_source(self, session_id: str, removed: int) -> None:
        """Take ``removed`` forgotten messages of the session off the count its source file's
        row keeps (``meta.messages``), which ``sessions index`` reports as "already indexed"
        for a file that did not change: after ``forget`` it claimed 23 messages of a file whose
        22 were all the store still held. Call it before the messages are deleted."""
        sql = self.db.portable
        row = sql.query_one("SELECT src.id, src.meta FROM sources src JOIN sessions s ON s.source_id = src.id"
                            " WHERE s.id = ?", (session_id,))
        if row is None or removed <= 0:
            return  # recorded live (no file), or nothing to take off
        try:
            meta = json.loads(row["meta"] or "{}")
        except ValueError:
            return  # a row this code did not write: left as it is
        if isinstance(meta, dict) and isinstance(meta.get("messages"), int):
            meta["messages"] = max(0, meta["messages"] - removed)
            sql.execute("UPDATE sources SET meta = ? WHERE id = ?", (json.dumps(meta, ensure_ascii=False), row["id"]))

    def forget_session(self, session_id: str, now: float) -> int:
        """Tombstone the whole session, then delete it; returns the messages removed."""
        sql = self.db.portable
        row = sql.query_one("SELECT src.path FROM sessions s LEFT JOIN sources src ON src.id = s.source_id"
                            " WHERE s.id = ?", (session_id,))
        with self._forget_transaction():
            sql.execute("INSERT INTO forgotten (session_id, message_hash, seq, source_path, forgotten_at)"
                        " VALUES (?, NULL, NULL, ?, ?) ON CONFLICT DO NOTHING",
                        (session_id, row["path"] if row else None, now))
            self._uncount_from_source(session_id, int(sql.query_one(
                "SELECT count(*) AS n FROM messages WHERE session_id = ?", (session_id,))["n"]))
            return self.delete_session(session_id, reread_source=False)

    def tombstones(self) -> tuple[set[str], dict[str, set[str]]]:
        """``(forgotten session ids, {session id: hashes of its forgotten messages})``."""
        sessions: set[str] = set()
        messages: dict[str, set[str]] = {}
        for row in self.db.portable.query("SELECT session_id, message_hash FROM forgotten"):
            if row["message_hash"] is None:
                sessions.add(row["session_id"])
            else:
                messages.setdefault(row["session_id"], set()).add(row["message_hash"])
        return sessions, messages

    def forgotten_summary(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """What was forgotten (never the text): per session id, whether all of it, the
        positions of single messages, the source file and when."""
        sql = self.db.portable
        where, params = (" WHERE session_id = ?", (session_id,)) if session_id else ("", ())
        rows = sql.query("SELECT session_id, message_hash, seq, source_path, forgotten_at FROM forgotten"
                         f"{where} ORDER BY session_id, seq", params)
        out: dict[str, dict[str, Any]] = {}
        for row in rows:
            item = out.setdefault(row["session_id"], {"session_id": row["session_id"], "whole_session": False,
                                                      "messages": [], "source": row["source_path"],
                                                      "forgotten_at": row["forgotten_at"]})
            if row["message_hash"] is None:
                item["whole_session"] = True
            else:
                item["messages"].append(row["seq"])
            item["forgotten_at"] = max(item["forgotten_at"], row["forgotten_at"])
        return list(out.values())

    def messages_containing(self, text: str, limit: int) -> list[int]:
        """Ids of the messages whose content holds ``text`` exactly (at most ``limit``)."""
        candidates = self.db.portable.query(
            f"SELECT id, content FROM messages WHERE {self.dialect.contains('content')} ORDER BY id LIMIT ?",
            (text, int(limit) * 4))
        return [int(r["id"]) for r in candidates if text in (r["content"] or "")][:limit]


def content_hash(content: str | None) -> str:
    """The tombstone identity of a message's stored content."""
    return hashlib.sha256((content or "").encode("utf-8", "surrogatepass")).hexdigest()[:32]
