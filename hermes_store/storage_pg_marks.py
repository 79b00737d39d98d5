"""The PostgreSQL statement behind marking an excerpt by the index's own tokens, written once
for the session messages (:mod:`hermes_store.sessions.storage_pg_snippets`) and the memory
entries (:mod:`hermes_store.builtin.storage_pg`).

Where ``ts_headline`` cannot mark a hit (its parser keeps a host, a path or an address whole),
each text's tokens are split as the index splits text and looked up, all texts' at once, with
the index's own configuration: a token is marked when the index folds or stems it to a token
of the match (``runs`` for ``running``, ``cafés`` for ``cafe``).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeVar

from hermes_store.pghighlight import HIGHLIGHT_TOKENS, INDEX_TOKEN, marked_excerpt, token_match
from hermes_store.pgquery import SEARCH_CONFIG, TERM_CAP, Op, Term, tsquery_sql
from hermes_store.query import Match

K = TypeVar("K", bound=Hashable)


def _first_letters(tokens_match: Op | Term) -> set[str] | None:
    """The first characters a text's token must begin with to match ``tokens_match`` (None when
    a query token begins with a character other than ASCII, which folding may reach from others).

    The index folds a token (lower case, no diacritics) and stems it with Porter's rules, which
    only ever change a word's ending; so an ASCII token can match only a query token that begins
    with the same letter, and looking the others up in PostgreSQL (one call of the tokenizer
    functions per token, thousands for a long tool output) cannot mark anything."""
    firsts: set[str] = set()
    stack: list[Op | Term] = [tokens_match]
    while stack:
        node = stack.pop()
        if isinstance(node, Op):
            stack += [node.left, node.right]
            continue
        for token in node.tokens:
            if not token or not token[0].isascii():
                return None
            firsts.add(token[0].lower())
    return firsts


def index_marked_excerpts(db: Any, contents: dict[K, str], match: Match, open_mark: str, close_mark: str,
                          words: int, ellipsis: str = "...") -> dict[K, str | None]:
    """An excerpt of ``words`` tokens of each of ``contents`` with every token marked that the
    index folds to a token of ``match`` (None for a text where none is; all None when the match
    has no positive term). ``db`` is the store's ``PgDatabase``."""
    out: dict[K, str | None] = dict.fromkeys(contents)
    tokens_match = token_match(match)
    if tokens_match is None or not contents:
        return out
    per_text = {key: list(dict.fromkeys(INDEX_TOKEN.findall(text)))[:HIGHLIGHT_TOKENS]
                for key, text in contents.items()}
    firsts = _first_letters(tokens_match)
    distinct = list(dict.fromkeys(t for tokens in per_text.values() for t in tokens
                                  if firsts is None or not t[0].isascii() or t[0].lower() in firsts))
    if not distinct:
        return out
    query_sql, params = tsquery_sql(tokens_match)
    with db.connection() as conn:
        rows = conn.execute(
            f"SELECT t FROM unnest(%s::text[]) AS t WHERE"
            f" to_tsvector('{SEARCH_CONFIG}', hermes_tokens(t, {TERM_CAP})) @@ ({query_sql})",
            (distinct, *params), prepare=False).fetchall()
    matching = {row["t"] for row in rows}
    for key, text in contents.items():
        if per_text[key]:
            out[key] = marked_excerpt(text, matching, open_mark, close_mark, words, ellipsis)
    return out
