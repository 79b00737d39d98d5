"""Row length parity: bm25 marks a message down by its length in *tokens* on both engines.

FTS5 counts a row's tokens; a ``tsvector`` keeps each lexeme once, and PostgreSQL used to take
that count of distinct lexemes as the length, so a long message repeating a few words looked
short there and outranked what SQLite ranks first (LongMemEval, lexical: hit@1 84.4 on
PostgreSQL against 86.7 on SQLite; 86.7 on both since). The lengths are now counted in tokens
for the rows whose frequencies are counted, and estimated from the store's tokens per lexeme
for the others (:mod:`hermes_store.sessions.storage_pg_rank`).
"""

from __future__ import annotations

import pytest
from sess_helpers import both_engines

from hermes_store.sessions import SessionIndex
from hermes_store.sessions.search import find_hits

FILLER = [
    "We talked about the weather and the long drive to the coast last weekend.",
    "The meeting moved to Thursday because half of the team was travelling.",
    "Remember to water the plants and feed the cat before you leave tomorrow.",
    "I finished the book about the history of the printing press yesterday.",
]
SESSIONS = {
    # one mention, and the same two words said again and again: long in tokens, few lexemes
    "s-repetitive": "gardening " + "really nice " * 40,
    # one mention among a dozen different words: shorter in tokens, more lexemes
    "s-varied": "gardening taught me patience, soil chemistry, composting, pruning roses and watering schedules",
}


def _fill(db) -> None:
    index = SessionIndex(db)
    texts = {**SESSIONS, **{f"f-{i}": text for i, text in enumerate(FILLER)}}
    for n, (sid, text) in enumerate(sorted(texts.items())):
        index.create_session(sid, source="cli", started_at=1000.0 + n)
        index.append_message(sid, "user", text, timestamp=1000.0 + n)


@pytest.fixture
def both(home, pg_url):
    with both_engines(home, pg_url, _fill) as pair:
        yield pair


@pytest.mark.parametrize("query", ["gardening", "gardening tulips"])  # the second relaxed: no tulips
def test_a_long_repetitive_message_is_long_on_both_engines(both, query):
    sqlite, pg = both
    ranked = {}
    for name, db in (("sqlite", sqlite), ("postgresql", pg)):
        hits, _note, _mode = find_hits(db, query, limit=5, smooth=False)
        ranked[name] = [(hit.session_id, round(hit.score, 6)) for hit in hits]
    assert ranked["sqlite"][0][0] == "s-varied"
    assert ranked["postgresql"] == ranked["sqlite"]  # the same order and the same scores
