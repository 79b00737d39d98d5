"""Shared fixtures: a fresh temporary Hermes home per test."""

from __future__ import annotations

import pytest
from pg_server import pg_server, pg_url, pytest_terminal_summary  # noqa: F401  (PostgreSQL fixtures)

from hermes_store.home import Home


@pytest.fixture
def home(tmp_path, monkeypatch) -> Home:
    """A private, empty Hermes home; HERMES_HOME points at it for the test's duration."""
    root = tmp_path / "hermes_home"
    root.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(root))
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    return Home(root).ensure()


ENGINES = ("sqlite", "postgresql")


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch, home) -> str:
    """Each storage engine in turn; for ``postgresql`` every Home (the ``home`` fixture's, the
    CLI's, a tool's) opens a fresh database on the test server through
    ``$HERMES_STORE_DATABASE_URL``, so the same test runs against both engines."""
    if request.param == "postgresql":
        monkeypatch.setenv("HERMES_STORE_DATABASE_URL", request.getfixturevalue("pg_url"))
    return request.param
