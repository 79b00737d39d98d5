"""A Hermes home with real transcripts (Claude Code, Codex, Hermes JSONL), a memory entry and a fact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli

CLAUDE_ID = "5b1e9c3a-0d2f-4a7b-8c6d-1e2f3a4b5c6d"
HERMES_ID = "20260120_101500_ab12cd"


def _claude_lines() -> list[dict]:
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/ana/api", "sessionId": CLAUDE_ID,
            "version": "2.1.9"}
    return [
        {**base, "parentUuid": None, "type": "user", "uuid": "m-1", "timestamp": "2026-01-20T11:57:18.000Z",
         "message": {"role": "user", "content": "Why did the zebrafish experiment fail?"}},
        {**base, "parentUuid": "m-1", "type": "assistant", "uuid": "m-2", "timestamp": "2026-01-20T11:57:25.000Z",
         "message": {"id": "msg_a1", "type": "message", "role": "assistant", "model": "claude-opus-4-5",
                     "content": [{"type": "text", "text": "Let me read the lab notes first."},
                                 {"type": "tool_use", "id": "toolu_1", "name": "Read",
                                  "input": {"file_path": "/home/ana/lab/notes.md"}}]}},
        {**base, "parentUuid": "m-2", "type": "user", "uuid": "m-3", "timestamp": "2026-01-20T11:57:26.000Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                   "content": "incubator temperature dropped to 18C"}]}},
        {**base, "parentUuid": "m-3", "type": "assistant", "uuid": "m-4", "timestamp": "2026-01-20T11:57:40.000Z",
         "message": {"id": "msg_a2", "type": "message", "role": "assistant", "model": "claude-opus-4-5",
                     "content": [{"type": "text", "text": "The incubator got too cold overnight."}]}},
    ]


def _hermes_lines() -> list[dict]:
    lines = [{"role": "session_meta", "platform": "cli", "model": "m", "timestamp": 1768900000.0,
              "title": "Kubernetes rollout"}]
    for i in range(40):
        role = "user" if i % 2 == 0 else "assistant"
        word = "canary" if i == 30 else "rollout"
        lines.append({"role": role, "content": f"step {i}: the {word} deploy \x1b[2J[bold]x[/bold]",
                      "timestamp": 1768900000.0 + i})
    return lines


def write_jsonl(path: Path, objects: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def run_cli(home: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def tui_home(tmp_path: Path) -> Path:
    """A home with two indexed sessions (Claude Code and Hermes), one memory entry, one fact."""
    return build_home(tmp_path)


@pytest.fixture
def engine_home(engine: str, tmp_path: Path) -> Path:
    """:func:`tui_home` on each storage engine (PostgreSQL through $HERMES_STORE_DATABASE_URL)."""
    return build_home(tmp_path)


def build_home(tmp_path: Path) -> Path:
    """Index the two transcripts, add the memory entry and the fact; return the home."""
    home = tmp_path / "home"
    claude = write_jsonl(tmp_path / "src" / "claude" / f"{CLAUDE_ID}.jsonl", _claude_lines())
    hermes = write_jsonl(tmp_path / "src" / "hermes" / f"{HERMES_ID}.jsonl", _hermes_lines())
    run_cli(home, "sessions", "index", "--format", "claude-code", str(claude))
    run_cli(home, "sessions", "index", "--format", "hermes-jsonl", str(hermes))
    run_cli(home, "memory", "add", "The zebrafish lab is on the third floor.")
    run_cli(home, "facts", "add", "Zebrafish embryos need 28C incubators.")
    return home
