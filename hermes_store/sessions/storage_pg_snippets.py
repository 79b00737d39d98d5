"""PostgreSQL excerpts of search hits, cut and marked as FTS5's ``snippet()`` does.

The search shows up to a page of hits, each with an excerpt; one statement (and a server round
trip) per hit per step made the excerpts most of a PostgreSQL search's time. :class:`PgSnippets`
reads every hit's text in one statement (the text the index reads, whether the message's own
text matches), looks the tokens of all of them up with one more
(:func:`~hermes_store.storage_pg_marks.index_marked_excerpts`, which replays FTS5's
``snippet()``: the same window and marks as the SQLite engine), and does the same for the tool
calls of the hits found by them alone (a message without tool calls is never read twice).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from hermes_store.pgquery import SEARCH_CONFIG, TsQueryError, tsquery_sql
from hermes_store.query import Match
from hermes_store.sessions.storage_pg_health import SNIPPET_CHARS
from hermes_store.storage_pg_marks import index_marked_excerpts

_OWN_TEXT = (f"to_tsvector('{SEARCH_CONFIG}', hermes_tokens(coalesce(search_text, content), 262144))"
             f" || to_tsvector('{SEARCH_CONFIG}', hermes_tokens(cjk, 262144))")  # schema/pg/0014
_CALLS = "coalesce(calls, '')"


class SearchReads:
    """What one search (one thread's ``one_connection`` block of the storage) read that a
    later step of it wants again: compiled matches with the table's bounds, and the contents of
    the messages excerpted."""

    def __init__(self) -> None:
        self.depth = 0  # nested one_connection blocks
        self.compiled: dict[Match, tuple[str, list[int], tuple[int, int] | None]] = {}
        self.contents: dict[int, str | None] = {}  # id -> content, None when the message is gone


class PgSnippets:
    """The snippet methods of :class:`~hermes_store.sessions.storage_pg.PgSessionStorage`."""

    db: Any
    _reads_local: threading.local

    def _search(self) -> SearchReads | None:
        """This thread's current search, or None outside one."""
        return getattr(self._reads_local, "reads", None)

    def message_contents(self, message_ids: Iterable[int], head: int | None = None) -> dict[int, str]:
        """``{id: content}`` of the existing ones of ``message_ids`` (``head``: cut to it);
        inside one search, the contents read by its excerpts when they cover every id (no
        second reading)."""
        ids = list(dict.fromkeys(int(i) for i in message_ids))
        search = self._search()
        if search is not None and search.contents and all(mid in search.contents for mid in ids):
            return {mid: text[:head] if head is not None else text for mid in ids
                    if (text := search.contents[mid]) is not None}
        return super().message_contents(ids, head)  # type: ignore[misc]

    def _keep_contents(self, ids: list[int], rows: list[Any]) -> None:
        """Keep the contents of the excerpts' messages for :meth:`message_contents` (one search)."""
        search = self._search()
        if search is not None:
            search.contents.update(dict.fromkeys(ids))
            search.contents.update({row["id"]: row["whole"] or "" for row in rows})

    def snippet(self, match: Match, message_id: int, *, open_mark: str, close_mark: str,
                tokens: int) -> str | None:
        """FTS5's ``snippet()`` of the content, else of the tool calls when only they match
        (marked ``[tool call]``); None when neither can be marked."""
        return self.snippets(match, [message_id], open_mark=open_mark, close_mark=close_mark,
                             tokens=tokens).get(int(message_id))

    def snippets(self, match: Match, message_ids: Iterable[int], *, open_mark: str, close_mark: str,
                 tokens: int) -> dict[int, str | None]:
        """:meth:`snippet` of each of ``message_ids``: two statements for all of them, two more
        for all those found by their tool calls alone."""
        ids = list(dict.fromkeys(int(i) for i in message_ids))
        try:
            query_sql, params = tsquery_sql(match)
        except TsQueryError:
            return dict.fromkeys(ids)
        words = max(3, int(tokens))
        rows = self.db.query(
            # the text the index reads (search_text: no boilerplate, no terminal escapes), as
            # SQLite's snippet() reads its FTS column
            f"SELECT id, left(coalesce(search_text, content), {SNIPPET_CHARS}) AS content,"
            # a message without tool calls: its vector is its own text (no second reading)
            f" CASE WHEN calls IS NULL THEN true ELSE ({_OWN_TEXT} @@ ({query_sql})) END AS own,"
            " calls IS NOT NULL AS has_calls, content AS whole FROM messages WHERE id = ANY(%s)",
            (*params, ids)) if ids else []
        self._keep_contents(ids, rows)
        found: dict[int, str | None] = dict.fromkeys(ids)
        own = {row["id"]: bool(row["own"]) for row in rows}
        with_calls = {row["id"] for row in rows if row["has_calls"]}
        texts = index_marked_excerpts(self.db, {row["id"]: row["content"] or "" for row in rows},
                                      match, open_mark, close_mark, words)
        need_calls = [mid for mid in own
                      if mid in with_calls and not (texts.get(mid) and own[mid])]
        calls = self._snippets_of_calls(match, need_calls, open_mark, close_mark, words)
        for mid in own:
            excerpt = calls.get(mid)
            found[mid] = f"[tool call] {excerpt}" if excerpt and open_mark in excerpt else (texts.get(mid) or None)
        return found

    def _snippets_of_calls(self, match: Match, message_ids: list[int], open_mark: str, close_mark: str,
                           words: int) -> dict[int, str | None]:
        """The excerpt of each message's tool-call text (the hits found by their calls alone),
        in two statements for all of them."""
        if not message_ids:
            return {}
        rows = self.db.query(f"SELECT id, left({_CALLS}, {SNIPPET_CHARS}) AS content FROM messages"
                             " WHERE id = ANY(%s)", (message_ids,))
        return index_marked_excerpts(self.db, {row["id"]: row["content"] for row in rows}, match,
                                     open_mark, close_mark, words)
