"""Snippets read the same on both engines: PostgreSQL replays FTS5's ``snippet()`` (the window
it scores best, sentence starts preferred, a phrase marked as one span, only whole index tokens
marked) instead of ``ts_headline`` / a window from just before the first hit.

Before: ``backup`` in the crontab message showed ``...still points at .../opt/scripts/>>>backup<<<...``
on PostgreSQL (SQLite: the sentence ``The crontab still points at ...>>>backup<<<.sh ...``), and
``parse_config ImportError`` marked ``load_>>>config<<<`` on PostgreSQL only (FTS5 marks the
phrase ``parse config`` where both tokens follow each other, never a lone ``config``).
"""

from __future__ import annotations

import pytest
from sess_helpers import both_engines

from hermes_store.builtin.search import search_entries
from hermes_store.sessions import SessionIndex
from hermes_store.sessions.search import search_messages

FILLER = " ".join(f"word{n}" for n in range(40))
MESSAGES = {
    "crontab": ("Checked the host. The crontab still points at /home/ana/bin/backup.sh but the script"
                " moved to /opt/scripts/backup.sh during the migration. Update the entry to"
                " /opt/scripts/backup.sh and the nightly backup job will run again."),
    "config": ("Traceback: ImportError: cannot import name 'parse_config' from config.loader; the"
               " helper load_config calls parse_config before the settings module is imported."),
    "long": (f"Intro sentence with {FILLER}. Second part: the deploy of the api server failed"
             f" because the deploy key expired, {FILLER} and then the api server came back."),
    "paths": "Edit src/auth/login_handler.py and tests/test_login.py; user@example.com owns them.",
    "unicode": "Le café de la gare ouvre à 7h; the Straße near Zürich café is closed on Sunday.",
    "phrases": ("The build cache is warm. Later the build failed: cache misses everywhere, the build"
                " cache was cold again after the cache eviction."),
    "repeat": " ".join(["backup"] + ["filler"] * 30 + ["restore", "backup", "restore"] + ["tail"] * 30),
}
QUERIES = ("backup", "parse_config ImportError", '"api server"', "deploy*", "login", "login_handler.py", "auth",
           "example", "cafe", "zurich", "straße", '"build cache"', "build cache", "cache OR build",
           "restore backup", "word5 api", "configs", "runs", "back*", "parse_config")


def _fill(db) -> None:
    index = SessionIndex(db)
    for n, (sid, text) in enumerate(sorted(MESSAGES.items())):
        index.create_session(sid, source="cli", started_at=1000.0 + n)
        index.append_message(sid, "assistant", text, timestamp=1000.0 + n)


def _snippets(db, query: str) -> dict[str, str]:
    return {hit["session_id"]: hit["snippet"] for hit in search_messages(db, query, limit=20).results}


@pytest.fixture
def both(home, pg_url):
    with both_engines(home, pg_url, _fill) as pair:
        yield pair


@pytest.mark.parametrize("query", QUERIES)
def test_a_snippet_reads_the_same_on_both_engines(both, query):
    sqlite, pg = both
    expected = _snippets(sqlite, query)
    assert expected  # every query finds something
    assert _snippets(pg, query) == expected


def test_the_crontab_hit_starts_at_its_sentence_on_both_engines(both):
    for db in both:
        snippet = _snippets(db, "backup")["crontab"]
        assert snippet.startswith("...The crontab still points at"), snippet
        assert "load_>>>config" not in _snippets(db, "parse_config ImportError")["config"]


ENTRIES = [MESSAGES["crontab"], MESSAGES["config"], MESSAGES["long"], MESSAGES["unicode"],
           "Short note: the backup runs nightly."]


@pytest.mark.parametrize("query", ("backup", "parse_config", '"api server"', "cafe", "deploy*"))
def test_a_memory_snippet_reads_the_same_on_both_engines(engine, home, query):
    """The memory entries' snippets (24 tokens, ``…``) on the engine's store equal FTS5's
    snippet() of the in-memory SQLite index built from the same file."""
    (home.memories_dir / "MEMORY.md").write_text("\n§\n".join(ENTRIES), encoding="utf-8")
    reference = {h.content: h.snippet for h in search_entries(None, home.memories_dir, query).hits}
    with home.open_db() as db:
        shown = {h.content: h.snippet for h in search_entries(db, home.memories_dir, query).hits}
    assert reference and shown == reference
