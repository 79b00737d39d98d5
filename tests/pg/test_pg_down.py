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


def test_memory_writes_while_the_server_is_down_keep_their_provenance(home, tmp_path, pg_store_url,
                                                                      monkeypatch):
    """The pending queue on PostgreSQL: a write made while the server cannot be reached is saved
    to MEMORY.md, its provenance queued, and recorded with its own origin once the server is back
    (not blamed on a hand edit)."""
    from hermes_store.builtin import MemoryStore

    home.config_path.write_text(f"store:\n  database_url: '{pg_store_url}'\n")
    first = MemoryStore(home, origin="tool", session_id="s-up")
    first.load_from_disk()
    assert first.add("memory", "written while up")["success"]
    first.close()
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", f"postgresql://sam:hunter2@/x?host={tmp_path}&port=5999")
    down = MemoryStore(home, origin="tool", session_id="s-down")
    down.load_from_disk()
    assert down.add("memory", "written while down")["success"]
    assert "written while down" in home.memory_file.read_text()
    assert down.provenance.pending_path.exists() and "not reachable" in down.provenance.last_error
    assert "hunter2" not in down.provenance.last_error
    down.close()
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL")  # config.yaml's server again
    back = MemoryStore(home, origin="cli")
    back.load_from_disk()
    events = back.history()
    assert [(e["new_text"], e["origin"], e["session_id"]) for e in events] == [
        ("written while down", "tool", "s-down"), ("written while up", "tool", "s-up")]
    assert not back.provenance.pending_path.exists()
    back.close()


def test_recall_tool_answers_from_the_md_files_while_the_server_is_down(home, down_url, monkeypatch):
    """The agent's `recall` tool (and so the MCP server's) degrades as the CLI's recall does: the
    .md files still answer and the database is named in `errors` (it replied `success: false`,
    'recall failed: PgUnavailable ...', hiding MEMORY.md)."""
    from hermes_store.tools import handle_tool_call

    home.ensure()
    home.memory_file.write_text("the deploy runs on fridays", encoding="utf-8")
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", down_url)
    reply = json.loads(handle_tool_call("recall", {"query": "deploy"}, home=home))
    assert reply["success"] is True, reply
    assert [item["kind"] for item in reply["results"]] == ["memory"]
    assert "not reachable" in reply["errors"]["database"]
    assert "hunter2" not in json.dumps(reply)


def test_memory_history_fails_in_one_line_while_the_server_is_down(home, down_url):
    """The history is the store's alone: one that cannot be opened is an error (exit 1, one
    line naming it), not 'No history yet.' with exit 0 under two warnings."""
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", down_url, "memory", "history"])
    assert result.exit_code == 1, result.output
    assert "No history yet" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "not reachable" in lines[0], lines
    assert "hunter2" not in result.output


@pytest.mark.parametrize("command", [["facts", "list"], ["facts", "search", "deploy"], ["facts", "export"],
                                     ["facts", "add", "the deploy runs on fridays"]])
def test_a_fact_command_against_a_server_that_is_down_creates_nothing(tmp_path, down_url, command):
    """A command that fails creates nothing: `facts list` and `facts add` made `<home>/memories/`
    on their way to the unreachable server."""
    root = tmp_path / "fresh_home"
    root.mkdir()
    result = CliRunner().invoke(cli, ["--home", str(root), "--database-url", down_url, *command])
    assert result.exit_code == 1, result.output
    assert list(root.iterdir()) == []


def test_facts_export_of_an_empty_database_creates_no_store(tmp_path, pg_url):
    """`facts export` is a read: on a database holding no store it migrated one (18 tables), and
    on a home without a store it created hermes_store.db; it now exports nothing and creates
    nothing, as `facts list` does."""
    from hermes_store.pgdb import SCHEMA_HOLDS_ANYTHING, PgDatabase

    for url in (pg_url, None):
        root = tmp_path / f"home_{'pg' if url else 'sqlite'}"
        root.mkdir()
        result = CliRunner().invoke(cli, ["--home", str(root), *(["--database-url", url] if url else []),
                                          "facts", "export"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output.splitlines()[0])["facts"] == 0
        assert list(root.iterdir()) == []
    with PgDatabase(pg_url, migrate=False) as db:
        assert db.scalar(SCHEMA_HOLDS_ANYTHING) is False


def test_sessions_watch_outlives_a_server_restart(tmp_path):
    """A gateway's `sessions watch` ended ('Error: ... PostgreSQL unavailable: couldn't get a
    connection after 5.00 sec', exit 1) when the shared server restarted. It now says so once,
    keeps watching, and indexes what was written meanwhile when the server is back."""
    import os
    import shutil
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from pg_server import PgServer, find_bindir, unavailable_reason

    from hermes_store.pgdb import PgDatabase

    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    server = PgServer(find_bindir())  # a server of its own: this test stops it
    proc = None
    try:
        server.start()
        url = server.create_database("watched")
        sample = Path(__file__).resolve().parents[2] / "examples" / "sample_home" / "sessions"
        watched = tmp_path / "transcripts"
        watched.mkdir()
        shutil.copy(sample / "20260312_091500_3fa2c1.jsonl", watched)
        env = {**os.environ, "HERMES_HOME": str(tmp_path / "home"), "HERMES_STORE_DATABASE_URL": url}
        proc = subprocess.Popen([sys.executable, "-c", "from hermes_store.cli import main; main()",
                                 "sessions", "watch", "--poll", "--interval", "0.2", str(watched)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def sessions() -> int:
            with PgDatabase(url) as db:
                return int(db.scalar("SELECT count(*) FROM sessions"))

        def wait_for(count: int, seconds: float) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end and proc.poll() is None:
                if sessions() == count:
                    return
                time.sleep(0.2)
            pytest.fail(f"{count} sessions never came; watch: {proc.poll()} "
                        f"{proc.stderr.read() if proc.poll() is not None else ''}")

        wait_for(1, 30)
        server.pause()
        shutil.copy(sample / "20260320_101005_c0ffee.jsonl", watched)  # written while the server is down
        time.sleep(8)
        assert proc.poll() is None, proc.communicate(timeout=10)[1]  # still watching
        server.resume()
        wait_for(2, 40)
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=30)[1] if proc is not None else ""
        server.stop()
    assert proc.returncode in (0, 130), err
    assert err.count("store unavailable, retrying every 10s: ") == 1, err
    assert "store reachable again" in err and "Traceback" not in err


def test_memory_show_warns_once_while_the_server_is_down(home, down_url):
    """`memory show` on an unreachable store shows the .md entries with one warning line; the
    same error was printed twice (once for the sync, once for the read)."""
    import subprocess
    import sys

    home.memory_file.write_text("the kettle is blue", encoding="utf-8")
    result = subprocess.run([sys.executable, "-c", "from hermes_store.cli import main; main()",
                             "--home", str(home.root), "--database-url", down_url, "memory", "show"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "the kettle is blue" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "memory provenance unavailable" in line]
    assert len(warnings) == 1 and "not reachable" in warnings[0], result.stderr


@pytest.mark.parametrize("command", [
    ["sessions", "search", "deploy", "--json"], ["sessions", "list", "--json"], ["facts", "list", "--json"],
    ["facts", "search", "deploy", "--json"], ["backup", "x.db", "--json"], ["restore", "x.db", "--json"],
    ["sessions", "stats", "--json"],
])
def test_json_commands_answer_in_json_while_the_server_is_down(home, down_url, tmp_path, command):
    """docs/cli.md: a failed command given --json prints its JSON on stdout saying
    `"success": false` beside the one stderr line; these printed nothing on stdout."""
    from hermes_store.db import Database

    if command[0] == "restore":
        Database(tmp_path / "x.db").close()  # a valid (empty) store file: the server is what fails
    command = [str(tmp_path / arg) if arg == "x.db" else arg for arg in command]
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", down_url, *command])
    assert result.exit_code == 1, result.output
    reply = json.loads(result.stdout)
    assert reply["success"] is False and "not reachable" in reply["error"]
    assert result.stderr.startswith("Error: ") and len(result.stderr.splitlines()) == 1
    assert "hunter2" not in result.stdout + result.stderr
