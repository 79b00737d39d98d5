"""The first, TypeScript Codex CLI's rollouts: one JSON document per session,
``~/.codex/sessions/rollout-<date>-<id>.json`` (openai/codex ``codex-cli/src/utils/storage/
save-rollout.ts``: ``{session: {timestamp, id, instructions, model, provider}, items}``); the
fixture reproduces the writer's structure, never real content."""

from __future__ import annotations

import json

from format_helpers import index, messages, session, ts

from hermes_store.sessions import detect_format

SESSION = "6b1d3e5f-7a9c-4b2d-8e0f-1a3c5e7b9d2f"
PATH = f"codex-json/.codex/sessions/rollout-2025-04-22-{SESSION}.json"


def test_the_typescript_cli_rollout_is_read(store, format_fixtures):
    """Before: ``unknown format (no importer recognises anything in it)``."""
    path = format_fixtures / PATH
    assert detect_format(path) == "codex-json"
    assert index(store, path)["errors"] == []
    rows = messages(store, SESSION)
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "make the tide table parser accept blank lines"),
        ("reasoning", "**Reading the parser** before changing it"),
        ("assistant", ""), ("tool", "def parse(lines):\n    return [row(l) for l in lines]\n"),
        ("assistant", ""), ("tool", "Done!"),
        ("assistant", "Blank lines are now skipped before parsing."),
    ]
    assert rows[2]["calls"][0][:2] == ("shell", {"command": ["bash", "-lc", "cat tides/parse.py"],
                                                 "workdir": "/home/ines/tides"})
    assert [(r["tool_name"], r["tool_call_id"]) for r in rows if r["role"] == "tool"] == [
        ("shell", "call_kq1"), ("shell", "call_kq2")]
    row = session(store, SESSION)
    assert (row["source"], row["model"]) == ("codex", "o4-mini")
    assert row["started_at"] == ts("2025-04-22T14:05:11.482Z")


def test_a_later_save_replaces_the_stored_copy(store, format_fixtures):
    """The CLI rewrites the file after every turn: the next turn is added, nothing doubled."""
    path = format_fixtures / PATH
    index(store, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["items"].append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "thanks"}]})
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert index(store, path)["errors"] == []
    said = [(r["role"], r["content"]) for r in messages(store, SESSION)]
    assert len(said) == 8 and said[-1] == ("user", "thanks")
