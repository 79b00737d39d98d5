"""sessions sources / formats / index --discover over a fake $HOME."""

from __future__ import annotations

import json
import shutil

import pytest
from sess_helpers import FIXTURES

from hermes_store.sessions.importers import IMPORTERS


@pytest.fixture
def fake_home(tmp_path, monkeypatch, home):
    root = tmp_path / "user"
    shutil.copytree(FIXTURES / "claude_code" / "projects", root / ".claude" / "projects")
    shutil.copytree(FIXTURES / "codex_rollouts" / "sessions", root / ".codex" / "sessions")
    sessions = home.root / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "hermes_home" / "sessions" / "20260105_101500_a1b2c3.jsonl", sessions)
    monkeypatch.setenv("HOME", str(root))
    return root


def _sources(run):
    result = run("sessions", "sources", "--json")
    assert result.exit_code == 0
    return {(row["format"], row["pattern"]): row for row in json.loads(result.stdout)}


def test_sources_lists_every_location_and_what_is_indexed(run, fake_home):
    rows = _sources(run)
    declared = {(name, p) for name, cls in IMPORTERS.items() for p in cls.default_locations.get("linux", ())}
    assert declared <= set(rows)
    claude = rows[("claude-code", "~/.claude/projects/*/*.jsonl")]
    assert claude["exists"] and claude["files"] == 4 and claude["indexed_files"] == 0
    assert rows[("claude-code", "~/.claude/projects/*/*/subagents/*.jsonl")]["files"] == 1
    assert rows[("codex", "~/.codex/sessions/**/rollout-*.jsonl")]["files"] == 2
    assert rows[("hermes-jsonl", "{hermes_home}/sessions/*.jsonl")]["files"] == 1
    assert not rows[("hermes-db", "{hermes_home}/state.db")]["exists"]
    assert not rows[("claude-code", "~/.config/claude/projects/*/*.jsonl")]["exists"]

    result = run("sessions", "index", "--discover", "--json")
    summary = json.loads(result.stdout)
    assert result.exit_code == 0 and summary["files"] == 8
    assert summary["messages_added"] == 20 + 18 + 7

    rows = _sources(run)
    claude = rows[("claude-code", "~/.claude/projects/*/*.jsonl")]
    assert claude["indexed_files"] == 4 and claude["sessions"] == 3 and claude["messages"] == 15
    assert rows[("codex", "~/.codex/sessions/**/rollout-*.jsonl")]["sessions"] == 2
    text = run("sessions", "sources").stdout
    assert "Claude Code" in text and "4 files, 4 indexed" in text


def test_discover_adds_the_paths_given(run, fake_home, tmp_path):
    extra = tmp_path / "extra.jsonl"
    extra.write_text('{"session_id": "x1", "role": "user", "content": "given on the command line"}\n')
    summary = json.loads(run("sessions", "index", "--discover", "--json", str(extra)).stdout)
    assert summary["files"] == 9


def test_index_needs_paths_or_discover(run):
    result = run("sessions", "index")
    assert result.exit_code == 2 and "--discover" in result.output


def test_formats_lists_bundled_importers(run):
    data = json.loads(run("sessions", "formats", "--json").stdout)
    names = [row["name"] for row in data["formats"]]
    assert names == list(IMPORTERS) and data["problems"] == []
    claude = next(row for row in data["formats"] if row["name"] == "claude-code")
    assert claude["agent"] == "Claude Code" and claude["origin"] == "bundled"
    assert "~/.claude/projects/*/*.jsonl" in claude["default_locations"]["linux"]
    assert "Claude Code" in run("sessions", "formats").stdout


def test_discover_finds_the_cline_cli_task_folders(run, tmp_path, monkeypatch, home):
    """The Cline CLI keeps its task folders in ~/.cline/data/tasks/<id>/ (the extension's files):
    a default location (before, only the editors' globalStorage folders were)."""
    root = tmp_path / "user"
    source = next((FIXTURES / "cline").rglob("saoudrizwan.claude-dev/tasks"))
    task = next(p for p in sorted(source.iterdir()) if (p / "api_conversation_history.json").is_file())
    shutil.copytree(task, root / ".cline" / "data" / "tasks" / task.name)
    monkeypatch.setenv("HOME", str(root))
    rows = _sources(run)
    assert rows[("cline", "~/.cline/data/tasks/*/api_conversation_history.json")]["files"] == 1
    summary = json.loads(run("sessions", "index", "--discover", "--json").stdout)
    assert summary["errors"] == [] and summary["messages_added"] > 0
