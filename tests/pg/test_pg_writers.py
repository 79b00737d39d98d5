"""Items read from a shared PostgreSQL store say which host / home wrote them (``written_by``,
``host:home``): facts in ``fact_store`` and ``recall`` output, sessions in ``recall`` and in every
``session_search`` mode (beside, never inside, Hermes' ``session_meta``), and memory history. A SQLite store belongs to one home and carries no such field."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.home import Home
from hermes_store.pgdb import writer_label
from hermes_store.sessions import SessionIndex
from hermes_store.tools import handle_tool_call


def _tool(home: Home, name: str, args: dict, session_id: str = "") -> dict:
    return json.loads(handle_tool_call(name, args, home=home, session_id=session_id))


def _write_as(home: Home, fact: str, message: str, memory: str) -> None:
    assert _tool(home, "fact_store", {"action": "add", "content": fact})["success"]
    with home.open_db() as db:
        index = SessionIndex(db)
        sid = index.create_session(f"s-{home.root.name}", source="cli", title=f"{home.root.name} work")
        index.append_message(sid, "user", message)
    assert _tool(home, "memory", {"action": "add", "target": "memory", "content": memory}, "sess-1")["success"]


@pytest.fixture
def two_homes(tmp_path, pg_store_url, monkeypatch):
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    homes = [Home(tmp_path / name, database_url=pg_store_url).ensure() for name in ("alpha", "beta")]
    _write_as(homes[0], "the staging cluster lives in rack 7", "alpha reboots the staging cluster",
              "alpha keeps the staging notes")
    _write_as(homes[1], "the staging database runs Postgres 16", "beta migrates the staging database",
              "beta keeps the database notes")
    return homes


def test_fact_store_output_names_the_writing_home(two_homes):
    alpha, beta = two_homes
    by_content = {r["content"]: r["written_by"] for r in
                  _tool(beta, "fact_store", {"action": "search", "query": "staging"})["results"]}
    assert by_content == {"the staging cluster lives in rack 7": writer_label(alpha.root),
                          "the staging database runs Postgres 16": writer_label(beta.root)}
    probe = _tool(alpha, "fact_store", {"action": "list"})["facts"]
    assert {f["written_by"] for f in probe} == {writer_label(alpha.root), writer_label(beta.root)}


def test_recall_names_the_writing_home_of_facts_and_sessions(two_homes):
    alpha, beta = two_homes
    out = _tool(alpha, "recall", {"query": "staging", "kinds": ["facts", "sessions"]})
    seen = {(item["kind"], item["written_by"]) for item in out["results"]}
    assert seen == {(kind, writer_label(home.root)) for kind in ("facts", "sessions") for home in two_homes}
    text = CliRunner().invoke(cli, ["--home", str(beta.root), "--database-url", beta.database_url(),
                                    "recall", "staging"]).output
    assert f"by {writer_label(alpha.root)}" in text and f"(by {writer_label(beta.root)})" in text


def test_session_search_names_the_writing_home_in_every_mode(two_homes):
    alpha, beta = two_homes
    found = _tool(alpha, "session_search", {"query": "staging"})
    assert {(r["session_id"], r["written_by"]) for r in found["results"]} == {
        ("s-alpha", writer_label(alpha.root)), ("s-beta", writer_label(beta.root))}
    browsed = _tool(alpha, "session_search", {})
    assert {(r["session_id"], r["written_by"]) for r in browsed["results"]} >= {
        ("s-beta", writer_label(beta.root))}
    anchor = next(r for r in found["results"] if r["session_id"] == "s-beta")["match_message_id"]
    read = _tool(alpha, "session_search", {"session_id": "s-beta"})
    scrolled = _tool(alpha, "session_search", {"session_id": "s-beta", "around_message_id": anchor})
    assert read["written_by"] == scrolled["written_by"] == writer_label(beta.root)
    assert "written_by" not in read["session_meta"]  # Hermes' four keys stay as they are


def test_memory_history_names_its_home_and_stays_per_home(two_homes):
    alpha, beta = two_homes
    for home, entry in ((alpha, "alpha keeps the staging notes"), (beta, "beta keeps the database notes")):
        result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", home.database_url(),
                                          "memory", "history", "--json"])
        events = json.loads(result.stdout)
        assert [(e["new_text"], e["written_by"]) for e in events] == [(entry, writer_label(home.root))]


def test_a_sqlite_store_carries_no_writer_field(home):
    _write_as(home, "the staging cluster lives in rack 7", "reboot the staging cluster", "staging notes")
    out = _tool(home, "recall", {"query": "staging"})
    assert out["count"] >= 3 and all("written_by" not in item for item in out["results"])
    assert all("written_by" not in r for r in _tool(home, "fact_store", {"action": "search", "query": "staging"})["results"])
    found = _tool(home, "session_search", {"query": "staging"})
    assert found["results"] and all("written_by" not in r for r in found["results"])
    read = _tool(home, "session_search", {"session_id": found["results"][0]["session_id"]})
    assert read["success"] and "written_by" not in read
