"""Reasoning text is searched only when asked for, on every storage engine."""

from __future__ import annotations

from hermes_store.sessions.search import search_messages
from tests.search.conftest import add_session


def _roles(result) -> list[str]:
    rows = result["results"] if isinstance(result, dict) else result.results
    return sorted(r["role"] if isinstance(r, dict) else r.role for r in rows)


def test_reasoning_is_hidden_unless_asked_for(db):
    add_session(db, "s1", [("user", "why does the flamingo deploy fail"),
                           ("reasoning", "the flamingo deploy fails because of the lock"),
                           ("assistant", "the flamingo deploy needs the lock released")])
    assert _roles(search_messages(db, "flamingo")) == ["assistant", "user"]
    assert _roles(search_messages(db, "flamingo", roles=["reasoning"])) == ["reasoning"]
