"""Fixtures for the fact-store tests: a store on a fresh database, on each engine in turn."""

from __future__ import annotations

import pytest

from hermes_store.facts import FactStore


@pytest.fixture
def db(home, engine):
    """The home's store database (migrated, empty): the SQLite file, then a fresh database on
    the test PostgreSQL server (the ``engine`` fixture)."""
    database = home.open_db()
    yield database
    database.close()


@pytest.fixture
def store(db):
    facts = FactStore(db, hrr_dim=256)
    yield facts
    facts.close()
