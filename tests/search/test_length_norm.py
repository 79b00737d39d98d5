"""session_search does not bury a long message that holds the evidence under a short one that
shares a common word with the question (bm25's length normalisation, b = 0.5), on both engines."""

from __future__ import annotations

import json

from hermes_store.home import Home
from hermes_store.sessions import bm25
from hermes_store.tools import handle_tool_call
from tests.search.conftest import DAY, T0, add_session

CHAT = [  # chat turns of ordinary length
    ("user", "Melanie: How was your week? Anything fun happening on your side? Work has been a lot."),
    ("assistant", "Caroline: Mostly work, and I started a new painting of the lake near my place."),
    ("user", "Melanie: A painting of the lake sounds lovely, send me a picture when it is done."),
    ("assistant", "Caroline: Will do. The light on the water in the early morning is hard to get right."),
]


def _fill(db) -> None:
    add_session(db, "museum", [
        *CHAT,
        ("user", "Melanie: That's awesome, Caroline! Congrats on following your dreams. Yesterday I "
                 "took the kids to the museum - it was so cool spending time with them and seeing "
                 "their eyes light up! [image: a photograph of a child looking at a dinosaur "
                 "skeleton in a large hall with other visitors]"),
    ], start=T0)
    add_session(db, "errands", [
        *CHAT,
        ("assistant", "Caroline: Totally agree, Mel. Well, I'm off to go do some research."),
        ("user", "Melanie: Yep, Caroline. I'm off to go swimming with the kids. Talk soon!"),
    ], start=T0 + DAY)
    for n in range(12):  # "go" is a common word, "museum" a rare one
        add_session(db, f"other{n}", [*CHAT, ("user", f"Melanie: we should go out on day {n}")],
                    start=T0 + (2 + n) * DAY)


def _first(home: Home) -> str:
    reply = json.loads(handle_tool_call("session_search", {"query": "When did Melanie go to the museum?"},
                                        home=home))
    return reply["results"][0]["session_id"]


def test_the_long_evidence_message_ranks_first(home, db):
    _fill(db)
    assert bm25.B == 0.5
    assert _first(home) == "museum"


def test_textbook_b_would_rank_the_short_message_first(home, db, monkeypatch):
    """The case the lower b is for: with b = 0.75 the short message wins (so the test above
    checks the length normalisation, not just the words)."""
    _fill(db)
    monkeypatch.setattr(bm25, "B", 0.75)
    assert _first(home) == "errands"
