"""A bad store setting is a failure, not a usage error (docs/cli.md, "Exit codes").

``store.database_url`` in config.yaml (an unknown scheme, a URL libpq cannot parse, a value that
is no string) or ``$HERMES_STORE_DATABASE_URL``: every command that uses the store exits 1 with
the same one line on stderr, naming where the URL comes from (the config file and the key).
Only a bad ``--database-url``, a command-line value, is a usage error (2).
"""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli

COMMANDS = [
    ["status"],
    ["recall", "backup"],
    ["sessions", "search", "backup"],
    ["sessions", "index", "SESSIONS"],
    ["facts", "add", "Ana prefers PostgreSQL"],
    ["facts", "search", "PostgreSQL"],
    ["memory", "show"],
    ["memory", "history"],
    ["doctor"],
    ["backup", "BACKUP"],
    ["tui"],  # used to open a blank screen whose status line stayed empty, then exit 0
    ["mcp"],  # used to serve, every store tool answering the ConfigError
]
HAS_PSYCOPG = importlib.util.find_spec("psycopg") is not None
CONFIGS = [
    pytest.param("store:\n  database_url: mysql://u:pw@h/d\n", "unsupported scheme in 'mysql:'", id="scheme"),
    pytest.param("store:\n  database_url: 'postgresql://u:pw@[bad'\n", "invalid database URL", id="malformed",
                 marks=pytest.mark.skipif(not HAS_PSYCOPG, reason="psycopg parses PostgreSQL URLs")),
    pytest.param("store:\n  database_url: 'sqlite://relative.db'\n", "expected sqlite:///path", id="sqlite-no-path"),
    pytest.param("store:\n  database_url: 5\n", "expected a string URL", id="not-a-string"),
]


def _invoke(home, argv: list[str], **env: str):
    argv = [str(home.root / "sessions") if a == "SESSIONS" else str(home.root / "b.db") if a == "BACKUP" else a
            for a in argv]
    return CliRunner().invoke(cli, ["--home", str(home.root), *argv], env=env or None)


@pytest.mark.parametrize(("config", "problem"), CONFIGS)
def test_every_command_fails_with_one_line_naming_file_and_key(home, config, problem):
    home.config_path.write_text(config, encoding="utf-8")
    (home.root / "sessions").mkdir()
    expected = f"Error: {home.config_path}:2: store.database_url: "
    for argv in COMMANDS:
        result = _invoke(home, argv)
        assert result.exit_code == 1, (argv, result.output)
        lines = result.stderr.splitlines()
        assert len(lines) == 1, (argv, result.stderr)
        assert lines[0].startswith(expected) and problem in lines[0], (argv, lines[0])
        assert "pw" not in result.stderr and "Traceback" not in result.output
        if argv[0] != "doctor":  # doctor's report of the failed check is on stdout
            assert result.stdout == "", (argv, result.stdout)
    assert not (home.root / "b.db").exists()


def test_environment_url_is_named_as_such(home):
    result = _invoke(home, ["facts", "search", "x"], HERMES_STORE_DATABASE_URL="mysql://x")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: $HERMES_STORE_DATABASE_URL: unsupported scheme in 'mysql:'")


@pytest.mark.parametrize("argv", [["status"], ["sessions", "search", "x"], ["facts", "add", "x"]])
def test_bad_database_url_option_is_a_usage_error(home, argv):
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", "mysql://x", *argv])
    assert result.exit_code == 2
    assert "Invalid value for '--database-url': unsupported scheme in 'mysql:'" in result.stderr


@pytest.mark.parametrize("argv", [["doctor", "--fix"], ["status"], ["facts", "add", "x"], ["backup", "BACKUP"]])
def test_a_url_naming_a_directory_is_refused_and_the_directory_left_alone(home, tmp_path, argv):
    """``sqlite:///DIR`` used to be opened as a store: `doctor --fix` renamed the user's directory
    to ``DIR.damaged-<stamp>`` and made a fresh store in its place, `status` said "unable to open
    database file" and `backup` "disk I/O error"."""
    folder = tmp_path / "projects"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    result = _invoke(home, argv, HERMES_STORE_DATABASE_URL=f"sqlite:///{folder}")
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == (f"Error: $HERMES_STORE_DATABASE_URL: {folder}: a directory, not a store file "
                                     f"(name a file in it, e.g. sqlite:///{folder / 'hermes_store.db'})")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hermes_home", "projects"]
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
