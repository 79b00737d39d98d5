"""The store named every way (home, ``--database-url``, ``$HERMES_STORE_DATABASE_URL``,
``store.database_url``) on both engines: each command reads and writes exactly that store, and
the same command behaves the same on both engines (docs/store.md)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli


def _run(home, *argv: str):
    return CliRunner().invoke(cli, ["--home", str(home.root), *argv])


def test_backup_into_a_missing_directory_is_refused_alike_on_both_engines(home, engine, tmp_path):
    """A backup into ``missing/dir/`` failed on SQLite but created the directories on
    PostgreSQL: the same command now fails the same way on both, creating nothing."""
    assert _run(home, "facts", "add", "kept in the backup").exit_code == 0
    dest = tmp_path / "missing" / "dir" / "store.bak"
    result = _run(home, "backup", str(dest))
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Error: {dest}: cannot write the backup: no directory {dest.parent}\n"
    assert not (tmp_path / "missing").exists()


def test_migrate_without_a_store_creates_none(home, tmp_path, pg_url):
    """``migrate --to URL`` on a home with no store yet created ``<home>/hermes_store.db`` (and a
    migrated, empty target) and said "Done: 0 rows"; like ``backup``, it now says there is nothing
    to copy and creates nothing."""
    from hermes_store.pgdb import PgDatabase

    result = _run(home, "migrate", "--to", pg_url)
    assert result.exit_code == 1, result.output
    assert result.stderr == (f"Error: {home.db_path}: no store to migrate yet (nothing was created there); "
                             "nothing was copied\n")
    assert not home.db_path.exists()
    with PgDatabase(pg_url, migrate=False) as target:
        assert not target.table_exists("sessions")


def _transcript(folder, word: str):
    path = folder / "s.jsonl"
    path.write_text(json.dumps({"type": "user", "sessionId": "hook-s", "uuid": "u1",
                                "timestamp": "2026-11-03T10:00:00Z",
                                "message": {"role": "user", "content": f"index me, {word}"}}) + "\n")
    return path


@pytest.mark.parametrize("naming", ["option", "environment"])
def test_the_claude_code_hook_indexes_into_the_store_named_at_install(home, tmp_path, monkeypatch, naming):
    """The hook's command named only ``--home``: installed with ``--database-url`` or
    ``$HERMES_STORE_DATABASE_URL``, it indexed every session into ``<home>/hermes_store.db`` (Claude
    Code runs it with its own environment and working directory). A relative ``sqlite:///`` URL is
    pinned to the file it named at install."""
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    work = tmp_path / "work"
    (work / "stores").mkdir(parents=True)  # a URL's folder must exist (it is never made)
    monkeypatch.chdir(work)
    url = "sqlite:///stores/named.db"
    argv = ["--database-url", url] if naming == "option" else []
    if naming == "environment":
        monkeypatch.setenv("HERMES_STORE_DATABASE_URL", url)
    result = CliRunner().invoke(cli, ["--home", str(home.root), *argv, "hooks", "install", "claude-code"])
    assert result.exit_code == 0, result.output
    command = json.loads((user / ".claude" / "settings.json").read_text())["hooks"]["SessionEnd"][0]["hooks"][0]
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)  # Claude Code's environment
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    event = {"session_id": "hook-s", "transcript_path": str(_transcript(tmp_path, "capybara"))}
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    ran = subprocess.run(shlex.split(command["command"]), input=json.dumps(event), text=True, capture_output=True,
                         cwd=elsewhere, env=env, timeout=120)
    assert ran.returncode == 0, ran.stderr
    named = work / "stores" / "named.db"
    assert named.is_file() and not home.db_path.exists() and not (elsewhere / "stores").exists()
    found = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", f"sqlite:///{named}",
                                     "sessions", "search", "capybara", "--json"])
    assert [r["session_id"] for r in json.loads(found.stdout)["results"]] == ["hook-s"]


@pytest.mark.parametrize("platform", ["linux", "macos"])
def test_the_watch_service_is_given_the_store_named_at_install(home, tmp_path, monkeypatch, platform):
    """The service's environment held only ``HERMES_HOME``: installed with ``--database-url`` (or
    the variable), ``sessions watch`` indexed into ``<home>/hermes_store.db``. Its file may now
    hold a password, so it is private."""
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", "sqlite:///rel.db",
                                      "service", "--platform", platform, "install", "--no-start"])
    assert result.exit_code == 0, result.output
    written = next(p for p in user.rglob("*") if p.is_file())
    text = written.read_text()
    pinned = f"sqlite:///{tmp_path / 'rel.db'}"
    if platform == "linux":
        assert f'Environment="HERMES_STORE_DATABASE_URL={pinned}"' in text
    else:
        assert f"<key>HERMES_STORE_DATABASE_URL</key>\n        <string>{pinned}</string>" in text
    assert written.stat().st_mode & 0o077 == 0
    plain = CliRunner().invoke(cli, ["--home", str(home.root), "service", "--platform", platform, "status",
                                     "--json"])
    assert json.loads(plain.stdout)["current"] is False  # installed for another store than the home's own


def test_hermes_install_refuses_a_store_the_plugin_will_not_open(home, tmp_path):
    """``--database-url X hermes install --from-holographic`` imported the holographic facts into
    ``<home>/hermes_store.db`` (the command built a Home without the option) while saying nothing
    of X, and Hermes, which never sees this command line, would open the home's own store anyway:
    refused now, naming both stores and where to name X, with nothing written."""
    other = tmp_path / "other.db"
    result = _run(home, "--database-url", f"sqlite:///{other}", "hermes", "install", "--from-holographic")
    assert result.exit_code == 1, result.output
    assert result.stderr == (f"Error: --database-url names {other}, but Hermes loads the plugin with {home.root}'s "
                             f"own store, {home.db_path}: name the store in {home.config_path} "
                             "(store.database_url) or in $HERMES_STORE_DATABASE_URL of Hermes' environment "
                             "instead; nothing was installed\n")
    assert not (home.root / "plugins").exists() and not home.db_path.exists() and not other.exists()
    home.config_path.write_text(f"store:\n  database_url: sqlite:///{other}\n", encoding="utf-8")
    agreed = _run(home, "--database-url", f"sqlite:///{other}", "hermes", "install")
    assert agreed.exit_code == 0, agreed.output
    assert (home.root / "plugins" / "hermes_store" / "plugin.yaml").is_file()


@pytest.mark.parametrize("naming", ["environment", "config"])
def test_the_hermes_plugin_names_a_store_outside_the_home_for_backup(home, tmp_path, monkeypatch, naming):
    """``backup_paths()`` (what a Hermes backup adds to the home) was always empty: a store named
    ``sqlite:///`` outside the home was left out of Hermes' backups."""
    from hermes_store.hermes_plugin import make_provider

    other = tmp_path / "stores" / "shared.db"
    url = f"sqlite:///{other}"
    if naming == "environment":
        monkeypatch.setenv("HERMES_STORE_DATABASE_URL", url)
    else:
        home.config_path.write_text(f"store:\n  database_url: {url}\n", encoding="utf-8")
    provider = make_provider()
    provider.initialize("s1", hermes_home=str(home.root), platform="cli")
    try:
        assert provider.backup_paths() == [str(other)]
        home.config_path.write_text("", encoding="utf-8")
        monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
        assert provider.backup_paths() == []  # the home's own file goes with the home
    finally:
        provider.shutdown()


def test_a_relative_url_in_config_yaml_is_the_same_store_from_every_directory(home, tmp_path, monkeypatch):
    """``store.database_url: sqlite:///stores/shared.db`` in config.yaml was relative to the
    working directory: each program started elsewhere (Hermes, an MCP client, the service, the
    user in another folder) silently made and used a store of its own there. It is the home's."""
    home.config_path.write_text("store:\n  database_url: sqlite:///stores/shared.db\n", encoding="utf-8")
    (home.root / "stores").mkdir()
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    assert _run(home, "facts", "add", "the deploy runs on fridays").exit_code == 0
    monkeypatch.chdir(second)
    found = _run(home, "facts", "search", "deploy", "--json")
    assert found.exit_code == 0, found.output
    assert [f["content"] for f in json.loads(found.stdout)["results"]] == ["the deploy runs on fridays"]
    status = json.loads(_run(home, "status", "--json").stdout)
    assert status["database"]["path"] == str(home.root / "stores" / "shared.db")
    assert (home.root / "stores" / "shared.db").is_file()
    assert list(first.iterdir()) == [] and list(second.iterdir()) == [] and not home.db_path.exists()


def test_doctor_names_the_store_it_checked(home, engine, tmp_path, monkeypatch):
    """doctor's report said which checks passed but never of which store (status did): with
    the store named by a variable or config.yaml, nothing showed which one was looked at."""
    if engine == "sqlite":
        monkeypatch.setenv("HERMES_STORE_DATABASE_URL", f"sqlite:///{tmp_path / 'other.db'}")
    assert _run(home, "facts", "add", "doctor needs something to check").exit_code == 0
    where = home.store_location()
    text = _run(home, "doctor")
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines()[0] == f"store  {where} ({engine})"
    report = json.loads(_run(home, "doctor", "--json").stdout)
    assert report["ok"] and report["store"] == {"engine": engine, "location": where}
    assert not home.db_path.exists()


@pytest.mark.parametrize("fix", [False, True])
def test_doctor_on_an_empty_postgresql_database_says_no_store_and_creates_none(home, pg_url, fix):
    """On a database with nothing in it doctor reported ``FAIL schema: schema version 0 ... missing
    (run doctor --fix)``, then opened the store, which created the whole schema, and exited 1 (the
    next run said all was well). Like an absent SQLite file: no store there yet, nothing created."""
    from hermes_store.pgdb import PgDatabase, mask_url

    result = _run(home, "--database-url", pg_url, "doctor", *(["--fix"] if fix else []))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:] == [
        f"ok     store: no store at {mask_url(pg_url)} yet (it is created by the first write)"]
    with PgDatabase(pg_url, migrate=False) as db:
        assert not db.table_exists("hermes_store_migrations") and not db.table_exists("sessions")


def test_an_export_into_a_missing_directory_names_the_file_asked_for(home, tmp_path):
    """``facts export missing/f.jsonl`` said ``[Errno 2] No such file or directory:
    'missing/.f.jsonl.ce5j8qua.tmp'``: a temp file the user never named."""
    assert _run(home, "facts", "add", "exported fact").exit_code == 0
    dest = tmp_path / "missing" / "f.jsonl"
    result = _run(home, "facts", "export", str(dest))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {dest}: cannot write it: no directory {dest.parent}\n"
    assert not dest.parent.exists()


def test_restore_from_the_store_itself_is_refused(home, tmp_path, monkeypatch):
    """``--database-url sqlite:///rel.db restore rel.db`` said "restored ... from rel.db" (exit 0)
    and left a ``before-restore`` copy each time: the store named as its own backup, as ``backup``
    already refuses for its destination."""
    monkeypatch.chdir(tmp_path)
    argv = ["--database-url", "sqlite:///rel.db"]
    assert _run(home, *argv, "facts", "add", "kept as it is").exit_code == 0
    result = _run(home, *argv, "restore", "rel.db")
    assert result.exit_code == 1, result.output
    assert result.stderr == "Error: rel.db: that is the store itself; name a backup file to restore\n"
    assert not any(".before-restore-" in p.name for p in tmp_path.iterdir())


READS = [
    ("status",), ("sessions", "list"), ("sessions", "search", "anything"), ("recall", "anything", "--json"),
    ("facts", "list"), ("memory", "history"), ("tool", "session_search", '{"query": "anything"}'),
    ("tool", "fact_store", '{"action": "search", "query": "anything"}'),
]


def test_reads_of_an_empty_postgresql_database_create_nothing_and_answer_as_sqlite(home, pg_url, tmp_path):
    """Every read command against an empty PostgreSQL database created the whole schema (18
    tables), and ``recall --json`` listed other kinds as searched than on a fresh SQLite home.
    Now a read creates nothing on either engine and answers the same; the first write creates
    the store."""
    from hermes_store.home import Home
    from hermes_store.pgdb import PgDatabase

    fresh = Home(tmp_path / "fresh-sqlite-home").ensure()
    for argv in READS:
        on_pg = _run(home, "--database-url", pg_url, *argv)
        on_sqlite = _run(fresh, *argv)
        with PgDatabase(pg_url, migrate=False) as db:
            assert not db.table_exists("hermes_store_migrations"), argv
        assert on_pg.exit_code == on_sqlite.exit_code, (argv, on_pg.output, on_sqlite.output)
        if argv[0] == "recall":
            assert json.loads(on_pg.stdout)["kinds_searched"] == json.loads(on_sqlite.stdout)["kinds_searched"]
    assert not fresh.db_path.exists()
    with PgDatabase(pg_url, migrate=False) as db:
        assert not db.table_exists("hermes_store_migrations") and not db.table_exists("sessions")
    assert _run(home, "--database-url", pg_url, "facts", "add", "the first write creates it").exit_code == 0
    found = _run(home, "--database-url", pg_url, "recall", "first write", "--json")
    assert found.exit_code == 0 and "first write" in found.stdout


def test_restoring_the_same_backup_twice_is_no_change(home, engine, tmp_path):
    """A restore brought the backup's own stamp and fingerprint into the store (PostgreSQL) and
    made its file newer than the backup (SQLite), so restoring the same backup again, with
    nothing written in between, was refused as "changed after the backup was taken" on both
    engines. Refused it still is once something was written."""
    assert _run(home, "facts", "add", "kept in the backup").exit_code == 0
    dest = tmp_path / "b.db"
    assert _run(home, "backup", str(dest)).exit_code == 0
    for _ in range(2):
        again = _run(home, "restore", str(dest))
        assert again.exit_code == 0, again.output
    assert _run(home, "facts", "add", "written after the restore").exit_code == 0
    refused = _run(home, "restore", str(dest))
    assert refused.exit_code == 1 and "pass --force" in refused.stderr, refused.output


@pytest.mark.parametrize(("url", "warned"), [("postgresql://hermes:s3cret@db.invalid/hermes", True),
                                             ("postgresql://hermes@db.invalid/hermes", False)])
def test_a_hook_given_a_password_says_so(home, tmp_path, monkeypatch, url, warned):
    """Installed with a ``--database-url`` holding a password, the hook's command carried it into
    ``~/.claude/settings.json`` without a word: the install now warns (the URL without one: no
    warning), and says how to keep it out."""
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", url, "hooks", "install", "claude-code"])
    assert result.exit_code == 0, result.output
    assert url in (user / ".claude" / "settings.json").read_text()  # the hook needs it: Claude Code has no env of ours
    assert ("warning: the hook's command" in result.stderr) is warned, result.stderr
    assert "s3cret" not in result.stderr and "s3cret" not in result.stdout


def test_status_gives_the_stores_size_on_both_engines(home, engine):
    """`status` showed a SQLite store's size ('Database:   262,144 bytes') but none for a
    PostgreSQL one ('Database:   PostgreSQL', `size_bytes: null`): both now say it."""
    assert _run(home, "facts", "add", "a fact to size").exit_code == 0
    result = _run(home, "status", "--json")
    assert result.exit_code == 0, result.output
    size = json.loads(result.output)["database"]["size_bytes"]
    assert isinstance(size, int) and size > 0
    line = next(line for line in _run(home, "status").output.splitlines() if "Database:" in line)
    assert f"{size:,} bytes" in line, line


def test_backup_without_a_store_is_refused_alike_on_both_engines(home, tmp_path, pg_url, monkeypatch):
    """On SQLite `backup` of a home with no store says 'no database to back up' (exit 1); on an
    empty PostgreSQL database it migrated a whole store there and wrote a backup of nothing."""
    from hermes_store.pgdb import SCHEMA_HOLDS_ANYTHING, PgDatabase

    dest = tmp_path / "store.bak"
    sqlite = _run(home, "backup", str(dest))
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", pg_url)
    pg = _run(home, "backup", str(dest))
    assert sqlite.exit_code == pg.exit_code == 1, (sqlite.output, pg.output)
    assert sqlite.stderr == f"Error: {home.db_path}: no database to back up\n"
    assert pg.stderr.startswith("Error: postgresql://") and pg.stderr.endswith(": no database to back up\n")
    assert not dest.exists() and not home.db_path.exists()
    with PgDatabase(pg_url, migrate=False) as db:
        assert db.scalar(SCHEMA_HOLDS_ANYTHING) is False


def test_the_hook_opens_the_database_libpq_found_in_the_environment(home, tmp_path, monkeypatch, pg_url):
    """``PGHOST=... PGDATABASE=... hermes-store --database-url postgresql:// hooks install`` wrote
    the hook's command with ``postgresql://`` alone: run by Claude Code, without those variables,
    it went to the default server and database (another store, or none). What the environment
    adds is now written into the URL the hook (and the service) is given; the password never is."""
    from psycopg.conninfo import conninfo_to_dict

    from hermes_store.pgdb import PgDatabase

    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    named = conninfo_to_dict(pg_url)
    for key, variable in (("host", "PGHOST"), ("port", "PGPORT"), ("dbname", "PGDATABASE"), ("user", "PGUSER")):
        monkeypatch.setenv(variable, named[key])
    monkeypatch.setenv("PGPASSWORD", "s3cret")
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", "postgresql://",
                                      "hooks", "install", "claude-code"])
    assert result.exit_code == 0, result.output
    command = json.loads((user / ".claude" / "settings.json").read_text())["hooks"]["SessionEnd"][0]["hooks"][0]
    assert "s3cret" not in command["command"]
    event = {"session_id": "hook-s", "transcript_path": str(_transcript(tmp_path, "capybara"))}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES", "PG"))}  # Claude Code's
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    ran = subprocess.run(shlex.split(command["command"]), input=json.dumps(event), text=True, capture_output=True,
                         cwd=tmp_path, env=env, timeout=120)
    assert ran.returncode == 0, ran.stderr
    with PgDatabase(pg_url, migrate=False) as db:
        assert [r["id"] for r in db.query("SELECT id FROM sessions")] == ["hook-s"]
    assert not home.db_path.exists()


def test_a_search_path_naming_no_schema_is_refused_by_name(home, pg_url):
    """``...?options=-csearch_path%3Dhremes`` (a typo) made every first write fail with the server's
    ``no schema has been selected to create in`` and a ``LINE 1: CREATE TABLE ...`` second line,
    naming neither the URL nor the schema: now one line naming both; nothing is created."""
    from hermes_store.pgdb import PgDatabase, mask_url

    url = pg_url + "&options=-csearch_path%3Dhremes"
    result = _run(home, "--database-url", url, "facts", "add", "the deploy runs on fridays")
    assert result.exit_code == 1, result.output
    assert result.stderr == (f"Error: {mask_url(url)}: no schema of its search_path (hremes) exists, so the store "
                             "has nowhere to go (create it first: CREATE SCHEMA name; or name an existing one); "
                             "nothing was created\n")
    with PgDatabase(pg_url, migrate=False) as db:
        assert not db.table_exists("hermes_store_migrations")
        assert db.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = 'hremes'") == 0


def test_databases_chosen_by_the_libpq_environment_are_two_places(home, monkeypatch, pg_server):
    """With ``--database-url postgresql://`` and ``PGDATABASE`` choosing the database, status said
    ``postgresql:///`` whichever it was, and the vectors' cache file (named after that location)
    was one file for every such database: a search in one read the other's cached vectors. The
    location now says what the environment chose."""
    from psycopg.conninfo import conninfo_to_dict

    from hermes_store.home import Home
    from hermes_store.sessions.storage_vectors import VectorStore

    named = conninfo_to_dict(pg_server.url())
    for key, variable in (("host", "PGHOST"), ("port", "PGPORT"), ("user", "PGUSER")):
        monkeypatch.setenv(variable, named[key])
    places, caches = [], []
    databases = ("libpq_env_first", "libpq_env_second")
    for database in databases:
        pg_server.create_database(database)
        monkeypatch.setenv("PGDATABASE", database)
        status = _run(home, "--database-url", "postgresql://", "status", "--json")
        pg_server.drop_database(database)
        assert status.exit_code == 0, status.output
        places.append(json.loads(status.stdout)["database"]["url"])
        caches.append(VectorStore.for_home(Home(home.root, database_url="postgresql://")).cache_path("m"))
    assert [f"dbname={d}" in p for p, d in zip(places, databases, strict=True)] == [True, True], places
    assert caches[0] != caches[1]
