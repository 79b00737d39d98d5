"""What the PostgreSQL session ranking counts per row, the way SQLite's ranker counts it.

SQLite's ``hs_bm25`` (:mod:`hermes_store.sessions.rank`) scores a row with each term's
*frequency* in it (how many times the phrase occurs). A ``tsvector`` keeps each lexeme once
with the positions it had, so here a term's frequency is the number of positions of its
lexeme (a phrase: its rarest lexeme's; a prefix term: the positions of every lexeme it matches,
as FTS5 counts every token a prefix matches). A row's length is
its count of tokens, as FTS5's: the sum of its lexemes' positions for the :data:`COUNTED_ROWS`
rows whose frequencies are counted, and for the others (scored by presence) its count of
lexemes times the tokens per lexeme of the store's newest rows (:func:`average_length`):
unnesting every candidate's vector was too slow (``scripts/bench_search.py``). Before, the
length was the count of lexemes, so a long message repeating a few words looked short and
outranked what SQLite ranks first (LongMemEval lexical hit@1 84.4 against 86.7; the same
86.7 now: ``tests/sessions/test_sess_length_parity.py``).
As on SQLite, a word of the tool calls (the vector's last part, schema/pg/0008) does not add
to the frequency: a term found only there counts once.
Without this, PostgreSQL scored presence over distinct lexemes and ranked a short message that
names a word once above a message that is about it (issue 21: a CJK query ranked a different
session first on the two engines).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_store.pgquery import SEARCH_CONFIG
from hermes_store.sessions import bm25

if TYPE_CHECKING:
    from hermes_store.pgdb import PgDatabase

_LEXEME = re.compile(r"'((?:[^'\\]|''|\\.)+)'(:\*)?")
# a lexeme's occurrences: its positions (a stripped vector has none: it occurred once)
_COUNT = "coalesce(array_length(u.positions, 1), 1)"
CALLS_CHARS = 16384  # the part of the tool calls text the vector holds (schema/pg/0008)
COUNTED_ROWS = 100  # best rows by presence whose term frequencies a search counts


def _tokens(vector: str) -> str:
    """A row's length in tokens as FTS5 counts it (every lexeme's occurrences) for ``vector``,
    an SQL expression."""
    return f"(SELECT coalesce(sum({_COUNT}), 0) FROM unnest({vector}) u)"


def _only(vector: str) -> str:
    """``vector`` (an SQL expression) reduced to the lexemes of a bound array: they are marked
    with weight A and kept by ``ts_filter``, both in C, so only they are unnested."""
    return f"ts_filter(setweight({vector}, 'A', %s::text[]), '{{a}}')"


def _counted(vector: str, prefixes: bool) -> tuple[str, int]:
    """The ``FROM`` part that unnests the lexemes of ``vector`` a search counts, and how many
    bound arrays it takes: the exact lexemes alone (:func:`_only`), or with prefix terms every
    lexeme too, kept when it is an exact one or starts with a prefix (``^@``)."""
    if not prefixes:
        return f"unnest({_only(vector)}) u", 1
    return f"unnest({vector}) u WHERE (u.lexeme = ANY(%s::text[]) OR u.lexeme ^@ ANY(%s::text[]))", 2


def term_lexemes(tsquery: str) -> list[tuple[str, bool]]:
    """``(lexeme, is_prefix)`` of every lexeme a term's ``tsquery`` text names."""
    return [
        (re.sub(r"\\(.)", r"\1", m.group(1).replace("''", "'")), bool(m.group(2)))
        for m in _LEXEME.finditer(tsquery)
    ]


def row_counts(
    db: PgDatabase, ids: Sequence[int], terms: Sequence[Sequence[tuple[str, bool]]]
) -> dict[int, tuple[float, list[float]]]:
    """``{message id: (length, [frequency of each term])}`` for the rows ``ids`` that hold
    one of the terms' lexemes (a row missing here: presence, as before)."""
    exact = sorted({lex for term in terms for lex, prefix in term if not prefix})
    prefixes = sorted({lex for term in terms for lex, prefix in term if prefix})
    if not ids or not (exact or prefixes):
        return {}
    calls_vector = f"to_tsvector('{SEARCH_CONFIG}', hermes_tokens(m.calls, {CALLS_CHARS}))"
    own, arrays = _counted("m.tsv", bool(prefixes))
    calls_from, _ = _counted(calls_vector, bool(prefixes))
    wanted = [exact, prefixes][:arrays]
    rows = db.query(
        f"SELECT m.id, {_tokens('m.tsv')} AS dl, o.lexemes, o.counts, c.lexemes AS calls_lexemes,"
        f" c.counts AS calls_counts FROM messages m"
        f" CROSS JOIN LATERAL (SELECT array_agg(u.lexeme) AS lexemes, array_agg({_COUNT}) AS counts"
        f" FROM {own}) o"
        f" CROSS JOIN LATERAL (SELECT array_agg(u.lexeme) AS lexemes, array_agg({_COUNT}) AS counts"
        f" FROM {calls_from} {'AND' if prefixes else 'WHERE'} m.calls IS NOT NULL) c"
        " WHERE m.id = ANY(%s)",
        (*wanted, *wanted, list(ids)),
    )
    found: dict[int, tuple[float, list[float]]] = {}
    for row in rows:
        if not row["lexemes"]:
            continue  # none of the terms' lexemes: presence, as for a row not found
        seen = list(zip(row["lexemes"], row["counts"], strict=True))
        calls = list(zip(row["calls_lexemes"] or [], row["calls_counts"] or [], strict=True))
        freqs = []
        for term in terms:
            # occurrences outside the tool calls, per lexeme of the term (a prefix: of every
            # lexeme it matches); the rarest counts
            per_lexeme = [
                _occurrences(seen, want, prefix) - _occurrences(calls, want, prefix)
                for want, prefix in term
            ]
            freqs.append(float(max(0, min(per_lexeme))) if per_lexeme else 0.0)
        found[int(row["id"])] = (float(row["dl"] or 0), freqs)
    return found


def row_scores(
    db: PgDatabase, rows: Sequence[Any], idf: Sequence[float], avgdl: float,
    terms: Sequence[Sequence[tuple[str, bool]]], tokens_per_lexeme: float = 1.0,
) -> list[float]:
    """The BM25 score of each of ``rows`` (``id``, ``dl`` and a ``t<i>`` presence flag per
    term), with term frequencies counted (:func:`row_counts`) for the :data:`COUNTED_ROWS`
    best rows by presence only: a frequency can only raise a score, and counting unnests each
    candidate's vector (for every candidate it made a search about 3x slower at 100k messages)."""

    def score(row: Any, length: float, freqs: Sequence[float]) -> float:
        norm = bm25.length_norm(length, avgdl)
        return sum(bm25.term_score(weight, max(freqs[i], 1.0), norm)
                   for i, weight in enumerate(idf) if row[f"t{i}"])

    by_presence = _presence_scores(rows, idf, avgdl, tokens_per_lexeme)
    best = sorted(range(len(rows)), key=lambda i: -by_presence[i])[:COUNTED_ROWS]
    counts = row_counts(db, [int(rows[i]["id"]) for i in best], terms)
    for i in best:  # a row not counted (or not found by the count) keeps its presence score
        found = counts.get(int(rows[i]["id"]))
        if found is not None:
            by_presence[i] = score(rows[i], *found)
    return by_presence


def _presence_scores(rows: Sequence[Any], idf: Sequence[float], avgdl: float,
                     tokens_per_lexeme: float = 1.0) -> list[float]:
    """Each row's score with every term it holds counted once: the same arithmetic as
    :func:`bm25.term_score` at frequency 1, in the same order (equal floats), without a call
    per row and term (a walk reads up to a thousand rows)."""
    once = 1.0 * (bm25.K1 + 1.0)
    flags = [(f"t{i}", weight * once) for i, weight in enumerate(idf)]
    scores = []
    for row in rows:
        norm_once = 1.0 + bm25.length_norm(float(row["dl"] or 0) * tokens_per_lexeme, avgdl)
        total: float = 0
        for flag, weighted in flags:
            if row[flag]:
                total += weighted / norm_once
        scores.append(total)
    return scores


def _occurrences(counts: Sequence[tuple[str, int]], want: str, prefix: bool = False) -> int:
    if prefix:
        return sum(n for lex, n in counts if lex.startswith(want))
    return sum(n for lex, n in counts if lex == want)


def average_length(db: PgDatabase, sample: int) -> tuple[float, float]:
    """The average row length in tokens over the newest ``sample`` rows, and the tokens per
    lexeme there (what estimates a row's tokens from its count of lexemes)."""
    row = db.query(
        f"SELECT avg({_tokens('tsv')}) AS tokens, avg(length(tsv)) AS lexemes"
        " FROM (SELECT tsv FROM messages ORDER BY id DESC LIMIT %s) t",
        (int(sample),),
    )[0]
    tokens, lexemes = float(row["tokens"] or 0.0), float(row["lexemes"] or 0.0)
    return (tokens or 1.0), (tokens / lexemes if lexemes else 1.0)
