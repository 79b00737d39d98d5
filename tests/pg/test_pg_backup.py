"""``backup`` / ``restore`` on a PostgreSQL store: a consistent copy while writers run, restored
into a fresh database with every write acknowledged before the backup began; the ``--force``
rule; a refusal is a non-zero exit naming the reason (never a false success)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.db import Database
from hermes_store.pgdb import PgDatabase

WRITER = textwrap.dedent("""
    import sys, time
    from hermes_store.home import Home
    from hermes_store.facts.store import FactStore
    from hermes_store.sessions.live import SessionIndex

    url, root, log, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    home = Home(root, database_url=url)
    index = SessionIndex(home.open_db())
    facts = FactStore(home.open_db())
    sid = index.create_session("writer-session", title="writer")
    end = time.time() + seconds
    n = 0
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"ready {time.time()!r}\\n"); out.flush()
        while time.time() < end:
            n += 1
            mid = index.append_message(sid, "user", f"message number {n} about kubernetes")
            out.write(f"message {mid} {time.time()!r}\\n"); out.flush()
            fid = facts.add_fact(f"fact number {n} about deploys", category="general")["fact_id"]
            out.write(f"fact {fid} {time.time()!r}\\n"); out.flush()
""")


def _cli(root: Path, url: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--home", str(root), "--database-url", url, *args])
    return result.exit_code, result.stdout, result.stderr


def _acknowledged(log: Path, before: float) -> tuple[set[int], set[int]]:
    messages, facts = set(), set()
    for line in log.read_text(encoding="utf-8").splitlines():
        kind, *rest = line.split()
        if kind == "ready":
            continue
        ident, when = rest
        if float(when) < before:
            (messages if kind == "message" else facts).add(int(ident))
    return messages, facts


def test_backup_while_writing_restores_every_acknowledged_write(tmp_path, pg_server):
    url = pg_server.create_database("backup_live")
    fresh = pg_server.create_database("backup_fresh")
    root = tmp_path / "home"
    log = tmp_path / "writer.log"
    PgDatabase(url).close()  # migrated before the writer starts
    writer = subprocess.Popen([sys.executable, "-c", WRITER, url, str(root), str(log), "6"])
    try:
        deadline = time.time() + 30
        while time.time() < deadline and (not log.exists() or log.read_text().count("fact") < 20):
            time.sleep(0.1)
        began = time.time()
        code, out, err = _cli(root, url, "backup", str(tmp_path / "store.bak"), "--json")
        assert code == 0, err
        reply = json.loads(out)
        assert reply["engine"] == "postgresql" and Path(reply["backup"]).is_file()
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0
    messages, facts = _acknowledged(log, began)
    assert len(messages) >= 20 and len(facts) >= 20

    code, out, err = _cli(tmp_path / "other", fresh, "restore", str(tmp_path / "store.bak"), "--json")
    assert code == 0, err
    restored = json.loads(out)
    with PgDatabase(fresh) as db:
        got_messages = {r["id"] for r in db.query("SELECT id FROM messages")}
        got_facts = {r["fact_id"] for r in db.query("SELECT fact_id FROM facts")}
        assert messages <= got_messages and facts <= got_facts
        assert restored["tables"]["messages"] == len(got_messages)
        assert restored["tables"]["facts"] == len(got_facts)
    # the live store kept growing after the snapshot; the backup holds none of it half
    with PgDatabase(url) as live:
        assert live.scalar("SELECT count(*) FROM facts") > len(got_facts)
    # the restored store answers a search like the original
    code, out, _ = _cli(tmp_path / "other", fresh, "sessions", "search", "kubernetes", "--json")
    assert code == 0 and "kubernetes" in out


def test_restore_force_rule_on_postgresql(tmp_path, pg_server):
    url = pg_server.create_database("restore_rule")
    root = tmp_path / "home"
    _cli(root, url, "facts", "add", "the deploy runs on fridays")
    code, out, err = _cli(root, url, "backup", str(tmp_path), "--json")
    assert code == 0, err
    backup = json.loads(out)["backup"]
    # unchanged since the backup: restored without --force
    code, _, err = _cli(root, url, "restore", backup)
    assert code == 0, err
    _cli(root, url, "facts", "add", "a fact written after the backup")
    code, _, err = _cli(root, url, "restore", backup)
    assert code == 1 and "refusing to overwrite" in err and "--force" in err
    with PgDatabase(url) as db:
        assert db.scalar("SELECT count(*) FROM facts") == 2  # nothing lost by the refusal
    code, _, err = _cli(root, url, "restore", backup, "--force")
    assert code == 0, err
    with PgDatabase(url) as db:
        assert [r["content"] for r in db.query("SELECT content FROM facts")] == ["the deploy runs on fridays"]


def test_restore_of_a_bad_file_fails_and_touches_nothing(tmp_path, pg_server):
    url = pg_server.create_database("restore_bad")
    root = tmp_path / "home"
    _cli(root, url, "facts", "add", "kept fact")
    bad = tmp_path / "bad.db"
    bad.write_text("not a database")
    code, _, err = _cli(root, url, "restore", str(bad))
    assert code == 1 and "not a SQLite database" in err
    with PgDatabase(url) as db:
        assert db.scalar("SELECT count(*) FROM facts") == 1


def test_pg_backup_restores_into_a_sqlite_home(tmp_path, pg_server):
    url = pg_server.create_database("backup_cross")
    _cli(tmp_path / "home", url, "facts", "add", "crosses engines")
    code, out, err = _cli(tmp_path / "home", url, "backup", str(tmp_path / "x.bak"), "--json")
    assert code == 0, err
    target = tmp_path / "sqlite-home"
    result = CliRunner().invoke(cli, ["--home", str(target), "restore", str(tmp_path / "x.bak")])
    assert result.exit_code == 0, result.stderr
    with Database(target / "hermes_store.db", readonly=True) as db:
        assert db.scalar("SELECT content FROM facts") == "crosses engines"


def test_backup_and_restore_keep_fact_authors(tmp_path, pg_server):
    from hermes_store.facts import FactStore
    from hermes_store.home import Home

    url = pg_server.create_database("backup_author")
    with FactStore(Home(tmp_path / "home", database_url=url).ensure()) as store:
        store.add_fact("Alice deploys on Fridays", author={"id": "u-42", "name": "Alice", "is_bot": False})
        store.add_fact("Bob owns the cluster")
    code, out, err = _cli(tmp_path / "home", url, "backup", str(tmp_path / "a.bak"), "--json")
    assert code == 0, err
    query = "SELECT content, author_id, author_name, author_is_bot FROM facts ORDER BY content"
    target = tmp_path / "sqlite-home"  # a PostgreSQL backup restored into a SQLite home
    result = CliRunner().invoke(cli, ["--home", str(target), "restore", str(tmp_path / "a.bak")])
    assert result.exit_code == 0, result.stderr
    with Database(target / "hermes_store.db", readonly=True) as db:
        assert [tuple(r.values()) for r in db.query(query)] == [
            ("Alice deploys on Fridays", "u-42", "Alice", 0), ("Bob owns the cluster", None, None, None)]
    fresh = pg_server.create_database("backup_author_back")  # and back into PostgreSQL
    code, _, err = _cli(tmp_path / "other", fresh, "restore", str(tmp_path / "a.bak"))
    assert code == 0, err
    with PgDatabase(fresh) as db:
        assert [tuple(r.values()) for r in db.query(query)] == [
            ("Alice deploys on Fridays", "u-42", "Alice", False), ("Bob owns the cluster", None, None, None)]


def test_a_backup_keeps_what_was_forgotten_forgotten(tmp_path, pg_server):
    """A PostgreSQL backup left out `forget`'s tombstones: restored, the next index of a
    transcript that grew brought a session forgotten for good back. A backup taken before the
    tombstones were copied (its recorded rows name no `forgotten` table) still restores onto the
    store it was taken of without --force."""
    import shutil

    url = pg_server.create_database("backup_forgotten")
    root = tmp_path / "home"
    transcripts = tmp_path / "transcripts"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "sample_home" / "sessions", transcripts)
    assert _cli(root, url, "sessions", "index", str(transcripts))[0] == 0
    assert _cli(root, url, "forget", "--session", "20260315_184210_9bd7e4")[0] == 0
    code, _, err = _cli(root, url, "backup", str(tmp_path / "f.bak"))
    assert code == 0, err
    fresh = pg_server.create_database("backup_forgotten_restored")
    code, _, err = _cli(root, fresh, "restore", str(tmp_path / "f.bak"))
    assert code == 0, err
    with open(transcripts / "20260315_184210_9bd7e4.jsonl", "a", encoding="utf-8") as grown:
        grown.write(json.dumps({"role": "user", "content": "one more line", "timestamp": 1773600000}) + "\n")
    code, out, err = _cli(root, fresh, "sessions", "index", str(transcripts), "--json")
    assert code == 0, err
    assert json.loads(out)["sessions_added"] == 0, out
    assert _cli(root, fresh, "sessions", "show", "20260315_184210_9bd7e4")[0] == 1

    with Database(tmp_path / "f.bak") as older:  # as a backup taken before this fix recorded it
        recorded = json.loads(older.scalar("SELECT value FROM store_meta WHERE key = 'backup_fingerprint'"))
        recorded.pop("forgotten")
        older.execute("DELETE FROM forgotten")
        older.execute("UPDATE store_meta SET value = ? WHERE key = 'backup_fingerprint'", (json.dumps(recorded),))
    other = pg_server.create_database("backup_forgotten_older")
    assert _cli(root, other, "restore", str(tmp_path / "f.bak"))[0] == 0
    code, _, err = _cli(root, other, "restore", str(tmp_path / "f.bak"))
    assert code == 0, err


def test_restore_force_of_a_backup_older_than_the_memory_history(tmp_path, pg_server):
    """A backup taken before the first memory write, restored with ``--force`` after one, failed
    with ``memory_history: copied 0 of -1 rows, 0 stored; rolled back`` (exit 1): the history rows
    the store kept were taken off the backup's count. The history is kept and the rest restored."""
    url = pg_server.create_database("restore_older")
    root = tmp_path / "home"
    _cli(root, url, "facts", "add", "the deploy runs on fridays")
    code, out, err = _cli(root, url, "backup", str(tmp_path), "--json")
    assert code == 0, err
    _cli(root, url, "memory", "add", "written after the backup")
    _cli(root, url, "facts", "add", "a fact written after the backup")
    code, _, err = _cli(root, url, "restore", json.loads(out)["backup"], "--force")
    assert code == 0, err
    with PgDatabase(url) as db:
        assert [r["content"] for r in db.query("SELECT content FROM facts")] == ["the deploy runs on fridays"]
        assert db.scalar("SELECT count(*) FROM memory_history") == 1  # append-only: kept
