"""sqlite-utils and Datasette find our FTS5 indexes (issue 15), on new and migrated stores."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import urllib.parse

import pytest
from eco_helpers import (
    FACT_WORD,
    PAST_CAP,
    PLANTED,
    TOKENS,
    build_store,
    get_json,
    run_cli,
    sqlite_utils,
    start_browse,
    stop,
)

from hermes_store.db import Database, migrations

pytest.importorskip("sqlite_utils")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    home = tmp_path_factory.mktemp("eco") / "home"
    home.mkdir()
    return home, build_store(home)


def test_sqlite_utils_searches_messages(store):
    _, db = store
    result = sqlite_utils("search", str(db), "messages", PLANTED)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) == 1 and PLANTED in rows[0]["content"] and rows[0]["role"] == "user"


def test_sqlite_utils_searches_facts(store):
    _, db = store
    result = sqlite_utils("search", str(db), "facts", FACT_WORD)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["content"] for r in rows] == [f"The staging cluster is called {FACT_WORD}"]


def test_the_tool_output_cap_still_holds(store):
    home, db = store
    assert json.loads(sqlite_utils("search", str(db), "messages", PAST_CAP).stdout) == []
    assert json.loads(sqlite_utils("search", str(db), "messages", "capped").stdout)[0]["role"] == "tool"
    found = json.loads(run_cli(home, "tool", "session_search", json.dumps({"query": PAST_CAP})))
    assert found["success"] and found["count"] == 0


def test_detect_fts_and_integrity(store):
    _, db = store
    code = ("import sqlite_utils, sys; d = sqlite_utils.Database(sys.argv[1]); "
            "print(*(d[t].detect_fts() for t in ('messages', 'facts', 'builtin_index_entries')))")
    out = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["messages_fts", "facts_fts", "builtin_index_fts"], out.stderr
    with Database(db) as conn:
        for table in ("messages_fts", "facts_fts", "builtin_index_fts"):
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")


def test_migration_converts_a_version_5_store(tmp_path):
    path = tmp_path / "old.db"
    with Database(path, migrate=False) as db:
        with db.write():
            for version, sql in migrations():
                if version <= 5:
                    db.conn.execute(sql.read_text(encoding="utf-8"))
                    db.conn.execute(f"PRAGMA user_version={version}")
            db.execute("INSERT INTO sessions(id, origin_format, started_at) VALUES ('s1', 'live', 1767608100)")
            db.execute("INSERT INTO messages(session_id, seq, role, content) VALUES ('s1', 0, 'user', ?)",
                       (f"old {PLANTED} message",))
            db.execute("INSERT INTO messages(session_id, seq, role, content) VALUES ('s1', 1, 'tool', ?)",
                       ("y " * 5000 + PAST_CAP,))
            db.execute("INSERT INTO facts(content, tags) VALUES (?, 'infra')", (f"old {FACT_WORD} fact",))
            db.execute("INSERT INTO builtin_index_entries(target, entry_index, content) VALUES ('memory', 1, ?)",
                       (f"old {FACT_WORD} memory entry",))
    assert json.loads(sqlite_utils("search", str(path), "messages", PLANTED).stdout or "null") is None
    with Database(path) as db:  # opening migrates
        assert db.user_version >= 6
        for table in ("messages_fts", "facts_fts", "builtin_index_fts"):
            db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
    rows = json.loads(sqlite_utils("search", str(path), "messages", PLANTED).stdout)
    assert [r["content"] for r in rows] == [f"old {PLANTED} message"]
    assert json.loads(sqlite_utils("search", str(path), "messages", PAST_CAP).stdout) == []
    assert len(json.loads(sqlite_utils("search", str(path), "facts", FACT_WORD).stdout)) == 1
    assert len(json.loads(sqlite_utils("search", str(path), "builtin_index_entries", FACT_WORD).stdout)) == 1


@pytest.fixture(scope="module")
def datasette(store, tmp_path_factory):
    pytest.importorskip("datasette")
    home, _ = store
    proc, base = start_browse(home, tmp_path_factory.mktemp("ds") / "datasette.log")
    yield base
    stop(proc)


def _rows(base: str, table: str, query: str) -> list[dict]:
    url = f"{base}/hermes_store/{table}.json?_shape=array&_search={urllib.parse.quote(query)}"
    return get_json(url)


def test_datasette_search_filters_messages_and_facts(datasette):
    messages = _rows(datasette, "messages", PLANTED)
    assert len(messages) == 1 and PLANTED in messages[0]["content"]
    assert len(get_json(f"{datasette}/hermes_store/messages.json?_shape=array")) > 1  # unfiltered: more
    facts = _rows(datasette, "facts", FACT_WORD)
    assert [f["content"] for f in facts] == [f"The staging cluster is called {FACT_WORD}"]
    assert _rows(datasette, "messages", PAST_CAP) == []


def test_datasette_is_read_only_and_local(datasette):
    assert datasette.startswith("http://127.0.0.1:")
    info = get_json(f"{datasette}/-/databases.json")
    assert [d["name"] for d in info] == ["hermes_store"] and info[0]["is_mutable"] is True
    sql = urllib.parse.quote("insert into facts(content) values ('sneaky')")
    with pytest.raises(Exception):  # noqa: B017 (Datasette answers 400 for a write statement)
        get_json(f"{datasette}/hermes_store.json?sql={sql}")


def test_datasette_canned_queries(datasette):
    timeline = get_json(f"{datasette}/hermes_store/memory_timeline.json?_shape=array")
    assert timeline and timeline[0]["action"] == "add" and timeline[0]["new_text"] == "Deploys happen on Fridays"
    trust = get_json(f"{datasette}/hermes_store/facts_by_trust.json?_shape=array")
    assert len(trust) == 2 and trust[0]["trust"] >= trust[1]["trust"]
    per_day = get_json(f"{datasette}/hermes_store/sessions_per_day.json?_shape=array")
    assert per_day == [{"day": "2026-01-05", "source": "telegram", "sessions": 1, "messages": 4}]


def _request(base: str, path: str, host: str | None = None, cookie: str | None = None):
    """GET ``path`` on the browse server at ``base`` with exactly these headers; (status, headers, body)."""
    port = int(base.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    conn.putrequest("GET", path, skip_host=True)
    conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
    if cookie is not None:
        conn.putheader("Cookie", cookie)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read().decode("utf-8", "replace")
    conn.close()
    return response.status, response.getheader("Set-Cookie"), body


def test_browse_refuses_requests_without_the_token(datasette):
    """Another local user can connect to 127.0.0.1 too: without this run's token nothing is served."""
    for path in ("/", "/hermes_store/facts.json", "/-/versions.json", "/hermes_store.json?sql=select+1"):
        status, cookie, body = _request(datasette, path)
        assert status == 403 and cookie is None and "kestrel" not in body, path
    status, _, _ = _request(datasette, "/hermes_store/facts.json?token=" + "A" * 43)
    assert status == 403
    status, _, _ = _request(datasette, "/", cookie=f"hermes_store_browse_{datasette.rsplit(':', 1)[1]}=wrong")
    assert status == 403


def test_browse_token_sets_a_strict_http_only_cookie_that_lets_one_navigate(datasette):
    port = datasette.rsplit(":", 1)[1]
    token = TOKENS[datasette]
    status, set_cookie, _ = _request(datasette, f"/?token={token}")
    assert status == 200
    name_value, *flags = [part.strip() for part in set_cookie.split(";")]
    assert name_value == f"hermes_store_browse_{port}={token}"
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(flags)
    status, _, body = _request(datasette, "/hermes_store/facts.json?_shape=array", cookie=name_value)
    assert status == 200 and FACT_WORD in body
    # the token is taken out of the query string: Datasette never reads it as a column filter
    status, _, body = _request(datasette, f"/hermes_store/facts.json?_shape=array&token={token}")
    assert status == 200 and len(json.loads(body)) == 2


def test_browse_refuses_a_foreign_host_even_with_the_token(datasette):
    """DNS rebinding: a page of evil.example re-pointed at 127.0.0.1 sends Host: evil.example."""
    port = datasette.rsplit(":", 1)[1]
    token = TOKENS[datasette]
    cookie = f"hermes_store_browse_{port}={token}"
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{int(port) + 1}",
                 f"localhost.evil.example:{port}", ""):
        status, set_cookie, body = _request(datasette, f"/hermes_store/facts.json?token={token}", host, cookie)
        assert status == 400 and set_cookie is None and FACT_WORD not in body, host
    assert _request(datasette, f"/?token={token}", f"localhost:{port}")[0] == 200


def test_stopping_browse_stops_datasette(store, tmp_path):
    """SIGTERM to `hermes-store browse` ends its Datasette child too (no orphaned server)."""
    pytest.importorskip("datasette")
    home, _ = store
    proc, base = start_browse(home, tmp_path / "datasette.log")
    stop(proc)
    with pytest.raises(OSError):  # nothing answers on the port any more
        get_json(base + "/-/versions.json")


def test_stopping_browse_exit_status(store, tmp_path):
    """Ctrl-C ends `hermes-store browse` with 130 (docs/cli.md, "Exit codes") and SIGTERM with 0;
    both used to give 241 (Datasette's -15 passed to sys.exit)."""
    import signal

    pytest.importorskip("datasette")
    home, _ = store
    proc, _ = start_browse(home, tmp_path / "int.log")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    proc, _ = start_browse(home, tmp_path / "term.log")
    proc.terminate()
    assert proc.wait(timeout=30) == 0


def test_browse_on_a_busy_port_says_so_before_printing_a_url(store, tmp_path):
    """A second browse on a port in use used to print `Serving ...; open http://127.0.0.1:PORT/?token=NEW`
    (a URL the other server answers) and then fail in Datasette's log; now it refuses first."""
    pytest.importorskip("datasette")
    home, _ = store
    proc, base = start_browse(home, tmp_path / "first.log")
    try:
        port = base.rsplit(":", 1)[1]
        done = subprocess.run([sys.executable, "-c", "from hermes_store.cli import main; main()",
                               "--home", str(home), "browse", "--port", port],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    finally:
        stop(proc)
    assert done.returncode == 1
    assert f"127.0.0.1:{port} is already in use" in done.stderr and "--port 0" in done.stderr
    assert "token=" not in done.stderr and "Serving" not in done.stderr
