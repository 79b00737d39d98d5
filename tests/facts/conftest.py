"""Fixtures for the fact-store tests: a store on a fresh database."""

from __future__ import annotations

import pytest

from hermes_store.db import Database
from hermes_store.facts import FactStore


@pytest.fixture
def db(tmp_path):
    database = Database(tmp_path / "facts.db")
    yield database
    database.close()


@pytest.fixture
def store(db):
    facts = FactStore(db, hrr_dim=256)
    yield facts
    facts.close()
