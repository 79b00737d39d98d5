"""The PostgreSQL statement behind the snippets of the PostgreSQL indexes, written once for the
session messages (:mod:`hermes_store.sessions.storage_pg_snippets`) and the memory entries
(:mod:`hermes_store.builtin.storage_pg`).

Each text's tokens are split as the index splits text and looked up, all texts' at once, with
the index's own configuration: a token matches a query token when the index folds or stems
both alike (``runs`` for ``running``, ``cafés`` for ``cafe``; a prefix for ``back*``). The
phrase instances found that way are cut and marked as FTS5's ``snippet()`` cuts and marks them
(:func:`hermes_store.pghighlight.fts5_snippet`), so both engines show the same excerpt.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

from hermes_store.pghighlight import HIGHLIGHT_TOKENS, INDEX_TOKEN, fts5_snippet
from hermes_store.pgquery import SEARCH_CONFIG, TERM_CAP, Term, positive_terms, tsquery_sql
from hermes_store.query import Match

K = TypeVar("K", bound=Hashable)


def query_phrases(match: Match, *, cjk: bool = False) -> list[tuple[Term, ...]]:
    """The phrases of ``match`` that can match (not under ``NOT``), in order, each as its query
    tokens (a prefix where the phrase's last token is one); the CJK projection's bigram terms
    only with ``cjk`` (in the text, a CJK run is one token: they never match there)."""
    phrases: list[tuple[Term, ...]] = []
    for term in positive_terms(match):
        if getattr(term, "cjk", False) and not cjk:
            continue
        tokens = tuple(Term((token,), bool(term.prefix and i == len(term.tokens) - 1))
                       for i, token in enumerate(term.tokens))
        if tokens:
            phrases.append(tokens)
    return phrases


def _first_letters(nodes: Sequence[Term]) -> set[str] | None:
    """The first characters a text's token must begin with to match one of ``nodes`` (None when
    a query token begins with a character other than ASCII, which folding may reach from others).

    The index folds a token (lower case, no diacritics) and stems it with Porter's rules, which
    only ever change a word's ending; so an ASCII token can match only a query token that begins
    with the same letter, and looking the others up in PostgreSQL (one call of the tokenizer
    functions per token, thousands for a long tool output) cannot mark anything."""
    firsts: set[str] = set()
    for node in nodes:
        for token in node.tokens:
            if not token or not token[0].isascii():
                return None
            firsts.add(token[0].lower())
    return firsts


def _instances(tokens: list[str], phrases: list[tuple[Term, ...]], nodes: list[Term],
               matching: dict[str, set[int]]) -> list[tuple[int, int]]:
    """``(position, phrase)`` of every place a phrase's tokens follow one another in ``tokens``."""
    found: list[tuple[int, int]] = []
    wanted = [[nodes.index(node) for node in phrase] for phrase in phrases]
    for position, token in enumerate(tokens):
        if token not in matching:
            continue
        for p, indexes in enumerate(wanted):
            if position + len(indexes) <= len(tokens) and all(
                    i in matching.get(tokens[position + k], ()) for k, i in enumerate(indexes)):
                found.append((position, p))
    return found


def phrase_instances(db: Any, contents: dict[K, str], phrases: list[tuple[Term, ...]]) -> dict[K, list[tuple[int, int]]]:
    """``(token position, phrase)`` of every instance of ``phrases`` (:func:`query_phrases`) in
    each of ``contents``, positions of :data:`~hermes_store.pghighlight.INDEX_TOKEN` tokens;
    one statement for all of them. ``db`` is the store's ``PgDatabase``."""
    out: dict[K, list[tuple[int, int]]] = {key: [] for key in contents}
    nodes = list(dict.fromkeys(node for phrase in phrases for node in phrase))
    if not nodes or not contents:
        return out
    per_text = {key: list(dict.fromkeys(INDEX_TOKEN.findall(text)))[:HIGHLIGHT_TOKENS]
                for key, text in contents.items()}
    firsts = _first_letters(nodes)
    distinct = list(dict.fromkeys(t for tokens in per_text.values() for t in tokens
                                  if firsts is None or not t[0].isascii() or t[0].lower() in firsts))
    if not distinct:
        return out
    tests, params = [], []
    for node in nodes:
        query_sql, node_params = tsquery_sql(node)
        tests.append(f"v.v @@ ({query_sql})")
        params += node_params
    hits_sql = ", ".join(tests)  # one boolean per query token
    with db.connection() as conn:
        rows = conn.execute(
            f"SELECT u.t, ARRAY[{hits_sql}] AS hits FROM unnest(%s::text[]) AS u(t),"
            f" LATERAL (SELECT to_tsvector('{SEARCH_CONFIG}', hermes_tokens(u.t, {TERM_CAP})) AS v) v",
            (*params, distinct), prepare=False).fetchall()
    matching = {row["t"]: {i for i, hit in enumerate(row["hits"]) if hit} for row in rows}
    matching = {token: hits for token, hits in matching.items() if hits}
    for key, text in contents.items():
        if per_text[key]:
            out[key] = _instances(INDEX_TOKEN.findall(text), phrases, nodes, matching)
    return out


def index_marked_excerpts(db: Any, contents: dict[K, str], match: Match, open_mark: str, close_mark: str,
                          words: int, ellipsis: str = "...") -> dict[K, str | None]:
    """FTS5's ``snippet()`` of each of ``contents`` for ``match`` (``words`` tokens at most,
    ``ellipsis`` where it is cut; None for a text holding no phrase of the match, all None when
    the match has no positive term). ``db`` is the store's ``PgDatabase``."""
    phrases = query_phrases(match)
    sizes = [len(phrase) for phrase in phrases]
    return {key: fts5_snippet(contents[key], instances, sizes, open_mark, close_mark, words, ellipsis)
            for key, instances in phrase_instances(db, contents, phrases).items()}
