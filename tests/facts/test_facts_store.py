"""FactStore: writes, duplicates, trust visibility, counters, CJK/hyphens, dimension change."""

from __future__ import annotations

import pytest
from engine_helpers import execute, scalar

from hermes_store.facts import FactNotFound, FactStore, FactStoreError
from hermes_store.facts.store import META_DIM


def test_add_duplicate_returns_existing(store):
    first = store.add_fact("Alice lives in Paris", "general", "home,city")
    again = store.add_fact("  Alice lives in Paris  ", "project", "other")
    assert first == {"fact_id": first["fact_id"], "status": "added"}
    assert again == {"fact_id": first["fact_id"], "status": "exists"}
    fact = store.get_fact(first["fact_id"])
    assert fact["category"] == "general" and fact["tags"] == "home,city"
    assert fact["entities"] == ["Alice", "Paris"]
    assert fact["trust_score"] == 0.5


def test_empty_content_is_an_error(store):
    with pytest.raises(FactStoreError, match="content must not be empty"):
        store.add_fact("   ")


def test_update_relinks_and_rejects_duplicates(store):
    a = store.add_fact("Alice lives in Paris")["fact_id"]
    b = store.add_fact("Bob likes tea")["fact_id"]
    assert store.update_fact(a, content="Carol lives in Rome", tags="x", trust_delta=0.2)
    fact = store.get_fact(a)
    assert fact["entities"] == ["Carol", "Rome"] and fact["trust_score"] == 0.7
    assert store.probe("Alice") == []
    with pytest.raises(FactStoreError, match="already has this content"):
        store.update_fact(b, content="Carol lives in Rome")
    assert store.update_fact(999, content="x") is False


def test_remove_deletes_links_and_index(store):
    fid = store.add_fact("Dana uses Emacs")["fact_id"]
    assert store.remove_fact(fid) is True
    assert store.remove_fact(fid) is False
    assert store.search("emacs") == []
    assert store.db.scalar("SELECT count(*) FROM fact_entities") == 0


def test_feedback_arithmetic_and_unknown_id(store):
    fid = store.add_fact("Erin drinks coffee")["fact_id"]
    assert store.record_feedback(fid, "helpful") == {
        "fact_id": fid, "old_trust": 0.5, "new_trust": 0.55, "helpful_count": 1}
    out = store.record_feedback(fid, "unhelpful")
    assert out["old_trust"] == 0.55 and out["new_trust"] == 0.45 and out["helpful_count"] == 1
    with pytest.raises(FactNotFound, match="fact_id 4242 not found"):
        store.record_feedback(4242, "helpful")


def test_threshold_boundary_in_search(store):
    fid = store.add_fact("Frank plays the oboe")["fact_id"]
    store.record_feedback(fid, "unhelpful")
    store.record_feedback(fid, "unhelpful")
    assert store.get_fact(fid)["trust_score"] == 0.3
    assert [r["fact_id"] for r in store.search("oboe")] == [fid]  # 0.3 stays visible
    store.record_feedback(fid, "unhelpful")
    assert store.search("oboe") == []
    assert [r["fact_id"] for r in store.search("oboe", min_trust=0.1)] == [fid]
    assert store.probe("Frank")[0]["fact_id"] == fid  # entity operations do not hide


def test_scores_multiply_trust(store):
    low = store.add_fact("the staging server runs nginx")["fact_id"]
    high = store.add_fact("the production server runs nginx")["fact_id"]
    store.update_fact(high, trust_delta=0.4)
    results = store.search("server nginx")
    assert [r["fact_id"] for r in results] == [high, low]
    assert results[0]["score"] > results[1]["score"]


def test_retrieval_count_moves_on_search_and_probe(store):
    fid = store.add_fact("Gina codes in Rust")["fact_id"]
    store.search("rust")
    store.probe("Gina")
    assert store.get_fact(fid)["retrieval_count"] == 2
    store.list_facts()
    store.search("rust", record=False)
    assert store.get_fact(fid)["retrieval_count"] == 2


def test_cjk_and_hyphenated_content(store):
    cjk = store.add_fact("王伟住在北京，喜欢喝茶")["fact_id"]
    hyphen = store.add_fact("run systemctl daemon-reexec after editing units")["fact_id"]
    store.add_fact("the daemon restarted twice")
    assert [r["fact_id"] for r in store.search("北京")] == [cjk]
    assert store.search("喝茶")[0]["fact_id"] == cjk
    assert store.search("daemon-reexec")[0]["fact_id"] == hyphen
    assert store.probe("王伟")[0]["fact_id"] == cjk


def test_percent_and_underscore_are_literal(store):
    store.add_fact("Harry finished 100% of the_plan")
    store.add_fact("Ivan rests")
    assert store.resolve_entity("H%") is None
    assert store.resolve_entity("_van") is None
    assert [r["content"] for r in store.search("100%")] == ["Harry finished 100% of the_plan"]


def test_alias_resolution(store):
    store.add_fact("Robert aka Bob works at Acme Corp")
    store.add_fact("Bob likes chess")
    entity = store.resolve_entity("bob")
    assert entity["name"] == "Robert" and entity["aliases"] == ["Bob"]
    assert {r["content"] for r in store.probe("Robert")} == {
        "Robert aka Bob works at Acme Corp", "Bob likes chess"}


def test_entities_are_case_insensitive(store):
    store.add_fact("alice-free text mentions ALICE? no: Alice cooks")
    store.add_fact("Alice bakes")
    assert store.db.scalar("SELECT count(*) FROM entities WHERE name_key = 'alice'") == 1


def _meta_dim(store) -> str:
    return scalar(store.db, "SELECT value FROM store_meta WHERE key = ?", (META_DIM,))


def test_dimension_change_reencodes(home, engine):
    with FactStore(home, hrr_dim=128) as small:
        fid = small.add_fact("Jane lives in Oslo")["fact_id"]
    with FactStore(home, hrr_dim=256) as big:
        assert big.reencoded == 0  # opening reads only; the stale vectors are re-encoded in memory
        assert big.probe("Jane")[0]["fact_id"] == fid
        assert _meta_dim(big) == "128"
        assert big.ensure_vectors() == 1 and big.reencoded == 1
        assert _meta_dim(big) == "256"
        assert len(bytes(big.db.scalar("SELECT hrr_vector FROM facts"))) == 4 + 4 * 256
        assert big.probe("Jane")[0]["fact_id"] == fid
    with FactStore(home, hrr_dim=256) as same:
        assert same.ensure_vectors() == 0
    with FactStore(home) as bare:  # no config, no dim: keeps the recorded 256
        assert bare.dim == 256 and bare.reencoded == 0


def _snapshot(db) -> list:
    """Every stored fact and setting, as plain values (to prove a read wrote nothing)."""
    facts = db.query("SELECT * FROM facts ORDER BY fact_id")
    meta = db.query("SELECT * FROM store_meta ORDER BY key")
    plain = [{k: bytes(v) if isinstance(v, memoryview) else v for k, v in row.items()} for row in facts]
    return [plain, meta]


def test_opening_never_writes_and_the_first_write_upgrades_vectors(home, engine):
    with FactStore(home, hrr_dim=128) as small:
        small.add_fact("Jane lives in Oslo")
    with FactStore(home, hrr_dim=256) as big:
        before = _snapshot(big.db)
        changes = big.db.conn.total_changes() if engine == "sqlite" else None
        assert big.search("Oslo", record=False) and big.count() == 1
        assert big.probe("Jane", record=False) and big.list_facts()
        assert _snapshot(big.db) == before
        if engine == "sqlite":  # SQLite also counts writes that rewrote identical values
            assert big.db.conn.total_changes() == changes
        big.add_fact("Omar lives in Cairo")
        assert big.reencoded == 1
        assert _meta_dim(big) == "256"
        assert {len(bytes(r["hrr_vector"])) for r in big.db.query("SELECT hrr_vector FROM facts")} == {
            4 + 4 * 256}


def test_stale_vector_blob_is_tolerated(store):
    fid = store.add_fact("Kim lives in Seoul")["fact_id"]
    execute(store.db, "UPDATE facts SET hrr_vector = ? WHERE fact_id = ?", (b"junk", fid))
    store._touched()
    assert store.probe("Kim")[0]["fact_id"] == fid


def test_list_orders_by_trust_and_filters(store):
    a = store.add_fact("note one", "project")["fact_id"]
    b = store.add_fact("note two", "general")["fact_id"]
    store.update_fact(b, trust_delta=0.3)
    assert [f["fact_id"] for f in store.list_facts()] == [b, a]
    assert [f["fact_id"] for f in store.list_facts(category="project")] == [a]
    assert [f["fact_id"] for f in store.list_facts(min_trust=0.6)] == [b]


def test_half_life_decay_lowers_old_scores(db):
    decaying = FactStore(db, hrr_dim=128, half_life_days=1)
    old = decaying.add_fact("the cache lives in redis")["fact_id"]
    new = decaying.add_fact("the queue lives in redis")["fact_id"]
    execute(db, "UPDATE facts SET updated_at = '2000-01-01 00:00:00' WHERE fact_id = ?", (old,))
    assert [r["fact_id"] for r in decaying.search("redis")] == [new, old]


# SQLite only: a read-only reader is an APSW open mode of the file (PgDatabase has none)
def test_read_only_reader_searches_without_writing(tmp_path):
    from hermes_store.db import Database

    path = tmp_path / "ro.db"
    with FactStore(path, hrr_dim=128) as writer:
        fid = writer.add_fact("Lena lives in Graz")["fact_id"]
    reader_db = Database(path, readonly=True)
    try:
        reader = FactStore(reader_db, hrr_dim=256)  # another dimension: re-encoded in memory only
        assert reader.search("Graz")[0]["fact_id"] == fid
        assert reader.probe("Lena")[0]["fact_id"] == fid
    finally:
        reader_db.close()
    with FactStore(path, hrr_dim=128) as again:
        assert again.get_fact(fid)["retrieval_count"] == 0


def test_large_store_streams_instead_of_caching(store, monkeypatch):
    from hermes_store.facts import rows as store_module

    ids = [store.add_fact(f"Nora note number {i}")["fact_id"] for i in range(5)]
    cached = store.presence("Nora")
    monkeypatch.setattr(store_module, "CACHE_BUDGET", 1)
    monkeypatch.setattr(store_module, "SCAN_CHUNK", 2)
    store._touched()
    assert store.vector_index() is None
    streamed = store.presence("Nora")
    assert sorted(streamed) == ids
    assert all(abs(streamed[i] - cached[i]) < 1e-5 for i in ids)
