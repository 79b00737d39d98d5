"""The PostgreSQL statement behind marking an excerpt by the index's own tokens, written once
for the session messages (:mod:`hermes_store.sessions.storage_pg_snippets`) and the memory
entries (:mod:`hermes_store.builtin.storage_pg`).

Each text's tokens are split as the index splits text and looked up, all texts' at once, with
the index's own configuration: a token matches a token of the query when the index folds or
stems it to that token (``runs`` for ``running``, ``déploiement`` for ``deploy*``, ``js`` only
for ``js``); a phrase is marked where its tokens stand in order. ``ts_headline`` only chooses
the window, where it can (:func:`~hermes_store.pghighlight.trusted_window`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, TypeVar

from hermes_store.pghighlight import (
    HIGHLIGHT_TOKENS,
    INDEX_TOKEN,
    mark_text,
    marked_excerpt,
    match_nodes,
    strip_marks,
    with_ellipses,
)
from hermes_store.pgquery import SEARCH_CONFIG, TERM_CAP, Term, tsquery_sql
from hermes_store.query import Match

K = TypeVar("K", bound=Hashable)


def _distinct_tokens(text: str) -> list[str]:
    """The distinct index tokens of ``text``, at most :data:`HIGHLIGHT_TOKENS` of them."""
    return list(dict.fromkeys(INDEX_TOKEN.findall(text)))[:HIGHLIGHT_TOKENS]


def _lookup(db: Any, nodes: list[Term], tokens: Iterable[str]) -> dict[str, frozenset[int]]:
    """``{token: the indices of the nodes it matches}`` for those of ``tokens`` that match any of
    ``nodes`` (one statement; ``db`` is the store's ``PgDatabase``)."""
    distinct = list(dict.fromkeys(tokens))
    if not distinct:
        return {}
    compiled = [tsquery_sql(node) for node in nodes]
    tests = ", ".join(f"v @@ ({sql})" for sql, _ in compiled)
    with db.connection() as conn:
        rows = conn.execute(
            f"SELECT t, hits FROM (SELECT t, ARRAY[{tests}] AS hits FROM unnest(%s::text[]) AS t,"
            f" LATERAL (SELECT to_tsvector('{SEARCH_CONFIG}', hermes_tokens(t, {TERM_CAP})) AS v) AS x) AS s"
            " WHERE true = ANY(hits)",
            (*[p for _, params in compiled for p in params], distinct), prepare=False).fetchall()
    return {row["t"]: frozenset(i for i, hit in enumerate(row["hits"]) if hit) for row in rows}


def index_marked_excerpts(db: Any, contents: dict[K, str], match: Match, open_mark: str, close_mark: str,
                          words: int, ellipsis: str = "...", *,
                          headlines: dict[K, str] | None = None) -> dict[K, str | None]:
    """An excerpt of each of ``contents`` with every run of tokens marked that the index matched
    (:func:`~hermes_store.pghighlight.match_nodes`): ``headlines[key]``'s window (ts_headline's,
    its marks replaced) where one is given and holds a match, else ``words`` tokens from a
    little before the first match; None for a text without one (all None when the match has no
    positive term). ``db`` is the store's ``PgDatabase``."""
    out: dict[K, str | None] = dict.fromkeys(contents)
    nodes, shapes = match_nodes(match)
    if not nodes or not contents:
        return out
    windows = {key: strip_marks(text, open_mark, close_mark)
               for key, text in (headlines or {}).items() if key in contents}
    asked = {key: _distinct_tokens(windows.get(key, text)) for key, text in contents.items()}
    found = _lookup(db, nodes, (t for tokens in asked.values() for t in tokens))
    looked = {t for tokens in asked.values() for t in tokens}
    whole: list[K] = []
    for key, window in windows.items():
        marked = mark_text(window, found, shapes, open_mark, close_mark)
        if marked is not None:
            out[key] = with_ellipses(marked, contents[key], open_mark, close_mark, ellipsis)
        else:  # the window holds nothing the index matched: cut the text's own
            whole.append(key)
    if whole:
        more = {t for key in whole for t in _distinct_tokens(contents[key])} - looked
        found = {**found, **_lookup(db, nodes, more)}
    for key, text in contents.items():
        if key not in windows or key in whole:
            out[key] = marked_excerpt(text, found, shapes, open_mark, close_mark, words, ellipsis)
    return out
