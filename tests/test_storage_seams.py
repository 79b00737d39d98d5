"""The facts and built-in storage seams: factories by engine, plain interfaces, chunked IN reads."""

from __future__ import annotations

import inspect

import pytest

from hermes_store.builtin.storage import BuiltinStorage, open_builtin_storage
from hermes_store.builtin.storage_sqlite import SqliteBuiltinStorage
from hermes_store.db import Database
from hermes_store.facts import FactStore
from hermes_store.facts.storage import FactStorage, open_fact_storage
from hermes_store.facts.storage_sqlite import SqliteFactStorage


@pytest.fixture
def db(tmp_path):
    database = Database(tmp_path / "seams.db")
    yield database
    database.close()


class _OtherEngine:
    engine = "postgresql-but-not-registered"


def test_factories_pick_the_class_registered_for_the_engine(db):
    assert db.engine == "sqlite"
    assert type(open_fact_storage(db)) is SqliteFactStorage
    assert type(open_builtin_storage(db)) is SqliteBuiltinStorage
    with pytest.raises(ValueError, match="postgresql-but-not-registered"):
        open_fact_storage(_OtherEngine())
    with pytest.raises(ValueError, match="postgresql-but-not-registered"):
        open_builtin_storage(_OtherEngine())


@pytest.mark.parametrize("abc, impl", [(FactStorage, SqliteFactStorage), (BuiltinStorage, SqliteBuiltinStorage)])
def test_interfaces_carry_no_engine_types(abc, impl):
    abstract = sorted(abc.__abstractmethods__)
    assert abstract and not impl.__abstractmethods__
    for name in abstract:
        signature = str(inspect.signature(getattr(abc, name)))
        assert "apsw" not in signature and "Cursor" not in signature, (name, signature)
        assert inspect.signature(getattr(impl, name)).parameters.keys() == \
            inspect.signature(getattr(abc, name)).parameters.keys(), name


def test_query_in_reads_any_number_of_values_in_chunks(db):
    with db.write():
        db.executemany("INSERT INTO store_meta (key, value) VALUES (?, ?)", [(f"k{i}", str(i)) for i in range(7)])
    rows = db.query_in("SELECT key FROM store_meta WHERE key IN ({marks}) AND value != ? ORDER BY key",
                       [f"k{i}" for i in range(7)], after=("3",), chunk=2)
    assert [r["key"] for r in rows] == ["k0", "k1", "k2", "k4", "k5", "k6"]
    assert db.query_in("SELECT key FROM store_meta WHERE key IN ({marks})", []) == []


def test_adjust_trust_is_one_clamped_update(db):
    store = FactStore(db, hrr_dim=64)
    fid = store.add_fact("Mira plays the cello")["fact_id"]
    storage = store.storage
    assert storage.adjust_trust(fid, 0.7, helpful=True) == (0.5, 1.0, 1)
    assert storage.adjust_trust(fid, -0.1) == (1.0, 0.9, 1)
    assert storage.adjust_trust(fid + 99, 0.1) is None
    assert store.get_fact(fid)["trust_score"] == 0.9
