"""Helpers for tests that run on both storage engines (the ``engine`` fixture).

* :func:`sql` / :func:`scalar` / :func:`execute`: tests that reach under the storage seam (to
  age a row, corrupt a vector, count links) write their statement once in SQLite's
  placeholder style; ``?`` becomes ``%s`` on PostgreSQL, so one test body serves both engines
  instead of a copy per engine.
* :func:`normalise`: a front end's JSON with what legitimately differs between engines made
  neutral, for the parity tests that compare the two (tests/pg/test_pg_parity.py, the MCP one).
* :func:`sqlite_only`: a test in an engine-parametrised module that is inherently SQLite (file
  corruption, WAL, read-only opens, APSW specifics) runs on SQLite alone, with its reason.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

# keys whose values are wall-clock times of this run (the fixtures' own times are compared)
NOW_KEYS = {"created_at", "updated_at", "at", "at_epoch", "indexed_at", "recorded_at", "mtime",
            "last_indexed"}
# keys whose values come from an engine's ranking formula (bm25 vs ts_rank_cd) or its storage
SCORE_KEYS = {"score", "rank", "fts_rank", "relevance", "bm25", "text_score", "db_bytes", "index_bytes"}
# what only a shared store records: the ``host:home`` that wrote a row (tests/pg/test_pg_writers.py)
ENGINE_KEYS = {"written_by"}
# the same figures quoted in an explanation ("facts rank 2 (relevance 0.340) x trust 0.55")
RELEVANCE_TEXT = re.compile(r"relevance -?[0-9.]+")


def sqlite_only(reason: str) -> pytest.MarkDecorator:
    """Run the decorated test on the ``sqlite`` engine only; ``reason`` (required) says why, so
    every such exception is explained where it is made."""
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


def normalise(value: Any, roots: tuple[str, ...]) -> Any:
    """``value`` with home paths, this run's wall-clock times and engine scores made neutral."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ENGINE_KEYS:
                continue
            if key in SCORE_KEYS and isinstance(item, (int, float)) and not isinstance(item, bool):
                out[key] = "<score>"
            elif key in NOW_KEYS and item is not None:
                out[key] = "<time>"
            else:
                out[key] = normalise(item, roots)
        return out
    if isinstance(value, list):
        return [normalise(item, roots) for item in value]
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root, "<home>")
        return RELEVANCE_TEXT.sub("relevance <score>", value)
    return value
