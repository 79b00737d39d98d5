"""A PostgreSQL server that is down never blocks or crashes: the CLI says what is wrong in one
line (password masked, no traceback), the fact provider degrades to an error reply."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.providers.holographic_store import FactStoreProvider


@pytest.fixture
def down_url(tmp_path):
    return f"postgresql://sam:hunter2@/x?host={tmp_path}&port=5999"


@pytest.mark.parametrize("command", [["sessions", "list"], ["facts", "list"], ["sessions", "search", "deploy"]])
def test_cli_names_the_problem_in_one_line(home, down_url, command):
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", down_url, *command])
    assert time.monotonic() - started < 20
    assert result.exit_code == 1, result.output
    assert "not reachable" in result.output and "No such file or directory" in result.output
    assert "hunter2" not in result.output and "Traceback" not in result.output


def test_recall_reports_the_database(home, down_url):
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", down_url, "recall", "deploy"])
    assert result.exit_code == 1  # a broken kind is reported and the exit says so (issue 14, point 15)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "database could not be searched" in result.output and "not reachable" in result.output
    assert "hunter2" not in result.output and "Traceback" not in result.output


def test_fact_provider_degrades_to_an_error_reply(home, down_url, monkeypatch):
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", down_url)
    provider = FactStoreProvider()
    provider.initialize("s1", hermes_home=str(home.root))
    started = time.monotonic()
    reply = json.loads(provider.handle_tool_call("fact_store", {"action": "list"}))
    assert time.monotonic() - started < 20
    text = json.dumps(reply)
    assert "not reachable" in text and "hunter2" not in text
    provider.shutdown()
