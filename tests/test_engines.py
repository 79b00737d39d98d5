"""The one engine registry: URL schemes, storages, database classes and the typed protocol."""

from __future__ import annotations

import pytest

from hermes_store import engines
from hermes_store.builtin import storage as builtin_storage
from hermes_store.db import Database
from hermes_store.facts import storage as fact_storage
from hermes_store.home import ConfigError, Home
from hermes_store.sessions import storage as session_storage


@pytest.mark.parametrize(("url", "name"), [
    (None, "sqlite"), ("sqlite:////tmp/x.db", "sqlite"), ("SQLite:///rel.db", "sqlite"),
    ("postgresql://u@h/db", "postgresql"), ("postgres://u:secret@h/db", "postgresql"),
])
def test_a_url_chooses_its_engine(url, name):
    assert engines.engine_for_url(url).name == name


def test_an_unknown_scheme_is_named_without_the_rest_of_the_url(tmp_path):
    with pytest.raises(ValueError) as info:
        engines.engine_for_url("mysql://root:hunter2@h/db")
    assert "mysql:" in str(info.value) and "hunter2" not in str(info.value)
    with pytest.raises(ConfigError):
        _ = Home(tmp_path, database_url="mysql://root:hunter2@h/db").engine


def test_every_area_reads_its_storages_from_the_registry():
    for module, area in ((builtin_storage, "builtin"), (fact_storage, "facts"), (session_storage, "sessions")):
        assert module.STORAGE_ENGINES == engines.storage_registry(area)
        assert set(module.STORAGE_ENGINES) == set(engines.ENGINES)
    for engine in engines.ENGINES.values():
        assert set(engine.storages) == set(engines.AREAS)
        for target in engine.storages.values():
            assert isinstance(engines.load(target), type)


def test_a_third_engine_is_one_entry(monkeypatch, tmp_path):
    fake = engines.Engine(name="toy", label="Toy", url_schemes=("toy",), schema_folder="toy",
                          database="hermes_store.db:Database", errors=("hermes_store.db:DatabaseError",),
                          storages={"sessions": "hermes_store.sessions.storage_sqlite:SqliteSessionStorage"})
    monkeypatch.setitem(engines.ENGINES, "toy", fake)
    assert Home(tmp_path, database_url="toy://anything").engine == "toy"
    assert engines.storage_registry("sessions")["toy"].endswith("SqliteSessionStorage")


def test_both_database_classes_satisfy_the_protocol(tmp_path):
    from hermes_store.pgdb import PgDatabase

    with Database(tmp_path / "s.db") as db:
        assert isinstance(db, engines.StoreDatabase)
    for name in ("execute", "query", "query_one", "scalar", "portable", "write", "table_exists", "close"):
        assert hasattr(PgDatabase, name), name
    assert engines.error_classes(["sqlite"])
