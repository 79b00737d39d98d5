"""``hermes-store migrate --to``: SQLite -> PostgreSQL -> SQLite keeps every row and id."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.db import Database
from hermes_store.pgdb import PgDatabase

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sessions"))
from sess_helpers import FIXTURES  # noqa: E402

TABLES = ["sources", "sessions", "messages", "facts", "entities", "entity_aliases", "fact_entities",
          "memory_entries", "memory_history", "store_meta"]


def _cli(home, *args, url=None):
    base = ["--home", str(home.root)] + (["--database-url", url] if url else [])
    return CliRunner().invoke(cli, base + [str(a) for a in args])


@pytest.fixture
def filled(home):
    """A SQLite home with indexed transcripts, facts with feedback and memory history."""
    assert _cli(home, "sessions", "index", FIXTURES).exit_code == 0
    for text in ["Alice deploys the staging server on Fridays", "Bob owns the PostgreSQL cluster",
                 "东京办公室的网络很慢"]:
        assert _cli(home, "facts", "add", text).exit_code == 0
    assert _cli(home, "facts", "feedback", "helpful", "1").exit_code == 0
    assert _cli(home, "facts", "feedback", "unhelpful", "2").exit_code == 0
    assert _cli(home, "memory", "add", "The user prefers tabs").exit_code == 0
    assert _cli(home, "memory", "add", "--target", "user", "Name: Sam").exit_code == 0
    return home


def _sqlite_rows(path, table):
    with Database(path, readonly=True) as db:
        cols = [r["name"] for r in db.query(f"PRAGMA table_info({table})")]
        return sorted(tuple(r[c] for c in cols) for r in db.query(f"SELECT * FROM {table}")), cols


def test_round_trip_keeps_every_row_and_id(filled, pg_url, tmp_path):
    home = filled
    result = _cli(home, "migrate", "--to", pg_url, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    with Database(home.db_path, readonly=True) as db:
        for table in TABLES:
            assert report["tables"][table] == db.scalar(f"SELECT count(*) FROM {table}"), table
        message_ids = [r["id"] for r in db.query("SELECT id FROM messages ORDER BY id")]
        trust = {r["fact_id"]: r["trust_score"] for r in db.query("SELECT fact_id, trust_score FROM facts")}
    assert report["tables"]["messages"] > 10 and len(trust) == 3
    with PgDatabase(pg_url) as pg:
        assert [r["id"] for r in pg.query("SELECT id FROM messages ORDER BY id")] == message_ids
        assert {r["fact_id"]: r["trust_score"] for r in pg.query("SELECT fact_id, trust_score FROM facts")} == trust
        # identities continue after the copied ids
        new_id = pg.scalar("INSERT INTO facts(content) VALUES ('new one') RETURNING fact_id")
        assert new_id == max(trust) + 1
        pg.execute("DELETE FROM facts WHERE fact_id = %s", (new_id,))
        # the full-text index covers the copied messages
        assert pg.scalar("SELECT count(*) FROM messages WHERE tsv @@ phraseto_tsquery('hermes_search', 'the')") > 0

    back = tmp_path / "back" / "store.db"
    back.parent.mkdir()  # a URL's folder must exist (it is never made)
    result = _cli(home, "migrate", "--to", f"sqlite:///{back}", "--json", url=pg_url)
    assert result.exit_code == 0, result.output
    for table in TABLES:
        assert _sqlite_rows(back, table) == _sqlite_rows(home.db_path, table), table
    hits = "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'the OR a'"
    with Database(back) as db, Database(home.db_path, readonly=True) as original:
        assert db.scalar(hits) == original.scalar(hits) > 0  # FTS rebuilt by the target's triggers
        db.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")


def test_a_non_empty_target_is_refused_and_left_alone(filled, pg_url):
    assert _cli(filled, "migrate", "--to", pg_url).exit_code == 0
    result = _cli(filled, "migrate", "--to", pg_url)
    assert result.exit_code == 1
    assert "already holds" in result.output and "empty store only" in result.output
    with PgDatabase(pg_url) as pg, Database(filled.db_path, readonly=True) as db:
        assert pg.scalar("SELECT count(*) FROM messages") == db.scalar("SELECT count(*) FROM messages")


def test_same_engine_and_bad_url_are_usage_errors(filled):
    result = _cli(filled, "migrate", "--to", "sqlite:///x.db")
    assert result.exit_code == 2 and "already on sqlite" in result.output
    result = _cli(filled, "migrate", "--to", "mysql://u:pw@h/d")
    assert result.exit_code != 0 and "pw" not in result.output


def test_a_target_in_a_missing_folder_is_refused_naming_the_option(filled, pg_url, tmp_path):
    """``migrate --to sqlite:///typo/x.db`` made the folder and copied there; like ``backup`` into
    a missing folder it is refused, naming ``--to`` (not ``--database-url``), creating nothing."""
    assert _cli(filled, "migrate", "--to", pg_url).exit_code == 0
    target = tmp_path / "typo" / "x.db"
    result = _cli(filled, "migrate", "--to", f"sqlite:///{target}", url=pg_url)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {target}: cannot create the store: no directory {target.parent} "
                             "(named by --to; create it first); nothing was created\n")
    assert not target.parent.exists()


def test_server_down_is_one_clear_line(filled, tmp_path):
    url = f"postgresql://sam:hunter2@/x?host={tmp_path}&port=5999&connect_timeout=2"
    result = _cli(filled, "migrate", "--to", url)
    assert result.exit_code == 1
    assert result.output.startswith("Error: postgresql://sam:***@")
    assert "hunter2" not in result.output and "Traceback" not in result.output


def test_round_trip_keeps_message_uids(home, pg_url, tmp_path):
    """Hermes' message uids (SQLite 0012 / pg 0010) survive SQLite -> PostgreSQL -> SQLite."""
    state = tmp_path / "hermes31" / "state.db"
    state.parent.mkdir()
    db = Database(state, migrate=False)
    db.execute((FIXTURES.parent / "fixture_sql" / "hermes_state_v31.sql").read_text(encoding="utf-8"))
    db.close()
    assert _cli(home, "sessions", "index", "--format", "hermes-db", state).exit_code == 0
    query = "SELECT session_id, seq, message_uid FROM messages ORDER BY session_id, seq"
    with Database(home.db_path, readonly=True) as db:
        uids = [tuple(r.values()) for r in db.query(query)]
    assert len(uids) == 7 and all(u[2] for u in uids)
    assert _cli(home, "migrate", "--to", pg_url, "--json").exit_code == 0
    with PgDatabase(pg_url) as pg:
        assert [tuple(r.values()) for r in pg.query(query)] == uids
    back = tmp_path / "back" / "store.db"
    back.parent.mkdir()  # a URL's folder must exist (it is never made)
    assert _cli(home, "migrate", "--to", f"sqlite:///{back}", "--json", url=pg_url).exit_code == 0
    with Database(back, readonly=True) as db:
        assert [tuple(r.values()) for r in db.query(query)] == uids


AUTHOR_COLUMNS = "SELECT content, author_id, author_name, author_is_bot FROM facts ORDER BY content"


def test_migrate_keeps_fact_authors_both_ways(home, pg_url, tmp_path):
    from hermes_store.facts import FactStore

    with FactStore(home) as store:
        store.add_fact("Alice deploys on Fridays", author={"id": "u-42", "name": "Alice", "is_bot": False})
        store.add_fact("The nightly job is a bot's note", author={"id": "b-7", "name": "Helper", "is_bot": True})
        store.add_fact("Bob owns the cluster")
    result = _cli(home, "migrate", "--to", pg_url, "--json")
    assert result.exit_code == 0, result.output
    with PgDatabase(pg_url) as pg:
        assert [tuple(r.values()) for r in pg.query(AUTHOR_COLUMNS)] == [
            ("Alice deploys on Fridays", "u-42", "Alice", False), ("Bob owns the cluster", None, None, None),
            ("The nightly job is a bot's note", "b-7", "Helper", True)]
    back = tmp_path / "back" / "store.db"
    back.parent.mkdir()  # a URL's folder must exist (it is never made)
    result = _cli(home, "migrate", "--to", f"sqlite:///{back}", "--json", url=pg_url)
    assert result.exit_code == 0, result.output
    with Database(back, readonly=True) as db, Database(home.db_path, readonly=True) as original:
        assert db.query(AUTHOR_COLUMNS) == original.query(AUTHOR_COLUMNS)
        assert db.query(AUTHOR_COLUMNS)[0]["author_is_bot"] == 0
    with FactStore(Database(back)) as store:
        alice = store.get_fact(store.find_by_content("Alice deploys on Fridays"))
        assert (alice["author_name"], alice["author_is_bot"]) == ("Alice", False)


def test_migrate_takes_the_embeddings_both_ways_and_the_source_keeps_its_own(filled, pg_url, tmp_path):
    """The semantic extra's vectors go with the store (ids are kept, so each still names its
    message, digest included), to PostgreSQL and back to a ``sqlite:///`` file; the SQLite
    source keeps its vector file."""
    import zlib

    import numpy as np

    from hermes_store.home import Home
    from hermes_store.sessions.embeddings import Embedder
    from hermes_store.sessions.storage import open_session_storage
    from hermes_store.sessions.vectors import VectorStore, embed_pending

    def words(texts):
        out = np.full((len(texts), 8), 0.1, dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, zlib.crc32(text.encode()) % 8] += 1
        return out

    embedder = Embedder("words-8", 8, words)
    home = filled
    vectors, db = VectorStore.for_home(home), home.open_db()
    try:
        embedded = embed_pending(open_session_storage(db), vectors, embedder)["embedded"]
        before = vectors.states("words-8")
    finally:
        db.close()
        vectors.close()
    assert embedded > 5
    result = _cli(home, "migrate", "--to", pg_url, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["vectors"] == embedded
    served = VectorStore.for_home(Home(home.root, database_url=pg_url))
    try:
        assert served.states("words-8") == before and all(d for *_p, d in before.values())
    finally:
        served.close()
    assert (Path(home.root) / "session_vectors.db").exists()  # the SQLite store keeps its own
    back = tmp_path / "back" / "store.db"
    back.parent.mkdir()  # a URL's folder must exist (it is never made)
    result = _cli(home, "migrate", "--to", f"sqlite:///{back}", "--json", url=pg_url)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["vectors"] == embedded
    returned = VectorStore.for_home(Home(home.root, database_url=f"sqlite:///{back}"))
    try:
        assert returned.path == back.parent / "store.db.session_vectors.db" and returned.states("words-8") == before
    finally:
        returned.close()


def test_forgotten_stays_forgotten_after_migrating_both_ways(home, pg_url, tmp_path):
    """`forget`'s tombstones were not copied: after `migrate --to postgresql://...` (and back) the
    next index of a transcript that grew brought a session forgotten for good back."""
    import shutil

    transcripts = tmp_path / "transcripts"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "sample_home" / "sessions", transcripts)
    assert _cli(home, "sessions", "index", transcripts).exit_code == 0
    assert _cli(home, "forget", "20260312_091500_3fa2c1#5").exit_code == 0
    assert _cli(home, "forget", "--session", "20260315_184210_9bd7e4").exit_code == 0
    assert _cli(home, "migrate", "--to", pg_url).exit_code == 0
    back = tmp_path / "back.db"
    assert _cli(home, "migrate", "--to", f"sqlite:///{back}", url=pg_url).exit_code == 0
    tombstones = _sqlite_rows(home.db_path, "forgotten")
    assert len(tombstones[0]) == 2
    assert _sqlite_rows(back, "forgotten") == tombstones
    with PgDatabase(pg_url) as pg:
        assert pg.scalar("SELECT count(*) FROM forgotten") == 2
    for url in (pg_url, f"sqlite:///{back}"):
        with open(transcripts / "20260315_184210_9bd7e4.jsonl", "a", encoding="utf-8") as grown:
            grown.write(json.dumps({"role": "user", "content": f"one more line for {url[:6]}",
                                    "timestamp": 1773600000}) + "\n")
        result = _cli(home, "sessions", "index", transcripts, "--json", url=url)
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["sessions_added"] == 0, (url, result.output)
        assert _cli(home, "sessions", "show", "20260315_184210_9bd7e4", url=url).exit_code == 1, url


def test_counts_read_as_english_in_the_report_and_the_refusal(home, pg_url):
    """`migrate` printed `facts  1 rows` per table and refused a second run with `already holds 4
    row(s)`, where every other count reads `1 row` / `4 rows` (docs/cli.md)."""
    import re

    assert _cli(home, "facts", "add", "Platypus lays eggs").exit_code == 0
    result = _cli(home, "migrate", "--to", pg_url)
    assert result.exit_code == 0, result.output
    counts = [line for line in result.output.splitlines() if line.startswith("  ")]
    assert any(re.fullmatch(r"  facts +1 row", line) for line in counts), result.output
    assert not any(re.search(r"(?<![\d,])1 rows$", line) for line in counts), counts
    again = _cli(home, "migrate", "--to", pg_url)
    assert again.exit_code == 1 and "(s)" not in again.output
    assert re.search(r"already holds (1 row|\d+ rows);", again.output), again.output
