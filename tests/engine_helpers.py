"""Helpers for tests that run on both storage engines (the ``engine`` fixture).

* :func:`sql` / :func:`scalar` / :func:`execute`: tests that reach under the storage seam (to
  age a row, corrupt a vector, count links) write their statement once in SQLite's
  placeholder style; ``?`` becomes ``%s`` on PostgreSQL, so one test body serves both engines
  instead of a copy per engine.
* :func:`sqlite_only`: a test in an engine-parametrised module that is inherently SQLite (file
  corruption, WAL, read-only opens, APSW specifics) runs on SQLite alone, with its reason.
"""

from __future__ import annotations

from typing import Any

import pytest


def sqlite_only(reason: str) -> pytest.MarkDecorator:
    """Run the decorated test on the ``sqlite`` engine only; ``reason`` says why (it is kept
    in the marker so ``pytest --markers``-style reading of the test names it)."""
    if not reason.strip():
        raise ValueError("sqlite_only needs a reason")
    return pytest.mark.parametrize("engine", ["sqlite"], indirect=True, ids=["sqlite"])


def sql(db: Any, text: str) -> str:
    """``text`` with its ``?`` placeholders in the paramstyle of ``db``'s engine."""
    if getattr(db, "engine", "sqlite") == "postgresql":
        return text.replace("?", "%s")
    return text


def scalar(db: Any, text: str, params: tuple = ()) -> Any:
    """The first column of the first row of ``text`` (``?`` placeholders) on ``db``."""
    return db.scalar(sql(db, text), params)


def execute(db: Any, text: str, params: tuple = ()) -> Any:
    """Run one write statement (``?`` placeholders) on ``db`` inside its write transaction."""
    with db.write():
        return db.execute(sql(db, text), params)
