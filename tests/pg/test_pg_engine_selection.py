"""Which database a home uses: --database-url, $HERMES_STORE_DATABASE_URL, store.database_url."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.db import Database
from hermes_store.home import ConfigError, Home
from hermes_store.pgdb import PgDatabase


def test_no_url_keeps_the_home_sqlite_file(home):
    assert home.database_url() is None and home.engine == "sqlite"
    with home.open_db() as db:
        assert isinstance(db, Database) and db.path == home.db_path


def test_precedence_cli_then_env_then_config(home, monkeypatch):
    home.config_path.write_text("store:\n  database_url: postgresql://cfg@db/x\n")
    assert Home(home.root).database_url() == "postgresql://cfg@db/x"
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", "postgresql://env@db/x")
    assert Home(home.root).database_url() == "postgresql://env@db/x"
    assert Home(home.root, database_url="postgresql://cli@db/x").database_url() == "postgresql://cli@db/x"
    assert Home(home.root).engine == "postgresql"


def test_store_exists_per_engine(home, tmp_path):
    assert not home.store_exists()
    home.open_db().close()
    assert home.store_exists()
    assert not Home(home.root, database_url=f"sqlite:///{tmp_path}/other.db").store_exists()
    assert Home(home.root, database_url="postgresql://u@db/x").store_exists()


def test_sqlite_url_names_another_file(home, tmp_path):
    target = tmp_path / "elsewhere" / "store.db"
    target.parent.mkdir()  # a URL's folder must exist (it is never made)
    chosen = Home(home.root, database_url=f"sqlite:///{target}")
    assert chosen.engine == "sqlite"
    with chosen.open_db() as db:
        assert db.path == target and target.exists()


@pytest.mark.parametrize(("config", "message"), [
    ("store: [1]\n", "store: expected a mapping"),
    ("store:\n  database_url: 5\n", "store.database_url: expected a string URL"),
    ("store:\n  database_url: mysql://u:pw@h/d\n", "unsupported scheme in 'mysql:'"),
])
def test_bad_config_names_the_field(home, config, message):
    home.config_path.write_text(config)
    with pytest.raises(ConfigError, match=message) as caught:
        Home(home.root).engine  # noqa: B018
    assert "pw" not in str(caught.value)


def test_postgres_url_opens_the_server(home, pg_url):
    chosen = Home(home.root, database_url=pg_url)
    with chosen.open_db() as db:
        assert isinstance(db, PgDatabase) and db.engine == "postgresql"
        assert db.writer.endswith(str(home.root))


def test_status_shows_the_url_masked(home):
    url = "postgresql://alice:t0p-secret@db.internal:5432/shared"
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", url, "status"])
    assert result.exit_code == 0, result.output
    assert "t0p-secret" not in result.output
    assert "PostgreSQL  (postgresql://alice:***@db.internal:5432/shared)" in result.output
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", url, "status", "--json"])
    data = json.loads(result.output)
    assert data["database"]["engine"] == "postgresql"
    assert data["database"]["url"] == "postgresql://alice:***@db.internal:5432/shared"
    assert "t0p-secret" not in result.output


def test_status_json_names_the_sqlite_engine(home):
    result = CliRunner().invoke(cli, ["--home", str(home.root), "status", "--json"])
    data = json.loads(result.output)
    assert data["database"]["engine"] == "sqlite" and data["database"]["path"] == str(home.db_path)
