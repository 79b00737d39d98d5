"""The session storage seam: one interface, picked by ``db.engine``, holding all session SQL."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import hermes_store
from hermes_store.query import Match, QueryRejected, Term
from hermes_store.sessions import SessionIndex, index_paths, prune_sessions, stats
from hermes_store.sessions import storage as storage_mod
from hermes_store.sessions.search import search_messages
from hermes_store.sessions.session_search import handle_session_search
from hermes_store.sessions.storage import Filters, SessionStorage, open_session_storage
from hermes_store.sessions.storage_sqlite import SqliteSessionStorage
from hermes_store.tooling import ToolContext

ROOT = Path(hermes_store.__file__).parent
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|PRAGMA|CREATE|DROP|ALTER|VALUES|MATCH)\b.*\b"
                 r"(FROM|INTO|SET|WHERE|TABLE|INDEX|VIEW|TRIGGER|integrity_check|cache_size)\b|"
                 r"\bPRAGMA\b", re.S)
# modules of the sessions area and its front ends that may hold SQL text
SQL_HOMES = {"sessions/storage_sqlite.py", "sessions/storage_pg.py",
             "sessions/storage_pg_bulk.py", "sessions/storage_pg_health.py",  # parts of storage_pg
             "sessions/storage_sql.py",  # statements both engines share
             "sessions/storage_vectors_sql.py",  # the embeddings' rows, both engines (semantic extra)
             "sessions/storage_vectors_pg.py",  # what PostgreSQL's embedding rows do otherwise
             "sessions/storage_pg_rank.py",  # part of storage_pg: term counts for the ranking
             "sessions/storage_pg_snippets.py",  # part of storage_pg: excerpts of a page of hits
             "sessions/importers/hermes_db.py"}  # reads a FOREIGN Hermes state.db, read-only
# importers of other programs' SQLite files (Cursor, OpenCode, ...) may hold read-only statements
FOREIGN_READERS = ("sessions/importers/",)
READ_ONLY = re.compile(r"\s*(SELECT|WITH|PRAGMA table_info)\b", re.I)
CHECKED = ["sessions", "cli/sessions.py", "cli/sessions_search.py", "cli/doctor.py", "cli/status.py",
           "recall.py", "tools.py"]


def _sql_literals(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal (docstrings aside) that reads like SQL."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value) for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        texts = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            texts = [node.value]
        elif isinstance(node, ast.JoinedStr):
            texts = ["".join(v.value for v in node.values if isinstance(v, ast.Constant))]
        found += [(node.lineno, text[:60]) for text in texts if SQL.search(text)]
    return found


def test_no_session_sql_outside_the_storage_module():
    files = []
    for entry in CHECKED:
        target = ROOT / entry
        files += sorted(target.rglob("*.py")) if target.is_dir() else [target]
    offenders = []
    for path in files:
        module = str(path.relative_to(ROOT))
        if module in SQL_HOMES:
            continue
        literals = _sql_literals(path)
        if module.startswith(FOREIGN_READERS):  # readers of other programs' databases only read
            literals = [(line, text) for line, text in literals if not READ_ONLY.match(text)]
        offenders += [f"{module}:{line}: {text!r}" for line, text in literals]
    assert not offenders, "SQL outside sessions/storage_sqlite.py:\n" + "\n".join(offenders)


def test_the_scan_finds_sql():
    """The scan above is not blind: the storage module is full of SQL."""
    assert len(_sql_literals(ROOT / "sessions/storage_sqlite.py")) > 30


def test_factory_picks_the_implementation_by_engine(home):
    db = home.open_db()
    try:
        assert db.engine == "sqlite"
        storage = open_session_storage(db)
        assert isinstance(storage, SqliteSessionStorage) and storage.ready()
        db.engine = "postgresql-not-installed"
        with pytest.raises(ValueError, match="postgresql-not-installed"):
            open_session_storage(db)
    finally:
        db.close()


class _Recording(SqliteSessionStorage):
    """A second engine registered through the dict: it sees plain values, never SQL."""

    calls: list[tuple[str, object]] = []

    def hits(self, match, filters, *, sort, budget):
        _Recording.calls.append(("hits", match))
        return super().hits(match, filters, sort=sort, budget=budget)

    def add_session(self, session_id, **fields):
        _Recording.calls.append(("add_session", fields["origin_format"]))
        return super().add_session(session_id, **fields)

    def bulk_writer(self, *, pipeline, on_commit):
        _Recording.calls.append(("bulk_writer", pipeline))
        return super().bulk_writer(pipeline=pipeline, on_commit=on_commit)


def test_callers_go_through_the_registered_storage(home, tmp_path, monkeypatch):
    monkeypatch.setitem(storage_mod.STORAGE_ENGINES, "recording",
                        f"{__name__}:_Recording")
    monkeypatch.setattr(_Recording, "calls", [])
    db = home.open_db()
    db.engine = "recording"
    try:
        with SessionIndex(db) as index:
            sid = index.create_session(title="deploy notes")
            index.append_message(sid, "user", "why does deploy.sh fail on staging?")
        path = tmp_path / "20260101_000000_abcdef.jsonl"
        path.write_text(json.dumps({"role": "user", "content": "the staging box is down"}) + "\n")
        assert index_paths(db, [path])["messages_added"] == 1
        result = search_messages(db, "staging", limit=5)
        assert result.count == 2
        assert stats(db)["messages"] == 2
        assert prune_sessions(db, 10_000 * 86400.0, dry_run=True) == []
    finally:
        db.close()
    kinds = [name for name, _ in _Recording.calls]
    assert kinds[:2] == ["add_session", "bulk_writer"] and "hits" in kinds
    assert all(isinstance(arg, Match) for name, arg in _Recording.calls if name == "hits")


def test_rejected_match_raises_query_rejected(home, monkeypatch):
    """An engine refusal surfaces as the neutral QueryRejected, not as an apsw error."""
    import hermes_store.sessions.storage_sqlite as sqlite_mod

    monkeypatch.setattr(sqlite_mod, "to_fts5", lambda match: '"x" AND')
    db = home.open_db()
    try:
        storage = open_session_storage(db)
        with pytest.raises(QueryRejected):
            storage.hits(Term(("x",)), Filters(), sort="relevance", budget=10)
    finally:
        db.close()


def test_interface_is_abstract_and_complete():
    with pytest.raises(TypeError):
        SessionStorage(None)  # type: ignore[abstract]
    assert not getattr(SqliteSessionStorage, "__abstractmethods__", set())
    assert {"hits", "hits_at", "snippet", "bulk_writer", "add_session", "append_message",
            "delete_session", "lineage_rows", "stats"} <= set(SessionStorage.__abstractmethods__)


def test_tool_reads_through_storage(home):
    with SessionIndex(home) as index:
        sid = index.create_session(title="release plan")
        for i in range(40):
            index.append_message(sid, "user" if i % 2 == 0 else "assistant", f"step {i} of the release")
        index.end_session(sid)
    ctx = ToolContext(home=home)
    read = handle_session_search({"session_id": sid}, ctx)
    assert read["truncated"] is True and len(read["messages"]) == 30
    around = read["messages"][19]["id"]
    scroll = handle_session_search({"session_id": sid, "around_message_id": around, "window": 2}, ctx)
    assert [m["id"] for m in scroll["messages"]] == list(range(around - 2, around + 3))
    # Hermes' get_messages_around counts the slice on each side of the anchor (issue 13)
    assert scroll["messages_before"] == 2 and scroll["messages_after"] == 2
    last = read["messages"][-1]["id"]
    end = handle_session_search({"session_id": sid, "around_message_id": last, "window": 2}, ctx)
    assert [m["id"] for m in end["messages"]] == [last - 2, last - 1, last]
    assert end["messages_after"] == 0 and end["messages_before"] > 0
    browse = handle_session_search({}, ctx)
    assert browse["results"][0]["preview"] == "step 0 of the release"
    titled = handle_session_search({"query": "release plan"}, ctx)
    assert titled["results"][0]["matched_role"] == "session_title"
