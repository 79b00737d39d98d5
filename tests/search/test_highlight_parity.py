"""Snippets mark the words the index matched, however the word is written, and the same words on
both engines. ``ts_headline`` (PostgreSQL) reads the raw text with its own parser: it marked no
folded word (``déploiement`` for ``deploy*`` beside a plain word it did mark), no word the index
keeps unstemmed (``js``, a long identifier), a phrase's words wherever they stood, and words the
index does not match (``running`` for ``re-run``, ``js`` for ``ǰ``). Its window is kept and its
marks are replaced by the index's tokens (:mod:`hermes_store.storage_pg_marks`)."""

from __future__ import annotations

import re

import pytest

from hermes_store.builtin.search import search_entries
from hermes_store.pgdb import PgDatabase
from hermes_store.sessions import SessionIndex
from hermes_store.sessions.search import search_messages

STEM = "kubernetesproductionclusterserviceaccounttokenrotationwebhookdeploy"  # 67 bytes
MESSAGES = {
    "m-fr": "le déploiement est fini",
    "m-cafe": "café running fast",
    "m-js": "the js bundle for Москва",
    "m-pct": "runs plastered 100% 100% runs",
    "m-rerun": "please re-run the running job",
    "m-j": "ǰ then js",
    "m-long": f"the {STEM}ings and {STEM}ed steps",
    "m-cjk": "ελληνικά 北京 test",
}
CASES = [  # query, session, the marked pieces of its snippet in order
    ("deploy* fini", "m-fr", ["déploiement", "fini"]),
    ("dép*", "m-fr", ["déploiement"]),
    ("déploiement", "m-fr", ["déploiement"]),
    ("cafe running", "m-cafe", ["café", "running"]),
    ("fast cafés", "m-cafe", ["café", "fast"]),
    ("js Москва", "m-js", ["js", "Москва"]),
    ('"100% runs"', "m-pct", ["100% runs"]),
    ("re-run", "m-rerun", ["re-run"]),
    ("ǰ", "m-j", ["ǰ"]),
    (f"{STEM}ings", "m-long", [f"{STEM}ings"]),
    (f"{STEM}*", "m-long", [f"{STEM}ings", f"{STEM}ed"]),
    ('"ελληνικά 北京"', "m-cjk", ["ελληνικά", "北京"]),
]
MARK = re.compile(r">>>(.*?)<<<", re.S)


def _fill(db) -> None:
    index = SessionIndex(db)
    for n, (sid, text) in enumerate(sorted(MESSAGES.items())):
        index.create_session(sid, source="cli", started_at=1000.0 + n)
        index.append_message(sid, "user", text, timestamp=1000.0 + n)


@pytest.fixture
def both(home, pg_url):
    sqlite = home.open_db()
    pg = PgDatabase(pg_url)
    for db in (sqlite, pg):
        _fill(db)
    yield {"sqlite": sqlite, "postgresql": pg}
    sqlite.close()
    pg.close()


@pytest.mark.parametrize(("query", "session", "marked"), CASES)
def test_the_matched_words_are_marked_alike_on_both_engines(both, query, session, marked):
    for engine, db in both.items():
        hits = {hit["session_id"]: hit["snippet"] for hit in search_messages(db, query, limit=20).results}
        assert session in hits, (engine, hits)
        assert MARK.findall(hits[session]) == marked, (engine, hits[session])


@pytest.mark.usefixtures("engine")
def test_a_memory_entry_marks_its_accented_word(home):
    (home.memories_dir / "MEMORY.md").write_text(
        "le déploiement du lundi est fini\n§\nthe js bundle ships on Mondays", encoding="utf-8")
    with home.open_db() as db:
        for query, marked in (("deploy* fini", ["déploiement", "fini"]), ("js mondays", ["js", "Mondays"]),
                              ("ǰ OR lundi", ["lundi"])):
            hits = search_entries(db, home.memories_dir, query).hits
            assert hits, query
            assert MARK.findall(hits[0].snippet) == marked, (query, hits[0].snippet)
