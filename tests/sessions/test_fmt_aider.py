"""Aider ``.aider.chat.history.md``: sessions by header, user/aider/model blocks."""

from __future__ import annotations

from datetime import datetime

import pytest
from format_helpers import index, messages, roles, session

from hermes_store.sessions import detect_format, index_paths

HISTORY = "aider/.projects/calc/.aider.chat.history.md"


def _sessions(store):
    return [r["id"] for r in store.query("SELECT id FROM sessions ORDER BY started_at")]


def test_detected(format_fixtures):
    assert detect_format(format_fixtures / HISTORY) == "aider"


def test_sessions_and_blocks(store, format_fixtures):
    summary = index(store, format_fixtures / HISTORY)
    assert summary["errors"] == []
    first, second = _sessions(store)
    row = session(store, first)
    assert row["origin_format"] == "aider" and row["source"] == "aider"
    assert row["workspace"].endswith("/aider/.projects/calc")
    assert row["started_at"] == pytest.approx(datetime(2025, 3, 2, 14, 5, 11).timestamp())  # local time
    rows = messages(store, first)
    assert roles(rows) == ["system", "user", "system", "user", "assistant", "system", "user", "system"]
    assert rows[0]["content"].startswith("/home/dev/.local/bin/aider --model sonnet\nAider v0.86.1\n")
    assert rows[1]["content"] == "/add calc/utils.py"
    assert rows[2]["content"] == "Added calc/utils.py to the chat"
    assert rows[3]["content"] == "add type hints to utils.py\nand keep the docstrings"
    reply = rows[4]["content"]
    assert reply.startswith("I'll add type hints") and reply.endswith(">>>>>>> REPLACE\n```")
    assert "#### Plan\n> Keep the public names unchanged." in reply  # Markdown, not user input or aider output
    assert rows[5]["content"].startswith("Tokens: 2.1k sent") and "Commit 1a2b3c4" in rows[5]["content"]
    assert rows[6]["content"] == "/run pytest -q"
    assert rows[7]["content"] == ("..F\nFAILED tests/test_utils.py::test_div - ZeroDivisionError\n\n"
                                  "1 failed, 2 passed in 0.03s\n"
                                  "Add 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: y\n"
                                  "Added 4 lines of output to the chat.")
    later = messages(store, second)
    assert [(r["role"], r["content"]) for r in later] == [
        ("system", "Aider v0.86.1"),
        ("user", "explique pourquoi test_div échoue — ça divise par zéro ?"),
        ("assistant", "Oui : `div(1, 0)` lève `ZeroDivisionError` ; ajoutez une garde."),
        ("system", "Tokens: 900 sent, 40 received.")]


def test_appended_run_adds_a_session(store, format_fixtures):
    path = format_fixtures / HISTORY
    index(store, path)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n# aider chat started at 2025-03-04 08:00:00\n\n\n#### one more  \n\nDone.\n\n")
    again = index_paths(store, [path])
    assert again["messages_added"] == 2 and again["errors"] == []
    assert len(_sessions(store)) == 3
    assert [r["content"] for r in messages(store, _sessions(store)[-1])] == ["one more", "Done."]


def test_directory_walk_finds_the_dot_file(store, tmp_path, format_fixtures):
    project = tmp_path / "walk" / "proj"
    project.mkdir(parents=True)
    (project / ".aider.chat.history.md").write_bytes((format_fixtures / HISTORY).read_bytes())
    summary = index_paths(store, [tmp_path / "walk"])
    assert summary["messages_added"] == 12
