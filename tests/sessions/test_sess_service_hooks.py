"""``service`` and ``hooks`` against a temporary HOME; the real service manager is never called."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.cli import service as service_module


@pytest.fixture
def fake_home(tmp_path, monkeypatch):
    root = tmp_path / "user"
    root.mkdir()
    monkeypatch.setenv("HOME", str(root))
    return root


@pytest.fixture
def calls(monkeypatch):
    seen: list[list[str]] = []

    def runner(argv):
        seen.append(list(argv))
        return 0, ""

    monkeypatch.setattr(service_module, "run_command", runner)
    monkeypatch.setattr(service_module.shutil, "which", lambda name: f"/usr/bin/{name}")
    return seen


def _run(home, *args, stdin=None):
    return CliRunner().invoke(cli, ["--home", str(home.root), *args], input=stdin)


def test_systemd_unit_written_enabled_and_never_silently_replaced(home, fake_home, calls):
    result = _run(home, "service", "--platform", "linux", "install")
    assert result.exit_code == 0, result.output
    unit = fake_home / ".config/systemd/user/hermes-store-watch.service"
    text = unit.read_text()
    assert '"sessions" "watch" "--discover"' in text and f"HERMES_HOME={home.root}" in text
    assert ["systemctl", "--user", "enable", "--now", "hermes-store-watch.service"] in calls
    again = _run(home, "service", "--platform", "linux", "install", "--no-start")
    assert again.exit_code == 0 and "already installed" in again.output
    unit.write_text("[Service]\nExecStart=/bin/true\n")  # the user's own edit
    refused = _run(home, "service", "--platform", "linux", "install")
    assert refused.exit_code == 1 and "--force" in refused.output
    assert unit.read_text() == "[Service]\nExecStart=/bin/true\n"
    forced = _run(home, "service", "--platform", "linux", "install", "--force", "--no-start")
    assert forced.exit_code == 0 and unit.read_text() == text
    status = json.loads(_run(home, "service", "--platform", "linux", "status", "--json").output)
    assert status["installed"] and status["current"] and status["enabled"] and status["running"]
    removed = _run(home, "service", "--platform", "linux", "uninstall")
    assert removed.exit_code == 0 and not unit.exists()
    assert ["systemctl", "--user", "disable", "--now", "hermes-store-watch.service"] in calls


def test_launchd_plist_and_status_without_a_service_manager(home, fake_home, monkeypatch):
    monkeypatch.setattr(service_module.shutil, "which", lambda name: None)
    monkeypatch.setattr(service_module, "run_command", lambda argv: pytest.fail(f"ran {argv}"))
    result = _run(home, "service", "--platform", "macos", "install")
    assert result.exit_code == 0 and "launchctl not found" in result.output
    plist = fake_home / "Library/LaunchAgents/io.hermes-store.watch.plist"
    assert "<key>RunAtLoad</key>" in plist.read_text() and "<string>--discover</string>" in plist.read_text()
    status = json.loads(_run(home, "service", "--platform", "macos", "status", "--json").output)
    assert status["installed"] is True and status["enabled"] is None and "not found" in status["note"]


def test_claude_code_hook_keeps_settings_backs_up_and_is_idempotent(home, fake_home):
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = {"model": "opus", "hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye"}]}],
                                           "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}
    settings.write_text(json.dumps(original))
    assert _run(home, "hooks", "install", "claude-code").exit_code == 0
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["hooks"]["Stop"] == original["hooks"]["Stop"]
    commands = [h["command"] for g in data["hooks"]["SessionEnd"] for h in g["hooks"]]
    assert commands[0] == "echo bye" and commands[1].endswith("hooks run claude-code")
    assert json.loads((settings.parent / "settings.json.bak").read_text()) == original
    assert "already installed" in _run(home, "hooks", "install", "claude-code").output
    assert json.loads(settings.read_text()) == data
    assert _run(home, "hooks", "uninstall", "claude-code").exit_code == 0
    assert json.loads(settings.read_text()) == original


def test_a_first_install_names_no_backup_it_did_not_make(home, fake_home):
    """With no settings.json yet, `hooks install` said "(previous file kept as settings.json.bak)"
    and no such file existed; it says so only when a previous file was kept."""
    settings = fake_home / ".claude" / "settings.json"
    result = _run(home, "hooks", "install", "claude-code")
    assert result.exit_code == 0 and settings.is_file()
    assert not (settings.parent / "settings.json.bak").exists()
    assert "previous file" not in result.output and ".bak" not in result.output
    again = _run(home, "hooks", "uninstall", "claude-code")
    assert again.exit_code == 0 and (settings.parent / "settings.json.bak").is_file()
    settings.write_text("{}")
    result = _run(home, "hooks", "install", "claude-code")
    assert "(previous file kept as settings.json.bak)" in result.output


def test_hook_run_indexes_the_transcript_named_on_stdin(home, tmp_path):
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": "hook-s", "uuid": "u1",
                                      "timestamp": "2026-11-03T10:00:00Z",
                                      "message": {"role": "user", "content": "index me, capybara"}}) + "\n")
    event = {"session_id": "hook-s", "transcript_path": str(transcript), "hook_event_name": "SessionEnd",
             "reason": "prompt_input_exit", "cwd": str(tmp_path)}
    result = _run(home, "hooks", "run", "claude-code", stdin=json.dumps(event))
    assert result.exit_code == 0, result.output
    found = json.loads(_run(home, "sessions", "search", "capybara", "--json").output)
    assert [r["session_id"] for r in found["results"]] == ["hook-s"]
    assert _run(home, "hooks", "run", "claude-code", stdin="{}").exit_code == 1


def test_bad_settings_are_left_alone(home, fake_home):
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{not json")
    result = _run(home, "hooks", "install", "claude-code")
    assert result.exit_code == 1 and "settings.json" in result.output
    assert settings.read_text() == "{not json"


