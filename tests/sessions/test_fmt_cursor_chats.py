"""The Cursor Agent CLI's chat stores (``~/.cursor/chats/<md5>/<chat id>/store.db``, what
``cursor-agent --resume`` continues): meta + content-addressed blobs. Before, refused as
``unknown format``. The fixture (built from ``fixture_sql/cursor_chats.sql``) has the store's
structure with invented content: a root linking blob, a nested linking blob with an embedded
message, and an older root left by a rewind."""

from __future__ import annotations

import hashlib
import json

from format_helpers import SQL_DIR, build_sqlite, index, messages, roles, session

from hermes_store.db import Database
from hermes_store.sessions import detect_format
from hermes_store.sessions.importers.cursor_chats import linked

CHAT = "5d0c8a4e-2f1b-4c7a-9e36-8b1f0a2d7c45"
STORE = f"cursor-chats/.cursor/chats/e4d1987e8cd468caedeed996a1eca610/{CHAT}/store.db"


def test_committed_store_is_the_sql_rebuilt(tmp_path, format_fixtures):
    built = build_sqlite(SQL_DIR / "cursor_chats.sql", tmp_path / "store.db")
    dump = "SELECT id, hex(data) AS data FROM blobs ORDER BY id"
    with Database(built, readonly=True, migrate=False) as a, \
            Database(format_fixtures / STORE, readonly=True, migrate=False) as b:
        rows = a.query(dump)
        assert rows == b.query(dump)
        assert a.query("SELECT * FROM meta") == b.query("SELECT * FROM meta")
    assert all(hashlib.sha256(bytes.fromhex(r["data"])).hexdigest() == r["id"] for r in rows)


def test_cursor_chat_store_is_read_along_its_latest_root(store, format_fixtures):
    path = format_fixtures / STORE
    assert detect_format(path) == "cursor-chats"
    assert index(store, path)["errors"] == []
    row = session(store, CHAT)
    assert (row["title"], row["model"], row["workspace"], row["source"]) == (
        "Invoice export skips March", "claude-4.5-sonnet", "/srv/ledger", "cursor")
    assert row["started_at"] == 1781337600.0
    rows = messages(store, CHAT)
    # the system prompt is not indexed; the rewound prompt under the older root is not read
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "assistant", "user",
                           "assistant", "tool"]
    assert rows[0]["content"].startswith("why does the invoice export skip March?\n\n<user_info>")
    assert rows[1]["content"] == "The export probably filters months with a range that stops early; read export.py."
    assert rows[2]["content"] == "Let me read the exporter."
    assert rows[2]["calls"] == [("Read", {"path": "/srv/ledger/export.py"}, "toolu_01Ledger")]
    assert (rows[3]["tool_call_id"], rows[3]["tool_name"], rows[3]["content"]) == (
        "toolu_01Ledger", "Read", "def months():\n    return range(1, 3)\n")
    assert rows[4]["calls"] == [("Shell", {"command": "grep -rn 'months()' /srv/ledger/tests"}, "toolu_02Ledger")]
    assert (rows[5]["content"], rows[5]["tool_call_id"]) == ("", "toolu_02Ledger")  # an empty result is kept
    assert rows[6]["content"] == "range(1, 3) stops before March; it should be range(1, 13)."  # embedded message
    assert rows[7]["content"] == "fix it and run the tests"
    assert rows[8]["calls"] == [("Edit", {"path": "/srv/ledger/export.py", "old_string": "range(1, 3)",
                                          "new_string": "range(1, 13)"}, "toolu_03Ledger")]
    assert rows[9]["content"] == "Edited /srv/ledger/export.py\n1 replacement"
    assert all("locale" not in r["content"] for r in rows)


def test_a_missing_blob_is_reported_and_the_rest_read(store, tmp_path):
    def blob(obj: dict) -> tuple[str, bytes]:
        data = json.dumps(obj).encode()
        return hashlib.sha256(data).hexdigest(), data

    first = blob({"role": "user", "content": "<user_query>\nlist the cron jobs\n</user_query>"})
    second = blob({"id": "1", "role": "assistant", "content": [{"type": "text", "text": "Two jobs: backup, vacuum."}]})
    gone = "ab" * 32
    root_data = b"".join(b"\x0a\x20" + bytes.fromhex(i) for i in (first[0], gone, second[0]))
    root = hashlib.sha256(root_data).hexdigest()
    assert linked(root_data) == ([first[0], gone, second[0]], None)
    path = tmp_path / "chats" / ("0" * 32) / "c1" / "store.db"
    path.parent.mkdir(parents=True)
    db = Database(path, migrate=False)
    db.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB); CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    for key, data in (first, second, (root, root_data)):
        db.execute("INSERT INTO blobs VALUES (?, ?)", (key, data))
    db.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps({"agentId": "c1", "latestRootBlobId": root}).encode().hex(),))
    db.close()
    errors = index(store, path)["errors"]
    assert len(errors) == 1 and "missing" in errors[0]["error"]
    assert [(r["role"], r["content"]) for r in messages(store, "c1")] == [
        ("user", "list the cron jobs"), ("assistant", "Two jobs: backup, vacuum.")]
