"""hermes_store.pgdb against a real server: migrations, transactions, bounded waits, masking."""

from __future__ import annotations

import re
import threading
import time

import pytest

from hermes_store.db import DatabaseError
from hermes_store.pgdb import (
    MIGRATIONS_TABLE,
    PgDatabase,
    PgUnavailable,
    is_postgres_url,
    mask_url,
    pg_migrations,
)


@pytest.fixture
def pg(pg_url):
    db = PgDatabase(pg_url, writer="host-a:/home/a")
    yield db
    db.close()


def test_opening_applies_every_migration_once(pg, pg_url):
    assert pg.engine == "postgresql"
    versions = [v for v, _ in pg_migrations()]
    assert pg.schema_version == versions[-1]
    rows = pg.query(f"SELECT version, name FROM {MIGRATIONS_TABLE} ORDER BY version")
    assert [r["version"] for r in rows] == versions
    again = PgDatabase(pg_url)
    try:
        assert again.migrate() == versions[-1]
        assert pg.scalar(f"SELECT count(*) FROM {MIGRATIONS_TABLE}") == len(versions)
    finally:
        again.close()


def test_hosts_starting_together_migrate_exactly_once(pg_url):
    opened, errors = [], []

    def open_one():
        try:
            opened.append(PgDatabase(pg_url))
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert opened[0].scalar(f"SELECT count(*) FROM {MIGRATIONS_TABLE}") == len(pg_migrations())
    finally:
        for db in opened:
            db.close()


def test_transaction_commits_or_rolls_back_and_nesting_joins(pg):
    with pg.transaction():
        pg.execute("INSERT INTO store_meta(key, value) VALUES (%s, %s)", ("a", "1"))
        with pg.transaction():
            pg.execute("INSERT INTO store_meta(key, value) VALUES (%s, %s)", ("b", "2"))
    with pytest.raises(RuntimeError), pg.transaction():
        pg.execute("INSERT INTO store_meta(key, value) VALUES (%s, %s)", ("c", "3"))
        raise RuntimeError("boom")
    assert [r["key"] for r in pg.query("SELECT key FROM store_meta ORDER BY key")] == ["a", "b"]


def test_rows_record_their_writer(pg):
    pg.execute("INSERT INTO sessions(id, origin_format) VALUES (%s, %s)", ("s1", "live"))
    assert pg.scalar("SELECT written_by FROM sessions WHERE id = %s", ("s1",)) == "host-a:/home/a"


def test_copy_rows_streams_into_a_table(pg):
    pg.execute("INSERT INTO sessions(id, origin_format) VALUES (%s, %s)", ("s1", "live"))
    count = pg.copy_rows(
        "COPY messages(session_id, seq, role, content) FROM STDIN",
        (("s1", i, "user", f"row {i} text") for i in range(500)),
    )
    assert count == 500
    assert pg.scalar("SELECT count(*) FROM messages WHERE tsv @@ to_tsquery('hermes_search', 'text')") == 500


def test_statement_timeout_is_enforced_by_the_server(pg_url):
    db = PgDatabase(pg_url, statement_timeout=0.5)
    try:
        started = time.monotonic()
        with pytest.raises(PgUnavailable, match="cancelled after 0.5s"):
            db.query("SELECT pg_sleep(5)")
        assert time.monotonic() - started < 4
        assert db.scalar("SELECT 1") == 1  # the pool is still usable afterwards
    finally:
        db.close()


def test_server_down_fails_fast_with_masked_url(tmp_path):
    url = f"postgresql://alice:s3cret-pw@/nodb?host={tmp_path}&port=5999"
    started = time.monotonic()
    with pytest.raises(PgUnavailable) as caught:
        PgDatabase(url, connect_timeout=2)
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert "s3cret-pw" not in message
    assert "alice:***@" in message
    assert "not reachable" in message
    # libpq's hint is its own line: kept apart ("...: No such file or directory; Is the server
    # running ..."), not run into the line before it
    assert re.search(r"[a-z] Is the server", message) is None, message
    assert "; Is the server" in message, message


def test_a_broken_migration_names_its_file(pg_url, tmp_path, monkeypatch):
    bad = tmp_path / "pg"
    bad.mkdir()
    (bad / "0001_broken.sql").write_text("CREATE TABLE x (;\n")
    monkeypatch.setattr("hermes_store.pgdb.pg_schema_dir", lambda: bad)
    with pytest.raises(DatabaseError, match="0001_broken.sql: migration failed"):
        PgDatabase(pg_url)


@pytest.mark.parametrize(("url", "masked"), [
    ("postgresql://bob:pa%40ss@db.example:5432/store", "postgresql://bob:***@db.example:5432/store"),
    ("postgres://bob@db/store", "postgres://bob@db/store"),
    ("postgresql:///store?user=bob&password=hunter2&sslmode=require",
     "postgresql:///store?user=bob&password=***&sslmode=require"),
    ("host=db user=bob password='a b c' dbname=store", "host=db user=bob password=*** dbname=store"),
    ("host=db password=plain dbname=store", "host=db password=*** dbname=store"),
    ("", ""),
])
def test_mask_url_hides_every_password_form(url, masked):
    assert mask_url(url) == masked


def test_is_postgres_url():
    assert is_postgres_url("postgresql://x/y") and is_postgres_url("postgres://x/y")
    assert not is_postgres_url("sqlite:///tmp/x.db") and not is_postgres_url(None)
    with pytest.raises(DatabaseError, match="not a postgresql:// URL"):
        PgDatabase("sqlite:///tmp/x.db")


def test_url_options_are_kept_beside_the_timeouts(pg_url):
    with PgDatabase(pg_url, migrate=False) as admin:
        admin.execute("CREATE SCHEMA other")
    url = pg_url + "&options=-csearch_path%3Dother"
    with PgDatabase(url, statement_timeout=7) as db:
        assert db.scalar("SELECT current_schema()") == "other"
        assert db.scalar("SHOW statement_timeout") == "7s"
        assert db.table_exists("messages") and db.scalar("SELECT count(*) FROM other.messages") == 0


def test_a_database_the_server_refuses_is_not_called_unreachable(pg_server):
    """A server that answered 'database "..." does not exist' was reported as 'PostgreSQL server
    not reachable within 5s': the server was reached at once and said why it refused."""
    with pytest.raises(PgUnavailable) as caught:
        PgDatabase(pg_server.url("no_such_database_here"), connect_timeout=5)
    message = str(caught.value)
    assert "not reachable" not in message, message
    assert "PostgreSQL server refused the connection: " in message
    assert 'database "no_such_database_here" does not exist' in message


def test_size_is_the_stores_own_not_the_whole_databases(pg_url):
    """`sessions stats` said 'Database: 10.7 MB' for an empty store in a schema of its own: the size
    was pg_database_size (the system catalogs and every other schema's tables, another store's
    too). It is now what the store's own relations use."""
    with PgDatabase(pg_url, migrate=False) as admin:
        admin.execute("CREATE SCHEMA empty_store")
        admin.execute("CREATE TABLE ballast AS SELECT repeat('x', 1000) AS t FROM generate_series(1, 5000)")
    with PgDatabase(pg_url + "&options=-csearch_path%3Dempty_store") as db:
        own = db.scalar("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c"
                        " WHERE c.relnamespace = 'empty_store'::regnamespace AND c.relkind IN ('r', 'm', 'S')")
        whole = db.scalar("SELECT pg_database_size(current_database())")
        assert db.size_bytes() == own
        assert 0 < db.size_bytes() < whole - 5_000_000  # neither the ballast table nor the catalogs


@pytest.mark.parametrize(("query", "words"), [
    ("port=abc", 'invalid integer value "abc" for connection option "port"'),
    ("port=5999&sslmode=bogus", 'invalid sslmode value: "bogus"'),
    ("port=1,2,3", "could not match 3 port numbers to 1 hosts"),
])
def test_a_url_value_libpq_refuses_is_an_invalid_url_not_an_unreachable_server(tmp_path, query, words):
    """`port=abc` was reported as 'PostgreSQL server not reachable within 5s: connection is bad:
    invalid integer value ...': no server was tried, the URL is wrong, and the error says so."""
    url = f"postgresql://sam:hunter2@/x?host={tmp_path}&{query}"
    with pytest.raises(DatabaseError) as caught:
        PgDatabase(url, connect_timeout=5)
    message = str(caught.value)
    assert not isinstance(caught.value, PgUnavailable)
    assert "not reachable" not in message and "connection is bad" not in message, message
    assert f"postgresql://sam:***@/x?host={tmp_path}&{query}: invalid database URL: {words}" == message
