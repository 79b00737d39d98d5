"""The relevance of a built-in memory entry to a query, written once for both engines.

It is FTS5's ``bm25(builtin_index_fts, 1.0, 0.8)`` (k1 = 1.2, b = 0.75; the entry text
weighs 1.0, its CJK projection 0.8), what the SQLite engine always showed as ``relevance``:
each phrase of the query scores ``idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avgdl))``
with ``f`` its weighted count in the entry, ``length`` the entry's tokens (both columns),
``avgdl`` the index's tokens per entry and ``idf = ln((rows - docs + 0.5) / (docs + 0.5))``
(1e-6 when not positive) over the entries of the index holding the phrase. Higher is better.

The SQLite engine hands FTS5's own counts to :func:`entry_score` (an auxiliary function,
:mod:`hermes_store.builtin.storage_sqlite`), the PostgreSQL engine the counts of the index's
tokens it finds in Python (:mod:`hermes_store.builtin.storage_pg`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

K1, B = 1.2, 0.75
WEIGHTS = (1.0, 0.8)  # entry text, CJK projection (the index's two columns)
IDF_FLOOR = 1e-6


@dataclass(frozen=True)
class IndexStats:
    """What the score needs of the whole index: its entries, their tokens, and how many
    entries hold each phrase of the query."""

    rows: int
    tokens: int
    docs: tuple[int, ...]

    def idf(self, phrase: int) -> float:
        """Inverse document frequency of the query's ``phrase``."""
        docs = self.docs[phrase]
        value = math.log((self.rows - docs + 0.5) / (docs + 0.5))
        return value if value > 0 else IDF_FLOOR


def entry_score(counts: Sequence[Sequence[int]], length: int, stats: IndexStats) -> float:
    """The relevance of one entry: ``counts[phrase][column]`` are the phrase's instances in
    each of its columns, ``length`` its tokens in all of them."""
    avgdl = stats.tokens / max(stats.rows, 1)
    norm = K1 * (1 - B + B * length / avgdl) if avgdl else K1 * (1 - B)
    score = 0.0
    for phrase, columns in enumerate(counts):
        freq = sum(WEIGHTS[column] * count for column, count in enumerate(columns) if column < len(WEIGHTS))
        score += stats.idf(phrase) * (freq * (K1 + 1.0)) / (freq + norm)
    return score
