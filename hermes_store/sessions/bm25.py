"""The bm25 formula both engines rank with, written once (Okapi bm25, k1 = 1.2, b = 0.5).

b (how much a long message is marked down for its length) is 0.5, not the textbook 0.75: chat
messages that hold the evidence are often the long ones (a story told, an image described), and
0.75 let a short "I'm off to go ..." outrank "Yesterday I took the kids to the museum - ..." for
"When did Melanie go to the museum?". Measured with ``scripts/eval_locomo.py`` and
``scripts/eval_longmemeval.py`` (docs/retrieval.md, "Length normalisation").

SQLite scores rows in the ``hs_bm25`` FTS5 function (:mod:`hermes_store.sessions.rank`),
PostgreSQL in :mod:`hermes_store.sessions.storage_pg`; each estimates document frequencies its
own way (the index's phrase counts, a bounded sample of the GIN index) and hands them here.
"""

from __future__ import annotations

import math

K1, B = 1.2, 0.5
IDF_FLOOR = 1e-6  # a term in more than half the rows still counts a little, never negatively


def idf(rows: float, docs: float) -> float:
    """Inverse document frequency of a term found in ``docs`` of ``rows`` rows."""
    docs = min(float(docs), float(rows))  # an estimate (or a cached count) may overshoot
    return max(IDF_FLOOR, math.log((rows - docs + 0.5) / (docs + 0.5)))


def sampled_idf(found: int, size: int, first_id: int, last_id: int, rows: float) -> float:
    """IDF of a term from its first ``found`` matches in id order (ids ``first_id`` to
    ``last_id``), read until ``size``: a full sample spread over its id span stands for
    ``size * rows / span`` documents; a smaller one is every match. Both engines' rankers."""
    docs = float(found)
    if found >= size:
        span = max(1, abs(int(last_id) - int(first_id)) + 1)
        docs = size * rows / span
    return idf(rows, docs)


def length_norm(length: float, avgdl: float) -> float:
    """The denominator term ``k1 * (1 - b + b * length / avgdl)`` of a row ``length`` long."""
    return K1 * (1 - B + B * float(length) / avgdl) if avgdl else K1


def term_score(idf_value: float, freq: float, norm: float) -> float:
    """One term's contribution: ``idf * freq * (k1 + 1) / (freq + norm)``."""
    return idf_value * (freq * (K1 + 1.0)) / (freq + norm)
