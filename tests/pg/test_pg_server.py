"""The test server fixture itself: a real server on a private Unix socket, nothing on TCP."""

from __future__ import annotations

import psycopg
from pg_server import SKIP_PREFIX, pytest_terminal_summary


def test_server_answers_on_its_socket_only(pg_server, pg_url):
    with psycopg.connect(pg_url, connect_timeout=10) as conn:
        listen = conn.execute("SHOW listen_addresses").fetchone()[0]
        sockets = conn.execute("SHOW unix_socket_directories").fetchone()[0]
        version = conn.execute("SHOW server_version_num").fetchone()[0]
    assert listen == ""
    assert sockets == str(pg_server.root)
    assert int(version) >= 130000


def test_each_test_gets_a_fresh_database(pg_url):
    with psycopg.connect(pg_url, connect_timeout=10) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()[0]
        conn.execute("CREATE TABLE probe (x int)")
    assert tables == 0


class _Reporter:
    def __init__(self, skipped):
        self.stats = {"skipped": skipped}
        self.lines = []

    def write_line(self, line, **markup):
        self.lines.append(line)


class _Report:
    def __init__(self, reason):
        self.longrepr = ("file.py", 3, f"Skipped: {reason}")


def test_skip_line_counts_skipped_postgres_tests():
    reporter = _Reporter([_Report(f"{SKIP_PREFIX}: no server here"),
                          _Report(f"{SKIP_PREFIX}: no server here"),
                          _Report("unrelated reason")])
    pytest_terminal_summary(reporter, 0, None)
    assert reporter.lines == [f"{SKIP_PREFIX}: no server here (2 tests)"]


def test_no_line_when_nothing_was_skipped_for_postgres():
    reporter = _Reporter([_Report("unrelated reason")])
    pytest_terminal_summary(reporter, 0, None)
    assert reporter.lines == []
