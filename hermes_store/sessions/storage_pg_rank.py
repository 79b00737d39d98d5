"""What the PostgreSQL session ranking counts per row, the way SQLite's ranker counts it.

SQLite's ``hs_bm25`` (:mod:`hermes_store.sessions.rank`) scores a row with each term's
*frequency* in it (how many times the phrase occurs) and the row's *length* in tokens (every
column). A ``tsvector`` keeps each lexeme once with the positions it had, so here a row's
length is the sum of its lexemes' position counts and a term's frequency the number of
positions of its lexeme (a phrase: its rarest lexeme's; a prefix: every lexeme it starts).
As on SQLite, a word of the tool calls (the vector's last part, schema/pg/0008) does not add
to the frequency: a term found only there counts once.
Without this, PostgreSQL scored presence over distinct lexemes and ranked a short message that
names a word once above a message that is about it (issue 21: a CJK query ranked a different
session first on the two engines).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_store.pgquery import SEARCH_CONFIG

if TYPE_CHECKING:
    from hermes_store.pgdb import PgDatabase

_LEXEME = re.compile(r"'((?:[^'\\]|''|\\.)+)'(:\*)?")
# a lexeme's occurrences: its positions (a stripped vector has none: it occurred once)
_COUNT = "coalesce(array_length(u.positions, 1), 1)"
_WANTED = "(u.lexeme = ANY(%s) OR u.lexeme LIKE ANY(%s))"
CALLS_CHARS = 16384  # the part of the tool calls text the vector holds (schema/pg/0008)


def term_lexemes(tsquery: str) -> list[tuple[str, bool]]:
    """``(lexeme, is_prefix)`` of every lexeme a term's ``tsquery`` text names."""
    return [
        (re.sub(r"\\(.)", r"\1", m.group(1).replace("''", "'")), bool(m.group(2)))
        for m in _LEXEME.finditer(tsquery)
    ]


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def row_counts(
    db: PgDatabase, ids: Sequence[int], terms: Sequence[Sequence[tuple[str, bool]]]
) -> dict[int, tuple[float, list[float]]]:
    """``{message id: (length, [frequency of each term])}`` for the rows ``ids``."""
    if not ids:
        return {}
    exact = sorted({lex for term in terms for lex, prefix in term if not prefix})
    prefixes = sorted({_like_prefix(lex) for term in terms for lex, prefix in term if prefix})
    rows = db.query(
        f"SELECT m.id, sum({_COUNT}) AS dl,"
        f" array_agg(u.lexeme) FILTER (WHERE {_WANTED}) AS lexemes,"
        f" array_agg({_COUNT}) FILTER (WHERE {_WANTED}) AS counts"
        " FROM messages m CROSS JOIN LATERAL unnest(m.tsv) u WHERE m.id = ANY(%s) GROUP BY m.id",
        (exact, prefixes, exact, prefixes, list(ids)),
    )
    in_calls = {
        int(r["id"]): list(zip(r["lexemes"], r["counts"], strict=True))
        for r in db.query(
            f"SELECT m.id, array_agg(u.lexeme) AS lexemes, array_agg({_COUNT}) AS counts FROM messages m"
            f" CROSS JOIN LATERAL unnest(to_tsvector('{SEARCH_CONFIG}', hermes_tokens(m.calls, {CALLS_CHARS}))) u"
            f" WHERE m.id = ANY(%s) AND m.calls IS NOT NULL AND {_WANTED} GROUP BY m.id",
            (list(ids), exact, prefixes),
        )
    }
    found: dict[int, tuple[float, list[float]]] = {}
    for row in rows:
        seen = list(zip(row["lexemes"] or [], row["counts"] or [], strict=True))
        calls = in_calls.get(int(row["id"]), [])
        freqs = []
        for term in terms:
            # occurrences outside the tool calls, per lexeme of the term; the rarest counts
            per_lexeme = [
                _occurrences(seen, want, prefix) - _occurrences(calls, want, prefix)
                for want, prefix in term
            ]
            freqs.append(float(max(0, min(per_lexeme))) if per_lexeme else 0.0)
        found[int(row["id"])] = (float(row["dl"] or 0), freqs)
    return found


def _occurrences(counts: Sequence[tuple[str, int]], want: str, prefix: bool) -> int:
    return sum(n for lex, n in counts if lex == want or (prefix and lex.startswith(want)))


def average_length(db: PgDatabase, sample: int) -> float:
    """The average row length (see the module docstring) over the newest ``sample`` rows."""
    return float(
        db.scalar(
            f"SELECT avg((SELECT sum({_COUNT}) FROM unnest(t.tsv) u))"
            " FROM (SELECT tsv FROM messages ORDER BY id DESC LIMIT %s) t",
            (int(sample),),
        )
        or 1.0
    )
