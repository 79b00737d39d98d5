"""Continue's sessions (``~/.continue/sessions/<id>.json``): the extension's, the ``cn`` CLI's and the
late-2024 shape (fixtures reproduce continuedev/continue ``core/index.d.ts`` ``Session`` /
``ChatHistoryItem`` and how the GUI and the CLI fill them; never real content)."""

from __future__ import annotations

import json

from format_helpers import index, messages, session, ts

from hermes_store.sessions import detect_format

SESSIONS = "continue/.continue/sessions"
GUI = "8f3a2b1c-1d2e-4f5a-9b8c-7d6e5f4a3b2c"
CLI = "2b7c9e10-4a5b-4c6d-8e7f-a1b2c3d4e5f6"
OLD = "0c1d2e3f-5a6b-4c7d-9e8f-112233445566"


def _said(rows: list[dict]) -> list[tuple[str, str]]:
    return [(r["role"], r["content"]) for r in rows]


def test_the_extensions_session_is_read_whole(store, format_fixtures):
    """Before: ``unknown format (no importer recognises anything in it)``. The prompt keeps its
    attached file after the typed words, thinking and the reply's streamed reasoning are
    ``reasoning`` rows, calls carry their arguments, the GUI's ``tool`` messages are the results
    (not repeated from the call states), an image part is ``[image]`` and a compaction summary a
    ``system`` row; title, workspace (a ``file://`` URI), model and the list's start time."""
    path = format_fixtures / SESSIONS / f"{GUI}.json"
    assert detect_format(path) == "continue"
    summary = index(store, path)
    assert summary["errors"] == []
    rows = messages(store, GUI)
    assert _said(rows) == [
        ("user", "why does test_retry flake?\n\n```tests/test_retry.py\ndef test_retry(): ...\n```"),
        ("reasoning", "The retry uses wall clock time."),
        ("reasoning", "need the helper"),
        ("assistant", "Let me read the helper."),
        ("tool", "def retry(): time.sleep(1)"),
        ("assistant", "It sleeps on the real clock; inject a fake clock."),
        ("user", "[image]\nand this screenshot?"),
        ("assistant", ""),
        ("tool", "3 passed"),
        ("assistant", "Summary so far"),
        ("system", "The user asked about a flaky retry test; fake clock suggested."),
    ]
    assert rows[3]["calls"] == [("read_file", {"filepath": "shop/retry.py"}, "call_1")]
    assert (rows[4]["tool_name"], rows[4]["tool_call_id"]) == ("read_file", "call_1")
    assert rows[7]["calls"] == [("run_terminal_command", {"command": "pytest -q"}, "call_2")]
    row = session(store, GUI)
    assert (row["source"], row["title"], row["workspace"], row["model"]) == (
        "continue", "Fix the flaky retry test", "/home/ana/shop", "Claude Sonnet 4")
    assert row["started_at"] == ts("2026-01-01T00:00:00Z")


def test_the_cli_session_takes_results_from_the_call_states(store, format_fixtures):
    """The ``cn`` CLI writes no ``tool`` messages: each result is its call state's output (a
    canceled call ``[canceled]``); the system prompt is not indexed; the CLI's list dates in ISO."""
    summary = index(store, format_fixtures / SESSIONS / f"{CLI}.json")
    assert summary["errors"] == []
    rows = messages(store, CLI)
    assert _said(rows) == [
        ("user", "rename load_cfg to load_config"),
        ("assistant", "Searching for callers."),
        ("tool", "kiln/cli.py:12: load_cfg()"),
        ("assistant", ""),
        ("tool", "[canceled]"),
        ("assistant", "Renamed in kiln/cli.py."),
    ]
    assert [r["tool_name"] for r in rows if r["role"] == "tool"] == ["Search", "Bash"]
    assert rows[3]["calls"] == [("Bash", {"command": "rm -rf build"}, "toolu_10")]
    assert session(store, CLI)["started_at"] == ts("2026-01-03T09:30:00Z")


def test_the_late_2024_shape_and_the_session_list(store, format_fixtures):
    """One ``toolCallState`` per item and a ``tool`` message whose result is in its context items;
    ``sessions.json`` named alone is Continue's and said once, nothing imported."""
    folder = format_fixtures / SESSIONS
    assert index(store, folder / f"{OLD}.json")["errors"] == []
    rows = messages(store, OLD)
    assert _said(rows) == [("user", "what does cache.py do?"), ("assistant", ""), ("tool", "LRU = {}"),
                           ("assistant", "It keeps an LRU dict.")]
    assert rows[1]["calls"] == [("builtin_read_file", {"filepath": "cache.py"}, "tc_1")]
    assert session(store, OLD)["workspace"] == "c:/Users/ana/shop"  # a Windows folder's file:// URI
    listed = index(store, folder / "sessions.json")
    assert listed["errors"] == [] and listed["sessions_added"] == 0
    assert "nothing to import" in listed["notices"][0]["notice"]


def test_a_rewritten_session_replaces_what_it_imported(store, format_fixtures):
    """Continue saves the session whole: a later save (an edited prompt, a new turn) replaces the
    stored copy rather than adding to it."""
    path = format_fixtures / SESSIONS / f"{OLD}.json"
    index(store, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["history"][0]["message"]["content"] = "what does cache.py store?"
    doc["history"].append({"message": {"role": "user", "content": "and when is it cleared?"}, "contextItems": []})
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert index(store, path)["errors"] == []
    said = _said(messages(store, OLD))
    assert said[0] == ("user", "what does cache.py store?")
    assert said[-1] == ("user", "and when is it cleared?") and len(said) == 5


def test_a_session_saved_before_its_first_message_is_said_once(store, tmp_path):
    """Before: ``unknown format (closest: continue 0.95: it read no messages ...)`` for a new chat
    Continue saved empty; now one notice, nothing imported, no problem."""
    folder = tmp_path / ".continue" / "sessions"
    folder.mkdir(parents=True)
    path = folder / "e0e0e0e0-1111-4222-8333-444455556666.json"
    path.write_text(json.dumps({"sessionId": path.stem, "title": "New Session", "workspaceDirectory": "/home/ana",
                                "history": []}), encoding="utf-8")
    summary = index(store, path)
    assert summary["errors"] == [] and summary["sessions_added"] == 0
    assert "no messages" in summary["notices"][0]["notice"]
