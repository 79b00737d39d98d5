"""PostgreSQL excerpts of search hits: ``ts_headline`` marks, our own marks where it cannot.

The search shows up to a page of hits, each with an excerpt; one statement (and a server round
trip) per hit per step made the excerpts most of a PostgreSQL search's time. :class:`PgSnippets`
makes every hit's content excerpt in one statement (headline, whether the message's own text
matches, and the text the excerpt is cut from), marks the tokens ``ts_headline`` cannot mark
for all of them with one more, and does the same for the tool calls of the hits found by them
alone (a message without tool calls is never read twice).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from hermes_store.pghighlight import (
    PARSER_WHOLE,
    join_phrases,
    marks_tokens,
    with_ellipses,
)
from hermes_store.pgquery import SEARCH_CONFIG, TsQueryError, tsquery_sql
from hermes_store.query import Match
from hermes_store.sessions.storage_pg_health import SNIPPET_CHARS
from hermes_store.storage_pg_marks import index_marked_excerpts

_OWN_TEXT = (f"to_tsvector('{SEARCH_CONFIG}', hermes_tokens(coalesce(search_text, content), 262144))"
             f" || to_tsvector('{SEARCH_CONFIG}', hermes_tokens(cjk, 262144))")  # schema/pg/0014
_CALLS = "coalesce(calls, '')"


def _options(open_mark: str, close_mark: str, words: int) -> str:
    """ts_headline options: MinWords just under MaxWords, so a message of up to ``words`` words
    comes back whole, as FTS5's snippet() returns it (with words // 2 ts_headline cut short
    messages mid-way)."""
    return (f'StartSel="{open_mark}", StopSel="{close_mark}", MaxWords={words}, '
            f'MinWords={words - 1}, ShortWord=0, HighlightAll=false')


def _marked_headline(row: Any, match: Match, open_mark: str, close_mark: str) -> str | None:
    """The row's ts_headline as the excerpt, or None where it cannot be trusted: no marks, marks
    that are not index tokens, or text holding a path, address or URL its parser keeps whole."""
    if (open_mark in row["headline"] and marks_tokens(row["headline"], open_mark, close_mark)
            and not PARSER_WHOLE.search(row["content"])):
        headline = join_phrases(row["headline"], match, open_mark, close_mark)
        return with_ellipses(headline, row["content"], open_mark, close_mark)
    return None


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

    def message_contents(self, message_ids: Iterable[int]) -> dict[int, str]:
        """``{id: content}`` of the existing ones of ``message_ids``; inside one search, the
        contents read by its excerpts when they cover every id (no second reading)."""
        ids = list(dict.fromkeys(int(i) for i in message_ids))
        search = self._search()
        if search is not None and search.contents and all(mid in search.contents for mid in ids):
            return {mid: text for mid in ids if (text := search.contents[mid]) is not None}
        return super().message_contents(ids)  # type: ignore[misc]

    def _keep_contents(self, ids: list[int], rows: list[Any]) -> None:
        """Keep the contents of the excerpts' messages for :meth:`message_contents` (one search)."""
        search = self._search()
        if search is not None:
            search.contents.update(dict.fromkeys(ids))
            search.contents.update({row["id"]: row["whole"] or "" for row in rows})

    def snippet(self, match: Match, message_id: int, *, open_mark: str, close_mark: str,
                tokens: int) -> str | None:
        """ts_headline of the content, else of the tool calls when only they match (marked
        ``[tool call]``); None when neither can be marked."""
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
            f" ts_headline('{SEARCH_CONFIG}', left(coalesce(search_text, content), {SNIPPET_CHARS}),"
            f" {query_sql}, %s) AS headline,"
            # a message without tool calls: its vector is its own text (no second reading)
            f" CASE WHEN calls IS NULL THEN true ELSE ({_OWN_TEXT} @@ ({query_sql})) END AS own,"
            " calls IS NOT NULL AS has_calls, content AS whole FROM messages WHERE id = ANY(%s)",
            (*params, _options(open_mark, close_mark, words), *params, ids)) if ids else []
        self._keep_contents(ids, rows)
        found: dict[int, str | None] = dict.fromkeys(ids)
        unmarked: dict[int, str] = {}
        headlines: dict[int, tuple[str, bool]] = {}
        with_calls = {row["id"] for row in rows if row["has_calls"]}
        for row in rows:
            if row["headline"] is None:
                headlines[row["id"]] = ("", bool(row["own"]))
                continue
            marked = _marked_headline(row, match, open_mark, close_mark)
            if marked is not None:
                headlines[row["id"]] = (marked, bool(row["own"]))
            else:
                unmarked[row["id"]] = row["content"]
                headlines[row["id"]] = ("", bool(row["own"]))
        # ts_headline reads the raw text with its own parser (no diacritics folding; a path,
        # file name, e-mail address or URL is one token it never marks inside): where the text
        # holds one, or the marks are not index tokens, mark the tokens the index sees ourselves
        for mid, excerpt in index_marked_excerpts(self.db, unmarked, match, open_mark, close_mark, words).items():
            headlines[mid] = ("" if excerpt is None else join_phrases(excerpt, match, open_mark, close_mark),
                              headlines[mid][1])
        need_calls = [mid for mid, (text, own) in headlines.items()
                      if mid in with_calls and not (text and open_mark in text and own)]
        calls = self._snippets_of_calls(match, need_calls, open_mark, close_mark, words)
        for mid, (text, _) in headlines.items():
            excerpt = calls.get(mid)
            found[mid] = f"[tool call] {excerpt}" if excerpt and open_mark in excerpt else (text or None)
        return found

    def _snippets_of_calls(self, match: Match, message_ids: list[int], open_mark: str, close_mark: str,
                           words: int) -> dict[int, str | None]:
        """The excerpt of each message's tool-call text (the hits found by their calls alone),
        in two statements for all of them."""
        if not message_ids:
            return {}
        query_sql, params = tsquery_sql(match)
        rows = self.db.query(
            f"SELECT id, left({_CALLS}, {SNIPPET_CHARS}) AS content,"
            f" ts_headline('{SEARCH_CONFIG}', left({_CALLS}, {SNIPPET_CHARS}), {query_sql}, %s) AS headline"
            " FROM messages WHERE id = ANY(%s)", (*params, _options(open_mark, close_mark, words), message_ids))
        found: dict[int, str | None] = {}
        unmarked: dict[int, str] = {}
        for row in rows:
            if row["headline"] is None:
                continue
            marked = _marked_headline(row, match, open_mark, close_mark)
            if marked is not None:
                found[row["id"]] = marked
            else:
                unmarked[row["id"]] = row["content"]
        for mid, excerpt in index_marked_excerpts(self.db, unmarked, match, open_mark, close_mark, words).items():
            found[mid] = None if excerpt is None else join_phrases(excerpt, match, open_mark, close_mark)
        return found
