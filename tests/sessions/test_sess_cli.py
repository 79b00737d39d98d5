"""The ``sessions`` CLI: index output, list, show, stats, delete, prune."""

from __future__ import annotations

import json

import pytest
from sess_helpers import core, index_json

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


def test_index_human_summary_without_progressbar(run, fixtures):
    result = run("sessions", "index", fixtures / "openai")
    assert result.exit_code == 0
    assert "2 files: 4 sessions and 8 messages added" in result.stdout
    assert "Indexing" not in result.output  # no progress bar when not on a terminal


def test_index_json_keys_exact(run, fixtures):
    code, summary = index_json(run, fixtures / "codex")
    assert code == 0
    assert list(summary) == ["files", "sessions_added", "messages_added", "skipped", "errors"]
    assert summary == {"files": 1, "sessions_added": 1, "messages_added": 5, "skipped": 0, "errors": []}


def test_index_forced_format(run, fixtures):
    code, summary = index_json(run, "--format", "hermes-jsonl",
                               fixtures / "hermes_home/sessions/20260105_101500_a1b2c3.jsonl")
    assert code == 0 and summary["messages_added"] == 7  # its assistant thinking a reasoning row


def test_list_show_stats(run, fixtures, state_db):
    index_json(run, *core(fixtures), state_db)
    rows = json.loads(run("sessions", "list", "--json", "--limit", "50").stdout)
    assert len(rows) == 11
    assert {"id", "origin_format", "source", "title", "model", "workspace", "started_at",
            "ended_at", "parent_session_id", "message_count", "meta"} <= set(rows[0])
    cron = json.loads(run("sessions", "list", "--json", "--source", "cron").stdout)
    assert [r["id"] for r in cron] == ["cron_nightly_20260111_020000"]
    assert len(json.loads(run("sessions", "list", "--json", "--limit", "3").stdout)) == 3
    text = run("sessions", "list").stdout
    assert "kubernetes upgrade" in text

    shown = json.loads(run("sessions", "show", "--json", "20260105_101500_a1b2c3").stdout)
    assert shown["session"]["model"] == "anthropic/claude-sonnet-4"
    assert len(shown["messages"]) == 7
    human = run("sessions", "show", "7f3c2a10").stdout  # unique prefix
    assert "Fix flaky login test" in human and "TOOL:Bash" in human
    missing = run("sessions", "show", "does-not-exist")
    assert missing.exit_code == 1 and "session not found" in missing.output

    stats = json.loads(run("sessions", "stats", "--json").stdout)
    assert stats["sessions"] == 11 and stats["messages"] == 36
    assert stats["per_source"]["telegram"]["messages"] == 7
    assert "Sessions: 11" in run("sessions", "stats").stdout


def test_delete_and_prune(run, fixtures):
    index_json(run, fixtures / "openai", fixtures / "codex")
    result = run("sessions", "delete", "support-1")
    assert result.exit_code == 0 and "2 messages" in result.stdout
    assert run("sessions", "delete", "support-1").exit_code == 1
    dry = json.loads(run("sessions", "prune", "--older-than", "1d", "--dry-run", "--json").stdout)
    # conv-a/conv-b carry no timestamps at all, so they are never considered old
    assert sorted(dry["sessions"]) == ["019a2d7a-41c4-78b1-b7cc-a45d62a89cd5", "support-2"]
    assert json.loads(run("sessions", "stats", "--json").stdout)["sessions"] == 4
    result = run("sessions", "prune", "--older-than", "1d")
    assert result.exit_code == 0 and "Deleted 2 sessions" in result.stdout
    assert json.loads(run("sessions", "stats", "--json").stdout)["sessions"] == 2
    bad = run("sessions", "prune", "--older-than", "soon")
    assert bad.exit_code == 2


def test_subcommands_listed(run):
    result = run("sessions", "--help")
    assert result.exit_code == 0
    for name in ("index", "list", "show", "stats", "delete", "prune"):
        assert name in result.stdout
