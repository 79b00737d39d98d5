"""Fixtures for the session-index tests: the six-format fixture tree and a Hermes state.db."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from sess_helpers import FIXTURES

from hermes_store.cli import cli
from hermes_store.db import Database

# the original six-format tree; the per-format directories added since have their own tests
CORE = ("hermes_home", "claude", "codex", "openai", "hermes_state.sql")


@pytest.fixture
def fixtures(tmp_path) -> Path:
    """A private copy of the six-format fixture tree (tests may append to or rewrite files)."""
    target = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, target, ignore=lambda folder, names: (
        [n for n in names if n not in CORE] if Path(folder) == FIXTURES else []))
    return target


@pytest.fixture
def format_fixtures(tmp_path) -> Path:
    """A private copy of the whole fixture tree, every per-format directory included."""
    target = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, target)
    return target


@pytest.fixture
def state_db(tmp_path) -> Path:
    """A small Hermes ``state.db`` built from fixtures/hermes_state.sql."""
    path = tmp_path / "hermes" / "state.db"
    path.parent.mkdir()
    db = Database(path, migrate=False)
    db.execute((FIXTURES / "hermes_state.sql").read_text(encoding="utf-8"))
    db.close()
    return path


@pytest.fixture
def store(home):
    """The home's store database (closed after the test)."""
    db = home.open_db()
    yield db
    db.close()


@pytest.fixture
def engine_store(home, engine):
    """The home's store database on each engine in turn (closed after the test): modules whose
    tests hold for every engine use it as their ``store``."""
    db = home.open_db()
    yield db
    db.close()


@pytest.fixture
def run(home):
    """Invoke ``hermes-store --home <home> ARGS...``; returns the click Result."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(cli, ["--home", str(home.root), *map(str, args)], input=input,
                             catch_exceptions=False)

    return invoke
