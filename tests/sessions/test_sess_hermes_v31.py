"""Importing a state.db written by the newest Hermes (schema 31, issue 26): built from
fixture_sql/hermes_state_v31.sql, which follows upstream's SCHEMA_SQL / DEFERRED_INDEX_SQL."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hermes_store.db import Database
from hermes_store.sessions.importers.hermes_db import HermesDbImporter, end_kind, is_queued_prompt
from hermes_store.sessions.loader import BulkLoader
from hermes_store.sessions.storage import open_session_storage

SQL = Path(__file__).parent / "fixture_sql" / "hermes_state_v31.sql"
pytestmark = pytest.mark.usefixtures("engine")


def build(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = Database(path, migrate=False)
    db.execute(SQL.read_text(encoding="utf-8"))
    db.close()
    return path


@pytest.fixture
def v31(tmp_path) -> Path:
    return build(tmp_path / "hermes" / "state.db")


def run(home, path):
    db = home.open_db()
    try:
        summary = BulkLoader(db).run([path], "hermes-db")
        storage = open_session_storage(db)
        contents = {sid: [m["content"] for m in storage.get_messages(sid)]
                    for sid in ("20270301_080000_root01", "20270301_090000_cont01", "20270302_080000_tgold1",
                                "20270302_090000_tgnew1", "20270303_080000_arch01")}
        metas = {sid: storage.session_meta(sid) for sid in contents}
        total = db.scalar("SELECT count(*) FROM messages")
    finally:
        db.close()
    return summary, contents, metas, total


def test_fixture_is_schema_31_and_the_trigger_mints_uids(v31):
    db = Database(v31, readonly=True, migrate=False)
    try:
        assert db.scalar("SELECT version FROM schema_version") == 31
        assert db.scalar("SELECT count(*) FROM messages WHERE message_uid IS NULL") == 0
    finally:
        db.close()
    assert HermesDbImporter.sniff  # the state.db is recognised below by the import itself


def test_schema_31_import(home, v31):
    summary, contents, metas, total = run(home, v31)
    assert not summary.errors, summary.errors
    # compaction archive kept, rewound row skipped
    assert contents["20270301_080000_root01"] == ["roll out the helm chart to staging",
                                                  "helm upgrade --install done on staging"]
    # the drained copy is the message; the deactivated accept row and the still-marked one are not
    assert contents["20270302_090000_tgnew1"] == ["queued while busy: also buy coffee"]
    assert contents["20270303_080000_arch01"] == ["an archived experiment about flamegraphs",
                                                  "flamegraph shows the allocator"]
    assert total == 7
    assert metas["20270303_080000_arch01"]["auto_archived"] == 1
    assert metas["20270303_080000_arch01"]["end_kind"] == "recoverable"
    assert metas["20270302_080000_tgold1"]["end_kind"] == "boundary"
    assert metas["20270301_080000_root01"]["end_kind"] == "compression"
    # legacy reset child: same session_key, parent ended at a reset boundary -> its own conversation
    assert metas["20270302_090000_tgnew1"]["_reset_from"] == "20270302_080000_tgold1"
    assert "_reset_from" not in metas["20270301_090000_cont01"]  # a compression continuation


def test_reset_child_is_its_own_conversation_in_browse(home, v31):
    import json

    from hermes_store.tools import handle_tool_call
    run(home, v31)
    browsed = json.loads(handle_tool_call("session_search", {"limit": 10}, home=home))
    ids = {r["session_id"] for r in browsed["results"]}
    assert {"20270302_090000_tgnew1", "20270302_080000_tgold1"} <= ids
    # the compression chain is one entry, shown as its continuation
    assert "20270301_090000_cont01" in ids and "20270301_080000_root01" not in ids


def test_uid_stability_across_reimport(home, v31, tmp_path):
    run(home, v31)
    again, contents, _, total = run(home, v31)  # same file: nothing new, nothing twice
    assert again.messages_added == 0 and total == 7
    # Hermes rebuilds the table with renumbered ids (same message_uids, ids shifted up):
    # the uid at our cursor is gone, so the file is read afresh instead of appended twice
    db = Database(v31, migrate=False)
    db.execute("UPDATE messages SET id = id + 1000")
    db.close()
    rebuilt, contents2, _, total2 = run(home, v31)
    assert not rebuilt.errors and total2 == 7
    assert contents2 == contents  # each message keeps its place (session, position, text)
    # a new row after the re-read is appended once
    db = Database(v31, migrate=False)
    db.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES "
               "('20270301_090000_cont01', 'assistant', 'production rollout complete', 1803891620)")
    db.close()
    newer, contents3, _, total3 = run(home, v31)
    assert newer.messages_added == 1 and total3 == 8
    assert contents3["20270301_090000_cont01"] == ["now production please", "production rollout complete"]


def test_hidden_scaffolding_rows_are_not_messages(home, v31):
    """``display_kind='hidden'`` rows (an interrupted turn's placeholder, a delegation result
    handed to the model) are never painted, previewed or found by Hermes' own search; they are
    not imported, so session_search cannot return them either."""
    import json

    from hermes_store.sessions.importers.base import MessageRecord, SourceState
    from hermes_store.tools import handle_tool_call
    db = Database(v31, migrate=False)
    db.execute("INSERT INTO messages(session_id, role, content, timestamp, display_kind) VALUES "
               "('20270301_090000_cont01', 'assistant', "
               "'[This response was interrupted by a user correction.]', 1803891612, 'hidden'), "
               "('20270301_090000_cont01', 'user', "
               "'[ASYNC DELEGATION BATCH COMPLETE — deleg_9] 77 passed in 1.00s', 1803891614, 'hidden'), "
               "('20270301_090000_cont01', 'assistant', 'production rollout complete', 1803891620, NULL)")
    db.close()
    summary, contents, _, total = run(home, v31)
    assert not summary.errors, summary.errors
    assert contents["20270301_090000_cont01"] == ["now production please", "production rollout complete"]
    assert total == 8
    for query in ("interrupted correction", "DELEGATION deleg_9"):
        found = json.loads(handle_tool_call("session_search", {"query": query}, home=home))
        assert found["success"] and found["results"] == [], (query, found)
    state = SourceState()
    records = [e for e in HermesDbImporter(v31).read(state) if isinstance(e, MessageRecord)]
    assert len(records) == 8 and state.meta["hidden_skipped"] == 2


def test_older_schema_still_imports(home, tmp_path):
    from tests.sessions.conftest import FIXTURES
    old = tmp_path / "old" / "state.db"
    old.parent.mkdir()
    db = Database(old, migrate=False)
    db.execute((FIXTURES / "hermes_state.sql").read_text(encoding="utf-8"))
    db.close()
    store = home.open_db()
    try:
        summary = BulkLoader(store).run([old], "hermes-db")
    finally:
        store.close()
    assert not summary.errors and summary.messages_added > 0


def test_taxonomy_helpers():
    assert end_kind("new_session") == "boundary" and end_kind("idle") == "boundary"
    assert end_kind("tui_shutdown") == "automatic" and end_kind("startup_orphan_reap") == "recoverable"
    assert end_kind(None) is None and end_kind("cron_complete") == "other"
    assert is_queued_prompt('{"_queued_prompt": true}') and not is_queued_prompt('{"_queued_prompt": false}')
    assert not is_queued_prompt("not json _queued_prompt") and not is_queued_prompt(None)


def test_copy_keeps_fixture_readable_by_stock_sqlite(v31, tmp_path):
    import sqlite3
    copy = tmp_path / "copy.db"
    shutil.copy(v31, copy)
    con = sqlite3.connect(copy)
    try:
        assert con.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'helm'").fetchone()[0] >= 1
    finally:
        con.close()


def test_in_place_compaction_after_an_import_is_found_from_the_compacted_session(home, v31):
    """Hermes' in-place compaction (``archive_and_compact``) archives every live row of the session
    (``active=0, compacted=1``) and appends the summary. Its archives have left the live context,
    so upstream ``session_search`` (zons 03d70b32 ``_is_compacted_message``) returns them even on
    the calling session; the rows were imported live before, so the next run must learn of it."""
    import json

    from hermes_store.tools import handle_tool_call
    run(home, v31)
    db = Database(v31, migrate=False)
    db.execute("UPDATE messages SET active = 0, compacted = 1 "
               "WHERE session_id = '20270301_090000_cont01' AND active = 1")
    db.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES "
               "('20270301_090000_cont01', 'user', '[CONTEXT COMPACTION — REFERENCE ONLY] summary', 1803891630)")
    db.close()
    summary, contents, metas, _ = run(home, v31)
    assert not summary.errors, summary.errors
    assert metas["20270301_090000_cont01"]["compacted_messages"] == 1
    found = json.loads(handle_tool_call("session_search", {"query": "production"}, home=home,
                                        session_id="20270301_090000_cont01"))
    assert [r["session_id"] for r in found["results"]] == ["20270301_090000_cont01"]
    assert found["results"][0]["messages"][0]["content"] == "now production please"
    # scroll accepts an archived anchor on the calling session (upstream _anchor_in_live_context)
    anchor = found["results"][0]["match_message_id"]
    scrolled = json.loads(handle_tool_call("session_search", {"session_id": "20270301_090000_cont01",
                                                              "around_message_id": anchor}, home=home,
                                           session_id="20270301_090000_cont01"))
    assert scrolled["success"] is True and scrolled["mode"] == "scroll"
    # the summary row is live: the calling session's own live rows stay out
    live = json.loads(handle_tool_call("session_search", {"query": "REFERENCE"}, home=home,
                                       session_id="20270301_090000_cont01"))
    assert live["results"] == []


def test_a_rewind_after_an_import_takes_the_rewound_turns_out_as_in_hermes(home, v31, tmp_path):
    """Hermes' ``/rewind`` (``rewind_to_message`` in zons hermes_state_rewind.py @31173b0f) sets
    ``active=0`` on the target user message and every later live row of the session and bumps
    ``sessions.rewind_count``; its ``session_search`` never returns such rows (only ``active=1``
    or compaction archives, ``_search_filter_clauses`` @03d70b32). Rows rewound before a first
    import were always skipped; rows rewound after it stayed in our index and were found."""
    import json

    from hermes_store.tools import handle_tool_call
    db = Database(v31, migrate=False)
    db.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES "
               "('20270303_080000_arch01', 'user', 'profile the cache eviction path', 1804060830),"
               "('20270303_080000_arch01', 'assistant', 'eviction dominates the flamegraph', 1804060840)")
    db.close()
    run(home, v31)

    def found(query):
        reply = json.loads(handle_tool_call("session_search", {"query": query}, home=home, session_id="x"))
        return [r["session_id"] for r in reply["results"]]

    assert found("eviction") == ["20270303_080000_arch01"]
    db = Database(v31, migrate=False)
    target = db.scalar("SELECT id FROM messages WHERE content = 'profile the cache eviction path'")
    db.execute("UPDATE messages SET active = 0 WHERE session_id = '20270303_080000_arch01' AND id >= ?"
               " AND active = 1", (target,))
    db.execute("UPDATE sessions SET rewind_count = rewind_count + 1 WHERE id = '20270303_080000_arch01'")
    db.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES "
               "('20270303_080000_arch01', 'user', 'profile the allocator instead', 1804060850)")
    db.close()
    summary, contents, _metas, total = run(home, v31)
    assert not summary.errors, summary.errors
    assert found("eviction") == []
    assert contents["20270303_080000_arch01"] == ["an archived experiment about flamegraphs",
                                                  "flamegraph shows the allocator",
                                                  "profile the allocator instead"]
    # the index is the one a first import of the same state.db makes (seqs and refs included)
    fresh = type(home)(tmp_path / "fresh")
    _s, fresh_contents, _m, fresh_total = run(fresh, v31)
    assert (contents, total) == (fresh_contents, fresh_total)
    db = home.open_db()
    try:
        seqs = [m["seq"] for m in open_session_storage(db).get_messages("20270303_080000_arch01")]
    finally:
        db.close()
    assert seqs == [0, 1, 2]
    # read again with nothing new: nothing is dropped or added
    assert run(home, v31)[1:] == (contents, _metas, total)
