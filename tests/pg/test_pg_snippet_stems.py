"""Snippets mark the word a message matched by, also when it matched only by its stem or its
folded form, and both engines mark the same words."""

from __future__ import annotations

import pytest

from hermes_store.sessions.search import search_messages
from hermes_store.sessions.storage import open_session_storage

MESSAGES = [
    "check tests/runs/today",  # a path: one token to ts_headline's parser
    "see runs@example.com now",  # an e-mail address: ditto
    "open http://x.org/runs please",  # a URL
    "Crème brûlée runs",  # diacritics beside a stemmed word
    "the cafés are open",  # folded and stemmed
    "deployed to prod",
    "a long message " * 20 + "where the build/runs/x path is far " + "and more words " * 20,
]
CASES = [  # query, message index, the marked word
    ("running", 0, "tests/>>>runs<<</today"),
    ("running", 1, "see >>>runs<<<@example.com"),
    ("running", 2, "x.org/>>>runs<<< please"),
    ("running", 3, "brûlée >>>runs<<<"),
    ("running", 6, "build/>>>runs<<</x"),
    ("run*", 1, "see >>>runs<<<@example.com"),
    ("cafe", 4, "the >>>cafés<<< are"),
    ("deploying", 5, ">>>deployed<<< to"),
]


@pytest.fixture
def store(home, engine):
    db = home.open_db()
    storage = open_session_storage(db)
    storage.add_session("s1", origin_format="live", source="cli", title=None, model=None,
                        workspace=None, started_at=1.0, parent_session_id=None, meta={})
    ids = [storage.append_message("s1", role="user", content=text, tool_name=None, tool_calls=None,
                                  tool_call_id=None, timestamp=2.0 + i, cjk=None)
           for i, text in enumerate(MESSAGES)]
    yield db, ids
    db.close()


@pytest.mark.parametrize(("query", "index", "marked"), CASES)
def test_a_stem_only_match_is_marked(store, query, index, marked):
    db, ids = store
    results = {r["message_id"]: r["snippet"] for r in search_messages(db, query, limit=20).results}
    assert ids[index] in results, results
    assert marked in results[ids[index]]
    assert results[ids[index]].count(">>>") == 1
