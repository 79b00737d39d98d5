"""Shared fixtures: a fresh temporary Hermes home per test."""

from __future__ import annotations

import signal

import pytest
from pg_server import (  # noqa: F401  (PostgreSQL fixtures)
    pg_reused_store,
    pg_server,
    pg_store_url,
    pg_url,
    pytest_terminal_summary,
)

from hermes_store.home import Home


def pytest_configure(config) -> None:
    """Ctrl-C reaches the programs the tests start, however the suite was launched: a shell
    starting it in the background without job control ignores SIGINT, and an ignored signal
    stays ignored in every child (so `sessions watch` or `browse` would never see the SIGINT a
    test sends). A handled signal is reset to its default in a child."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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
    CLI's, a tool's) opens the same database on the test server through
    ``$HERMES_STORE_DATABASE_URL``, so the same test runs against both engines. The database is
    migrated and empty at the start of each test (``pg_store_url``: reused and emptied, not
    re-created)."""
    if request.param == "postgresql":
        monkeypatch.setenv("HERMES_STORE_DATABASE_URL", request.getfixturevalue("pg_store_url"))
    return request.param
