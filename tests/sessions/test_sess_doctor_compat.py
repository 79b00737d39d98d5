"""doctor [--fix], and the index is readable by stdlib sqlite3 and sqlite-utils (subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from sess_helpers import core, index_json

from hermes_store.db import Database


def test_doctor_ok_then_detects_and_fixes_fts_damage(run, home, fixtures):
    index_json(run, *core(fixtures))
    result = run("doctor")
    assert result.exit_code == 0, result.output
    assert "ok     integrity_check" in result.output
    assert "ok     fts:messages_fts" in result.output
    assert "ok     match_probe" in result.output

    with Database(home.db_path) as db:  # an index entry for a row that does not exist
        db.execute("INSERT INTO messages_fts(rowid, search_content, cjk) VALUES (987654, 'ghost', NULL)")
    result = run("doctor")
    assert result.exit_code == 1
    assert "FAIL   fts:messages_fts" in result.output

    result = run("doctor", "--fix", "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    fts = next(c for c in report["checks"] if c["check"] == "fts:messages_fts")
    assert fts["fixed"] is True and report["ok"] is True
    assert run("doctor").exit_code == 0
    with Database(home.db_path) as db:
        assert db.query("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'ghost'") == []
        assert len(db.query("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'chmod'")) == 1


def test_doctor_on_empty_store(run):
    result = run("doctor")
    assert result.exit_code == 0, result.output


READER = textwrap.dedent("""
    import json, sqlite3, sys
    import sqlite_utils

    path = sys.argv[1]
    con = sqlite3.connect(path)
    std = con.execute(
        "SELECT m.session_id, snippet(messages_fts, 0, '[', ']', '...', 6) FROM messages_fts"
        " JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH ? ORDER BY rank",
        ("chmod",)).fetchall()
    cjk = con.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?",
                      ('cjk:"桂林"',)).fetchall()
    con.close()
    db = sqlite_utils.Database(path)
    utils = [r["session_id"] for r in db.query(
        "SELECT m.session_id FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
        " WHERE messages_fts MATCH :q", {"q": "kubernetes"})]
    tables = sorted(db.table_names())
    print(json.dumps({"std": std, "cjk": len(cjk), "utils": utils, "tables": tables,
                      "version": sqlite3.sqlite_version}))
""")


def test_readable_from_stdlib_sqlite3_and_sqlite_utils(run, home, fixtures, state_db):
    index_json(run, *core(fixtures), state_db)
    out = subprocess.run([sys.executable, "-c", READER, str(home.db_path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert len(data["std"]) == 1
    assert data["std"][0][0] == "20260105_101500_a1b2c3" and "[chmod]" in data["std"][0][1]
    assert data["cjk"] == 2
    assert set(data["utils"]) == {"20260110_080000_aaaaaa", "20260110_090000_bbbbbb"}
    assert {"sessions", "messages", "sources", "messages_fts"} <= set(data["tables"])
