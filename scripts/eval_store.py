"""A fresh store per question (LongMemEval) or conversation (LoCoMo) for the session-level
evaluations, on either engine.

Without a URL it is a home of its own with its SQLite file, as ``hermes-store`` makes one. With
``--database-url URL`` (or ``private``: a throw-away server, ``bench_pgserver.database_url``) the
home names a PostgreSQL store (``Home(database_url=...)``, the one place the engine is decided)
in the schema ``SCHEMA`` of that database, dropped and made anew for each question and dropped at
the end: the same indexing, search, fusion and vectors on the PostgreSQL engine, for comparing
the figures of the two engines.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from hermes_store.home import Home

SCHEMA = "hs_eval"


def schema_url(url: str, schema: str = SCHEMA) -> str:
    """``url`` with the search path set to ``schema`` (libpq's ``options``)."""
    return url + ("&" if "?" in url else "?") + "options=" + quote(f"-csearch_path={schema}")


def reset_schema(url: str, *, create: bool = True, schema: str = SCHEMA) -> None:
    """Drop ``schema`` of the database ``url`` names (and make it again, empty, with ``create``)."""
    from hermes_store.pgdb import PgDatabase

    with PgDatabase(url, migrate=False) as admin:
        admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        if create:
            admin.execute(f"CREATE SCHEMA {schema}")


def fresh_home(root: Path, database_url: str | None) -> Home:
    """An empty home under ``root`` whose store is new: its own SQLite file, or (``database_url``)
    the emptied schema :data:`SCHEMA` of that PostgreSQL database."""
    if database_url:
        reset_schema(database_url)
        home = Home(root / "home", database_url=schema_url(database_url))
    else:
        home = Home(root / "home")
    home.ensure()
    return home
