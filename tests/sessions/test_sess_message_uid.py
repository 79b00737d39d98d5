"""Message uids (issue 26, Hermes state.db schema 31): each message keeps its identity across
re-imports. The uid is stored per message (SQLite 0012 / pg 0010), so when Hermes renumbers its
ids a re-read keeps every known message's seq and ``SESSION_ID#N`` ref, adds only new uids and
updates a row edited in place under the same uid. Run on both engines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_store.db import Database
from hermes_store.sessions.loader import BulkLoader
from tests.sessions.conftest import FIXTURES
from tests.sessions.test_sess_hermes_v31 import build

pytestmark = pytest.mark.usefixtures("engine")
CONT = "20270301_090000_cont01"
ARCH = "20270303_080000_arch01"


@pytest.fixture
def v31(tmp_path) -> Path:
    return build(tmp_path / "hermes31" / "state.db")


def index(home, path: Path) -> tuple[BulkLoader, list[tuple]]:
    """Import ``path``; the loader and every stored (session, seq, content, uid), in order."""
    db = home.open_db()
    try:
        loader = BulkLoader(db)
        loader.run([path], "hermes-db")
        rows = db.query(
            "SELECT id, session_id, seq, content, message_uid FROM messages ORDER BY session_id, seq"
        )
        counts = {
            r["id"]: r["message_count"] for r in db.query("SELECT id, message_count FROM sessions")
        }
    finally:
        db.close()
    assert not loader.summary.errors, loader.summary.errors
    stored = [(r["session_id"], r["seq"], r["content"], r["message_uid"]) for r in rows]
    loader.row_ids = {(r["session_id"], r["seq"]): r["id"] for r in rows}  # type: ignore[attr-defined]
    for sid, count in counts.items():  # the session counters follow what is stored
        assert count == sum(1 for row in stored if row[0] == sid), sid
    return loader, stored


def rebuild(path: Path, *statements: str) -> None:
    """Rebuild Hermes' messages table with new ids (rows copied in another order, same uids),
    after running ``statements`` on the copy."""
    db = Database(path, migrate=False)
    try:
        db.execute("CREATE TABLE old_messages AS SELECT * FROM messages")
        for statement in statements:
            db.execute(statement)
        columns = [r["name"] for r in db.query("PRAGMA table_info(messages)") if r["name"] != "id"]
        names = ", ".join(columns)
        db.execute("DELETE FROM messages")
        db.execute(
            f"INSERT INTO messages({names}) SELECT {names} FROM old_messages"
            " ORDER BY session_id DESC, id"
        )
        db.execute("DROP TABLE old_messages")
    finally:
        db.close()


def test_uids_are_stored_per_message(home, v31):
    _, stored = index(home, v31)
    assert len(stored) == 7
    uids = [row[3] for row in stored]
    assert all(uids) and len(set(uids)) == 7
    assert (CONT, 0, "now production please", "d1b2c3d4e5f60718293a4b5c6d7e8f90") in stored


def test_renumbered_table_keeps_refs_without_duplicates(home, v31):
    first, before = index(home, v31)
    # the rebuilt table also lost the first message of root01: read afresh, the message after it
    # would move to seq 0; found by uid, every stored row stays as it is
    rebuild(v31, "DELETE FROM old_messages WHERE message_uid = 'a1b2c3d4e5f60718293a4b5c6d7e8f90'")
    loader, after = index(home, v31)
    assert after == before  # same seq (so the same SESSION_ID#N ref), same text, nothing twice
    assert loader.row_ids == first.row_ids  # the very same rows, not re-created
    assert loader.summary.messages_added == 0 and loader.summary.skipped == 6
    _, again = index(home, v31)  # and the read after that is incremental again
    assert again == before


def test_edit_in_place_under_same_uid_updates_and_new_uids_append(home, v31, run):
    first, before = index(home, v31)
    rebuild(
        v31,
        "UPDATE old_messages SET content = 'now production please, carefully'"
        " WHERE message_uid = 'd1b2c3d4e5f60718293a4b5c6d7e8f90'",
    )
    db = Database(v31, migrate=False)
    db.execute(
        "INSERT INTO messages(session_id, role, content, timestamp, message_uid) VALUES"
        f" ('{CONT}', 'assistant', 'production rollout complete', 1803891620,"
        " 'ffffffffffffffffffffffffffffffff')"
    )
    db.close()
    loader, after = index(home, v31)
    assert loader.summary.messages_added == 1
    assert loader.summary.messages_updated == 1  # what wakes the background embedder too
    assert loader.summary.as_dict()["messages_updated"] == 1
    assert all(
        loader.row_ids[key] == row_id for key, row_id in first.row_ids.items()
    )  # updated in place
    expected = [
        row
        if row[3] != "d1b2c3d4e5f60718293a4b5c6d7e8f90"
        else (CONT, 0, "now production please, carefully", row[3])
        for row in before
    ]
    expected.insert(
        expected.index(
            (CONT, 0, "now production please, carefully", "d1b2c3d4e5f60718293a4b5c6d7e8f90")
        )
        + 1,
        (CONT, 1, "production rollout complete", "ffffffffffffffffffffffffffffffff"),
    )
    assert after == expected
    rebuild(v31, "UPDATE old_messages SET content = 'now production please, very carefully'"
                 " WHERE message_uid = 'd1b2c3d4e5f60718293a4b5c6d7e8f90'")
    said = run("sessions", "index", str(v31))
    assert "0 messages added" in said.stdout and ", 1 edited in place" in said.stdout  # told, not silent
    found = json.loads(run("sessions", "search", "--json", "carefully").stdout)["results"]
    assert [(r["session_id"], r["role"]) for r in found] == [
        (CONT, "user")
    ]  # the index follows the edit
    assert json.loads(run("sessions", "search", "--json", "rollout complete").stdout)["results"]


def test_show_and_export_expose_the_uid(home, v31, run, state_db):
    index(home, v31)
    shown = json.loads(run("sessions", "show", "--json", CONT).stdout)
    assert [m["message_uid"] for m in shown["messages"]] == ["d1b2c3d4e5f60718293a4b5c6d7e8f90"]
    lines = [
        json.loads(line)
        for line in run("sessions", "export", ARCH, "--format", "jsonl").output.splitlines()
    ]
    uids = [line.get("message_uid") for line in lines if line["type"] == "message"]
    assert (
        uids[0] == "21b2c3d4e5f60718293a4b5c6d7e8f90" and len(uids[1]) == 32
    )  # the trigger minted one
    # a message without a uid (an older state.db) has no such key
    old = json.loads(
        run("sessions", "index", "--json", "--format", "hermes-db", str(state_db)).stdout
    )
    assert old["messages_added"] > 0
    db = home.open_db()
    try:
        other = db.scalar("SELECT session_id FROM messages WHERE message_uid IS NULL LIMIT 1")
    finally:
        db.close()
    messages = json.loads(run("sessions", "show", "--json", other).stdout)["messages"]
    assert messages and all("message_uid" not in m for m in messages)
    exported = [
        json.loads(line)
        for line in run("sessions", "export", other, "--format", "jsonl").output.splitlines()
    ]
    assert all("message_uid" not in line for line in exported if line["type"] == "message")


def test_older_schema_without_uids_imports_and_rereads_afresh(home, tmp_path):
    old = tmp_path / "old" / "state.db"
    old.parent.mkdir()
    db = Database(old, migrate=False)
    db.execute((FIXTURES / "hermes_state.sql").read_text(encoding="utf-8"))
    db.close()
    loader, before = index(home, old)
    assert loader.summary.messages_added == len(before) > 0
    assert all(row[3] is None for row in before)
    # fewer ids than the resume point: without uids the file is read afresh, still no duplicates
    db = Database(old, migrate=False)
    try:
        top = db.scalar("SELECT max(id) FROM messages")
        db.execute("DELETE FROM messages WHERE id = ?", (top,))
    finally:
        db.close()
    _, after = index(home, old)
    assert len(after) == len(before) - 1 and len(set(after)) == len(after)


def test_live_append_keeps_a_uid_once(home):
    from hermes_store.sessions.live import SessionIndex

    db = home.open_db()
    try:
        with SessionIndex(db) as live:
            sid = live.create_session(source="cli")
            first = live.append_message(sid, "user", "deploy it", message_uid="u-1")
            again = live.append_message(sid, "user", "deploy it", message_uid="u-1")
            other = live.append_message(sid, "assistant", "done", message_uid="u-2")
            plain = live.append_message(sid, "assistant", "no uid here")
            rows = live.get_messages(sid)
            session = live.get_session(sid)
    finally:
        db.close()
    assert again == first and len({first, other, plain}) == 3
    assert [(m["seq"], m["message_uid"]) for m in rows] == [(0, "u-1"), (1, "u-2"), (2, None)]
    assert session["message_count"] == 3


def test_state_db_sync_stores_uids_and_survives_a_renumbering(home, v31):
    from hermes_store.sessions.state_sync import StateDbSync

    sync = StateDbSync(home, v31)
    assert sync.sync().status == "imported"
    _, before = index(home, v31)  # nothing new: the stored rows as the sync wrote them
    assert len(before) == 7 and all(row[3] for row in before)
    rebuild(v31)
    result = sync.sync()
    assert result.status == "imported" and result.messages_added == 0
    _, after = index(home, v31)
    assert after == before
