"""Session titles are capped on every way in and out (issue 25, class variant of "titles over cap").

Importers already cut a title at ``MAX_TITLE_CHARS``; the live API (create, rename) did not,
and a long title stored before the cap (or written by hand) reached ``session_search`` and
``recall`` whole. Both engines. Hostile profile names through ``session_search`` are refused.
"""

from __future__ import annotations

import json

import pytest

from hermes_store.sessions import SessionIndex
from hermes_store.sessions.importers.base import MAX_TITLE_CHARS, cap_title
from hermes_store.tools import handle_tool_call

LONG = "okapi " + "T" * 100_000


def _fields(value, name: str) -> list[str]:
    """Every string under key ``name`` anywhere in a JSON reply."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == name and isinstance(item, str):
                found.append(item)
            else:
                found += _fields(item, name)
    elif isinstance(value, list):
        for item in value:
            found += _fields(item, name)
    return found


def _titles(value) -> list[str]:
    """Every "title" string anywhere in a JSON reply."""
    return _fields(value, "title")


def test_the_live_api_caps_titles(engine, home):
    with SessionIndex(home) as index:
        sid = index.create_session(title=LONG)
        assert len(index.get_session(sid)["title"]) == MAX_TITLE_CHARS
        assert index.get_session(sid)["title"].endswith("\u2026")
        index.set_title(sid, "renamed " + LONG)
        assert len(index.get_session(sid)["title"]) == MAX_TITLE_CHARS
        index.set_title(sid, "short")
        assert index.get_session(sid)["title"] == "short"


def test_a_long_stored_title_reaches_the_model_capped(engine, home):
    with SessionIndex(home) as index:
        sid = index.create_session(title="short okapi title")
        index.append_message(sid, "user", "the okapi question")
        index.end_session(sid)
    db = home.open_db()
    q = "%s" if engine == "postgresql" else "?"
    with db.write():  # written behind the API's back (an older version, a hand edit)
        db.execute(f"UPDATE sessions SET title = {q} WHERE id = {q}", (LONG, sid))
    db.close()
    calls = [
        ("session_search", {}),
        ("session_search", {"query": "okapi"}),
        ("session_search", {"query": "okapi", "detail": "full"}),
        ("session_search", {"session_id": sid}),
        ("recall", {"query": "okapi", "format": "json"}),
    ]
    for name, args in calls:
        text = handle_tool_call(name, args, home=home)
        assert "T" * (MAX_TITLE_CHARS + 1) not in text, (name, args)
        titles = _titles(json.loads(text))
        assert titles and all(len(t) <= MAX_TITLE_CHARS for t in titles), (name, args, titles)
    assert len(handle_tool_call("session_search", {}, home=home)) < 20_000


def test_cap_title_keeps_short_titles_and_non_strings():
    assert cap_title("a title") == "a title" and cap_title(None) is None
    assert cap_title("x" * MAX_TITLE_CHARS) == "x" * MAX_TITLE_CHARS
    assert cap_title("x" * (MAX_TITLE_CHARS + 1)) == "x" * (MAX_TITLE_CHARS - 1) + "\u2026"


@pytest.mark.parametrize(
    "profile",
    ["../h", "x\n", "a/b", "..", "/etc", "profiles/../../x", "a" * 65, "\x00", "x\u202e", "-rf"],
)
def test_session_search_refuses_hostile_profile_names(home, profile):
    with SessionIndex(home) as index:
        index.append_message(index.create_session(title="t"), "user", "okapi question")
    for args in ({"query": "okapi", "profile": profile}, {"session_id": f"{profile}/some-id"}):
        reply = json.loads(handle_tool_call("session_search", args, home=home))
        assert reply["success"] is False and "profile" in reply["error"], (args, reply)


def test_model_source_workspace_and_snippets_are_capped(engine, home):
    """The title's siblings: a 300k-character model and workspace through the live API, a model
    and source stored by SQL, and one 50,000-letter word in a message (a snippet is cut at
    ``MAX_SNIPPET_CHARS`` however the excerpt was built). Before: 1 MB per session_search."""
    from hermes_store.sessions.importers.base import (
        MAX_LABEL_CHARS,
        MAX_SNIPPET_CHARS,
        MAX_WORKSPACE_CHARS,
    )

    with SessionIndex(home) as index:
        live = index.create_session(
            title="live", model="M" * 300_000, workspace="W" * 300_000, source="S" * 5000
        )
        row = index.get_session(live)
        assert len(row["model"]) == MAX_LABEL_CHARS and len(row["source"]) == MAX_LABEL_CHARS
        assert len(row["workspace"]) == MAX_WORKSPACE_CHARS
        sids = []
        for i in range(3):
            sid = index.create_session(title=f"okapi {i}")
            index.append_message(sid, "user", "okapi question " + "q" * 50_000)
            index.end_session(sid)
            sids.append(sid)
    db = home.open_db()
    q = "%s" if engine == "postgresql" else "?"
    with db.write():
        for sid in sids:
            db.execute(
                f"UPDATE sessions SET model = {q}, source = {q} WHERE id = {q}",
                ("M" * 300_000, "S" * 2000, sid),
            )
    db.close()
    for name, args in [
        ("session_search", {}),
        ("session_search", {"query": "okapi"}),
        ("session_search", {"query": "okapi", "detail": "full"}),
        ("session_search", {"session_id": sids[0]}),
        ("recall", {"query": "okapi", "budget_tokens": 100, "format": "json"}),
    ]:
        text = handle_tool_call(name, args, home=home)
        assert len(text) < 40_000, (name, args, len(text))
        assert "M" * (MAX_LABEL_CHARS + 1) not in text and "S" * (MAX_LABEL_CHARS + 1) not in text
        snippets = _fields(json.loads(text), "snippet")
        assert snippets or args.get("session_id") or not args, (name, args)
        assert all(len(snippet) <= MAX_SNIPPET_CHARS for snippet in snippets), (name, args)
