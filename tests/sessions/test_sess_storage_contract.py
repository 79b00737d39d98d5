"""The SessionStorage contract, method by method, against every registered engine.

A new engine (PostgreSQL) adds itself to ``ENGINES`` below with a fixture that yields a
fresh, migrated database object of that engine; every test here must then pass unchanged.
"""

from __future__ import annotations

import pytest

from hermes_store.query import Term, compile_query
from hermes_store.sessions.rows import SessionNotFound
from hermes_store.sessions.storage import (
    Batch,
    Filters,
    SessionDelta,
    SessionStorage,
    open_session_storage,
)


def _sqlite_db(request, home):
    return home.open_db()


def _postgresql_db(request, home):
    from hermes_store.pgdb import PgDatabase

    return PgDatabase(request.getfixturevalue("pg_url"))  # skipped loudly without a server


ENGINES = {"sqlite": _sqlite_db, "postgresql": _postgresql_db}


@pytest.fixture(params=sorted(ENGINES))
def storage(request, home) -> SessionStorage:
    db = ENGINES[request.param](request, home)
    yield open_session_storage(db)
    db.close()


def _session(storage, sid, *, title=None, started=100.0, parent=None, source="cli", meta=None):
    assert storage.add_session(sid, origin_format="live", source=source, title=title, model="m",
                               workspace=None, started_at=started, parent_session_id=parent,
                               meta=meta or {})


def _message(storage, sid, role, content, ts):
    return storage.append_message(sid, role=role, content=content, tool_name=None, tool_calls=None,
                                  tool_call_id=None, timestamp=ts, cjk=None)


@pytest.fixture
def filled(storage):
    _session(storage, "s1", title="Deploy notes", started=100.0, meta={"k": 1})
    _session(storage, "s2", title="Deploy notes #2", started=200.0, parent="s1", source="cron")
    ids = [_message(storage, "s1", role, text, 100.0 + i) for i, (role, text) in enumerate([
        ("user", "the deploy script fails"), ("assistant", "check the staging logs"),
        ("user", ""), ("assistant", "deploy works now")])]
    ids.append(_message(storage, "s2", "user", "nightly deploy report", 200.0))
    return storage, ids


def test_sessions_round_trip(filled):
    storage, _ = filled
    assert storage.ready()
    assert not storage.add_session("s1", origin_format="live", source="cli", title=None, model=None,
                                   workspace=None, started_at=None, parent_session_id=None, meta={})
    row = storage.get_session("s1")
    assert row["title"] == "Deploy notes" and row["meta"] == {"k": 1} and row["message_count"] == 4
    assert storage.has_session("s2") and not storage.has_session("nope")
    assert storage.get_session("nope") is None
    assert sorted(storage.session_ids_with_prefix("s", 5)) == ["s1", "s2"]
    assert storage.session_ids_with_prefix("s%", 5) == []
    assert storage.parent_of("s2") == "s1" and storage.parent_of("s1") is None
    storage.end_session("s1", 500.0, "compression")
    assert storage.session_meta("s1") == {"k": 1, "end_reason": "compression"}
    assert storage.get_session("s1")["ended_at"] == 500.0
    storage.set_title("s2", None)
    assert storage.get_session("s2")["title"] is None
    with pytest.raises(SessionNotFound):
        storage.set_title("nope", "x")
    with pytest.raises(SessionNotFound):
        storage.end_session("nope", 1.0, None)
    with pytest.raises(SessionNotFound):
        _message(storage, "nope", "user", "x", 1.0)


def test_listing_and_titles(filled):
    storage, _ = filled
    assert [r["id"] for r in storage.list_sessions()] == ["s2", "s1"]
    assert [r["id"] for r in storage.list_sessions(source="cli")] == ["s1"]
    assert [r["id"] for r in storage.list_sessions(exclude_sources=["cron"])] == ["s1"]
    assert [r["id"] for r in storage.list_sessions(limit=1)] == ["s2"]
    assert [r["id"] for r in storage.sessions_titled("deploy NOTES")] == ["s2", "s1"]
    assert storage.sessions_titled("Deploy") == []


def test_messages_narrowing(filled):
    storage, ids = filled
    rows = storage.get_messages("s1")
    assert [r["seq"] for r in rows] == [0, 1, 2, 3] and rows[0]["id"] == ids[0]
    assert set(rows[0]) >= {"id", "seq", "role", "content", "tool_name", "tool_calls",
                            "tool_call_id", "timestamp"}
    assert [r["seq"] for r in storage.get_messages("s1", roles=("user",))] == [0, 2]
    assert [r["seq"] for r in storage.get_messages("s1", roles=("user",), nonempty=True)] == [0]
    assert [r["seq"] for r in storage.get_messages("s1", before_seq=2, newest_first=True)] == [1, 0]
    assert [r["seq"] for r in storage.get_messages("s1", after_seq=1, limit=1)] == [2]
    assert [r["seq"] for r in storage.get_messages("s1", at_seq=3)] == [3]
    assert [r["seq"] for r in storage.get_messages("s1", limit=2, offset=1)] == [1, 2]
    assert storage.count_messages("s1") == 4
    assert storage.count_messages("s1", roles=("assistant",), after_seq=1) == 1
    assert storage.count_messages("s1", before_seq=2) == 2
    assert storage.message_position(ids[1]) == {"id": ids[1], "session_id": "s1", "seq": 1}
    assert storage.message_position(10**9) is None
    assert storage.message_content(ids[3]) == "deploy works now"
    assert storage.message_content(10**9) == ""
    assert storage.last_message_timestamp("s1") == 103.0


def test_hits_filters_budget_and_snippets(filled):
    storage, ids = filled
    deploy = compile_query("deploy").strict_match
    hits = storage.hits(deploy, Filters(), sort="relevance", budget=10)
    assert sorted(h.message_id for h in hits) == sorted([ids[0], ids[3], ids[4]])
    assert all(h.expression == deploy and h.score > 0 for h in hits)
    newest = storage.hits(deploy, Filters(), sort="newest", budget=2)
    assert {h.message_id for h in newest} == {ids[3], ids[4]}
    oldest = storage.hits(deploy, Filters(), sort="oldest", budget=1)
    assert [h.message_id for h in oldest] == [ids[0]]
    only_cli = storage.hits(deploy, Filters(exclude_sources=["cron"], roles=["user"]),
                            sort="relevance", budget=10)
    assert [h.message_id for h in only_cli] == [ids[0]]
    assert storage.hits(deploy, Filters(roles=[]), sort="relevance", budget=10) == []
    dated = storage.hits(deploy, Filters(since=150.0), sort="relevance", budget=10)
    assert [(h.message_id, h.source, h.title) for h in dated] == [(ids[4], "cron", "Deploy notes #2")]
    assert storage.hits(Term(("nowhere",)), Filters(), sort="relevance", budget=10) == []
    snippet = storage.snippet(deploy, ids[3], open_mark="<", close_mark=">", tokens=8)
    assert "<deploy>" in snippet and "works" in snippet
    at = storage.hits_at([("s1", 1), ("s1", 9), ("s2", 0)], Filters(roles=["assistant"]))
    assert [(h.session_id, h.seq, h.score, h.expression) for h in at] == [("s1", 1, 0.0, None)]


class _Handle:
    def __init__(self, key: str) -> None:
        self.key, self.format, self.source_id = key, "hermes-jsonl", None
        self.default_source = "cli"


def test_bulk_writer_and_source_state(storage):
    commits = []
    writer = storage.bulk_writer(pipeline=False, on_commit=lambda m, s: commits.append((m, s)))
    handle = _Handle("/x/a.jsonl")
    delta = SessionDelta("b1", {"title": "bulk", "started_at": 10.0}, True, handle, 2, 10.0, 12.0, True)
    progress = {"size": 5, "mtime": 1.0, "content_hash": "h", "resume_at": "7", "meta": '{"lines": 2}'}
    rows = [("b1", 0, "user", "bulk hello", None, None, None, 10.0, None),
            ("b1", 1, "assistant", "bulk reply", None, None, None, 12.0, None)]
    try:
        writer.write(Batch(rows=rows, sessions=[delta], sources=[(handle, progress)]), wait=True)
        assert commits == [(2, 1)] and handle.source_id is not None
        state = storage.source_state("/x/a.jsonl")
        assert (state["id"], state["format"], state["resume_at"], state["meta"]) == (
            handle.source_id, "hermes-jsonl", "7", '{"lines": 2}')
        assert storage.session_cursor("b1") == (handle.source_id, 2)
        assert storage.session_cursor("nope") is None
        row = storage.get_session("b1")
        assert (row["title"], row["message_count"], row["ended_at"], row["origin_format"]) == (
            "bulk", 2, 12.0, "hermes-jsonl")
        assert [h.seq for h in storage.hits(Term(("bulk",)), Filters(), sort="relevance", budget=5)] \
            in ([0, 1], [1, 0])
        writer.forget_source(handle.source_id)
        assert not storage.has_session("b1") and storage.source_state("/x/a.jsonl")["resume_at"] is None
    finally:
        writer.close()


def test_maintenance(filled):
    storage, _ = filled
    rows = {r["id"]: r for r in storage.lineage_rows()}
    assert rows["s1"]["last_message"] == 103.0 and rows["s2"]["parent_session_id"] == "s1"
    stats = storage.stats()
    assert (stats["sessions"], stats["messages"], stats["sources_indexed"]) == (2, 5, 0)
    assert stats["per_source"] == {"cli": {"sessions": 1, "messages": 4},
                                   "cron": {"sessions": 1, "messages": 1}}
    assert storage.delete_session("s1") == 4
    assert storage.parent_of("s2") is None  # re-attached to s1's parent (none)
    with pytest.raises(SessionNotFound):
        storage.delete_session("s1")
    assert storage.hits(Term(("staging",)), Filters(), sort="relevance", budget=5) == []
    storage.delete_sessions(["s2"])
    assert storage.stats()["messages"] == 0 and storage.list_sessions() == []


def test_health_checks(filled):
    storage, _ = filled
    assert storage.integrity_problems() == []
    names = storage.text_indexes()
    assert names
    assert all(storage.check_text_index(name) is None for name in names)
    assert storage.probe_search() is None
    storage.rebuild_text_index(names[0])
    assert storage.check_text_index(names[0]) is None
    storage.rebuild_message_index()
    assert storage.probe_search() is None
    assert [h.seq for h in storage.hits(Term(("staging",)), Filters(), sort="relevance", budget=5)] == [1]


# --------------------------------------------------------------------------- drift cases
# Behaviour the two engines once disagreed on (issue 21); each must now be the same.


def test_title_lookup_takes_any_hash_suffix(storage):
    _session(storage, "a", title="deploy fix #notes", started=10.0)
    _session(storage, "b", title="deploy fix", started=5.0)
    _session(storage, "c", title="deploy fixes", started=20.0)
    assert [r["id"] for r in storage.sessions_titled("deploy fix")] == ["a", "b"]


def test_title_lookup_folds_non_ascii_case_alike(storage):
    _session(storage, "fr", title="Déploy fix", started=10.0)
    _session(storage, "de", title="Straße ÜBER", started=11.0)
    _session(storage, "plain", title="Deploy fix", started=12.0)
    assert [r["id"] for r in storage.sessions_titled("DÉPLOY FIX")] == ["fr"]
    assert [r["id"] for r in storage.sessions_titled("straße über")] == ["de"]
    # diacritics count alike on both engines: the unaccented title is another title
    assert [r["id"] for r in storage.sessions_titled("deploy fix")] == ["plain"]


def test_title_lookup_neutralises_control_characters(storage):
    _session(storage, "n", title="deploy fix", started=10.0)
    assert [r["id"] for r in storage.sessions_titled("deploy\x00fix")] == ["n"]
    assert storage.sessions_titled("\x00") == []
    assert storage.sessions_titled("50%_\\") == []


def test_delete_sessions_is_one_transaction(storage, monkeypatch):
    for i in range(3):
        _session(storage, f"d{i}", started=float(i))
        _message(storage, f"d{i}", "user", f"message {i}", float(i))
    ids = [f"d{i}" for i in range(3)]
    sql = type(storage.db.portable)
    real = sql.execute
    calls = {"n": 0}

    def failing(self, statement, params=()):
        calls["n"] += 1
        if calls["n"] == 4:  # the second chunk's first statement
            raise RuntimeError("interrupted")
        return real(self, statement, params)

    import hermes_store.sessions.storage_sql as storage_sql

    monkeypatch.setattr(storage_sql, "DELETE_CHUNK", 2)
    monkeypatch.setattr(sql, "execute", failing)
    with pytest.raises(RuntimeError):
        storage.delete_sessions(ids)
    monkeypatch.setattr(sql, "execute", real)
    assert all(storage.has_session(i) for i in ids)  # nothing of the first chunk was kept
    storage.delete_sessions(ids)
    assert not any(storage.has_session(i) for i in ids)


@pytest.mark.parametrize("query", ["\x00", "deploy\x00", "de\x07ploy", "\x1b[2J deploy", "\x7f"])
def test_control_characters_in_queries_compile_and_run_alike(storage, query):
    _session(storage, "q", title="t")
    _message(storage, "q", "user", "deploy now", 1.0)
    plan = compile_query(query)
    assert "\x00" not in plan.text
    if plan.strict_match is not None:
        hits = storage.hits(plan.strict_match, Filters(), sort="newest", budget=10)
        assert [h.session_id for h in hits] in ([], ["q"])
