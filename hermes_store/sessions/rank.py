"""``hs_bm25``: bm25 for ``messages_fts`` whose cost does not grow with the index.

FTS5's built-in ``bm25()`` computes each phrase's document frequency by
walking that phrase's *whole* doclist once per statement. Ranking even a
small slice of matches for a common word then costs time linear in the
corpus (measured at 1M messages: 50 ms for one common word, 250 ms for a
phrase of two). ``hs_bm25`` scores rows with the same formula (k1 = 1.2,
b = 0.5 (:mod:`.bm25`), per-column weights, IDF floored at 1e-6) but estimates the
document frequency from the first :data:`IDF_SAMPLE` matches: exact when a
phrase has fewer matches, otherwise ``sample * rows / rowid-span``.
Lower (more negative) is better, as with ``bm25()``.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

import apsw

from hermes_store.db import Database
from hermes_store.sessions import bm25

RANK_FUNCTION = "hs_bm25"
# messages_fts(search_content, cjk, calls): a word of a message's tool calls (a path, a command)
# counts once, and not at all where the text has it too -- as the PostgreSQL engine, whose one
# vector per message is scored by presence, ranks the same rows
PRESENCE_COLUMNS = frozenset({2})
IDF_SAMPLE = 500
K1, B = bm25.K1, bm25.B

_registered: weakref.WeakSet[Any] = weakref.WeakSet()


class _Enough(Exception):
    """Stops a phrase walk once the sample is complete."""


class _Stats:
    """Per-statement constants: weights, average row length, IDF per phrase."""

    def __init__(self, api: apsw.FTS5ExtensionApi, weights: tuple[Any, ...]) -> None:
        columns = api.column_count
        self.weights = [float(weights[i]) if i < len(weights) and weights[i] is not None else 1.0
                        for i in range(columns)]
        rows = max(1, api.row_count)
        self.avgdl = max(1e-9, api.column_total_size(-1) / rows)
        self.idf = [self._idf(api, i, rows) for i in range(api.phrase_count)]

    @staticmethod
    def _idf(api: apsw.FTS5ExtensionApi, phrase: int, rows: int) -> float:
        seen = {"count": 0, "first": 0, "last": 0}

        def visit(inner: apsw.FTS5ExtensionApi, state: dict[str, int]) -> None:
            if state["count"] == 0:
                state["first"] = inner.rowid
            state["last"] = inner.rowid
            state["count"] += 1
            if state["count"] >= IDF_SAMPLE:
                raise _Enough

        with contextlib.suppress(_Enough):
            api.query_phrase(phrase, visit, seen)
        return bm25.sampled_idf(seen["count"], IDF_SAMPLE, seen["first"], seen["last"], rows)


def hs_bm25(api: apsw.FTS5ExtensionApi, *weights: Any) -> float:
    """The FTS5 auxiliary function: minus the bm25 score of the current row."""
    stats = api.aux_data
    if stats is None:
        stats = _Stats(api, weights)
        api.aux_data = stats
    length = api.column_size(-1)
    norm = bm25.length_norm(length, stats.avgdl)
    score = 0.0
    for phrase, idf in enumerate(stats.idf):
        freq = called = 0.0
        for column, offsets in enumerate(api.phrase_locations(phrase)):
            if offsets:
                if column in PRESENCE_COLUMNS:
                    called = max(called, stats.weights[column])
                else:
                    freq += stats.weights[column] * len(offsets)
        freq = freq or called  # a term found only in the tool calls counts once
        if freq:
            score += bm25.term_score(idf, freq, norm)
    return -score


TEXT_PHRASES_FUNCTION = "hs_text_phrases"


def hs_text_phrases(api: apsw.FTS5ExtensionApi) -> str:
    """The FTS5 auxiliary function: one character per phrase of the query, ``1`` where the
    current row's own text (any column but the tool calls) holds the phrase, else ``0``."""
    return "".join(
        "1" if any(offsets for column, offsets in enumerate(api.phrase_locations(phrase))
                   if column not in PRESENCE_COLUMNS) else "0"
        for phrase in range(api.phrase_count))


def ensure_rank_function(db: Database) -> str:
    """Register ``hs_bm25`` (and ``hs_text_phrases``) on ``db``'s connection (once) and return
    the rank function's SQL name."""
    conn = db.conn
    if conn not in _registered:
        conn.register_fts5_function(RANK_FUNCTION, hs_bm25)
        conn.register_fts5_function(TEXT_PHRASES_FUNCTION, hs_text_phrases)
        _registered.add(conn)
    return RANK_FUNCTION


def ensure_text_phrases_function(db: Database) -> str:
    """Register the auxiliary functions on ``db``'s connection (once) and return the SQL name
    of ``hs_text_phrases``."""
    ensure_rank_function(db)
    return TEXT_PHRASES_FUNCTION
