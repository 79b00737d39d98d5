"""Kimi CLI's ``/clear`` and checkpoint reverts rotate ``context.jsonl``: the whole file is renamed
``context_<n>.jsonl`` (``kimi_cli.utils.path.next_available_rotation``) and the live file starts
again. Before, re-indexing the session dropped the cleared turns from it (the live file was re-read
whole) and the rotated file became an unrelated session named ``context_1``."""

from __future__ import annotations

import json
from pathlib import Path

from format_helpers import index, messages, session

SID = "3f2e1d0c-aaaa-4bbb-8ccc-123456789abc"


def _write(path: Path, lines: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines), encoding="utf-8")


def _said(store, sid: str) -> list[tuple[str, str]]:
    return [(r["role"], r["content"]) for r in messages(store, sid)]


def test_cleared_turns_stay_indexed_in_a_rotated_child_session(store, tmp_path):
    home = tmp_path / ".kimi"
    folder = home / "sessions" / "0a1b2c3d4e5f60718293a4b5c6d7e8f9" / SID
    first = [{"role": "_system_prompt", "content": "You are Kimi CLI."}, {"role": "_checkpoint", "id": 0},
             {"role": "user", "content": "when is high tide at the north pier"},
             {"role": "assistant", "content": [{"type": "think", "think": "look it up"},
                                               {"type": "text", "text": "High tide is at six."}]},
             {"role": "_usage", "token_count": 812}]
    _write(folder / "context.jsonl", first)
    assert index(store, home)["errors"] == []
    assert _said(store, SID) == [("user", "when is high tide at the north pier"), ("reasoning", "look it up"),
                                 ("assistant", "High tide is at six.")]
    # /clear: the whole file is rotated away and the live file starts again
    (folder / "context.jsonl").rename(folder / "context_1.jsonl")
    _write(folder / "context.jsonl", [{"role": "_system_prompt", "content": "You are Kimi CLI."},
                                      {"role": "_checkpoint", "id": 0},
                                      {"role": "user", "content": "chart the reef soundings"},
                                      {"role": "assistant", "content": "Reef at two metres."}])
    assert index(store, home)["errors"] == []
    assert _said(store, SID) == [("user", "chart the reef soundings"), ("assistant", "Reef at two metres.")]
    child = f"{SID}:rotated-1"
    assert _said(store, child) == [("user", "when is high tide at the north pier"), ("reasoning", "look it up"),
                                   ("assistant", "High tide is at six.")]
    assert session(store, child)["parent_session_id"] == SID
    assert session(store, child)["source"] == "kimi-cli"


def test_a_rotated_legacy_flat_file_is_a_child_of_its_session(store, tmp_path):
    folder = tmp_path / ".kimi" / "sessions" / "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
    _write(folder / f"{SID}.jsonl", [{"role": "_checkpoint", "id": 0}, {"role": "user", "content": "now"}])
    _write(folder / f"{SID}_2.jsonl", [{"role": "_checkpoint", "id": 0}, {"role": "user", "content": "before"}])
    assert index(store, folder / f"{SID}_2.jsonl")["errors"] == []
    assert _said(store, f"{SID}:rotated-2") == [("user", "before")]
    assert session(store, f"{SID}:rotated-2")["parent_session_id"] == SID
