"""Known gaps of earlier rounds, each closed with a test that failed on the code before it.

1. ``~`` in a ``sqlite:///`` URL is the user's home (``--database-url``, the variable,
   ``store.database_url`` and ``migrate --to``), as ``--home ~/x`` and ``$HERMES_HOME`` are;
   before, ``sqlite:///~/x.db`` was a folder named ``~`` under the working directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.home import Home


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    """A private ``$HOME`` and a working directory apart from it."""
    folder = tmp_path / "user"
    folder.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.chdir(work)
    return folder


def _facts_add(home: Home, *head: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, ["--home", str(home.root), *head, "facts", "add", "Ana likes tea"], env=env)


@pytest.mark.parametrize("form", ["option", "variable", "config"])
def test_tilde_in_a_sqlite_url_is_the_users_home(home, user_home, form):
    url = "sqlite:///~/tilde.db"
    head: tuple[str, ...] = ()
    env = None
    if form == "option":
        head = ("--database-url", url)
    elif form == "variable":
        env = {"HERMES_STORE_DATABASE_URL": url}
    else:
        home.config_path.write_text(f"store:\n  database_url: '{url}'\n", encoding="utf-8")
    result = _facts_add(home, *head, env=env)
    assert result.exit_code == 0, result.output
    assert (user_home / "tilde.db").is_file()
    assert not (home.root / "~").exists() and not any(p.name == "~" for p in user_home.parent.rglob("~"))
    status = CliRunner().invoke(cli, ["--home", str(home.root), *head, "status"], env=env)
    assert str(user_home / "tilde.db") in status.output


def test_tilde_user_and_a_literal_tilde_folder(home, user_home):
    import getpass
    import os

    me = getpass.getuser()
    assert Home(home.root, database_url=f"sqlite:///~{me}/x.db").sqlite_path == \
        Path(os.path.expanduser(f"~{me}")) / "x.db"
    # a folder really named "~" is still reachable, written as ./~
    assert Home(home.root, database_url="sqlite:///./~/x.db").sqlite_path == Path.cwd() / "~" / "x.db"


def test_tilde_of_an_unknown_user_is_refused_naming_it(home, user_home):
    result = _facts_add(home, "--database-url", "sqlite:///~no_such_user_zz/x.db")
    assert result.exit_code == 2
    assert "'~no_such_user_zz' names no home" in result.stderr and "sqlite:///./~no_such_user_zz/x.db" in result.stderr
    assert not (Path.cwd() / "~no_such_user_zz").exists()


def test_migrate_to_a_tilde_url(home, user_home, pg_store_url):
    env = {"HERMES_STORE_DATABASE_URL": pg_store_url}
    assert _facts_add(home, env=env).exit_code == 0
    result = CliRunner().invoke(cli, ["--home", str(home.root), "migrate", "--to", "sqlite:///~/copy.db"], env=env)
    assert result.exit_code == 0, result.output
    assert (user_home / "copy.db").is_file() and not (Path.cwd() / "~").exists()
