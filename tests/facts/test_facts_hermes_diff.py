"""Regressions found by running Hermes' holographic provider side by side with ours.

Quoted upstream behaviour (plugins/memory/holographic/retrieval.py, FactRetriever._fts_candidates):
"Normalize FTS5 rank: rank is negative, lower = better / Convert to positive score in [0, 1] range":
fts_rank = abs(rank) / max(abs(rank) over the matches, 1e-6). No upstream code is imported.
"""

from __future__ import annotations

import json

import pytest

from hermes_store.tools import handle_tool_call

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


def fact(home, args: dict) -> dict:
    return json.loads(handle_tool_call("fact_store", args, home=home))


def test_search_fts_rank_is_normalised_so_the_best_match_is_one(home):
    fact(home, {"action": "add", "content": "The project uses Python 3.12 and uv", "category": "project"})
    fact(home, {"action": "add", "content": "Python Python python scripts live in tools", "category": "project"})
    fact(home, {"action": "add", "content": "Bob prefers dark mode"})
    results = fact(home, {"action": "search", "query": "python"})["results"]
    ranks = [r["fts_rank"] for r in results if r["fts_rank"] is not None]
    assert len(ranks) == 2
    assert max(ranks) == 1.0 and all(0.0 < r <= 1.0 for r in ranks)


def test_single_match_has_fts_rank_one(home):
    fact(home, {"action": "add", "content": "The project uses Python 3.12 and uv"})
    fact(home, {"action": "add", "content": "Bob prefers dark mode"})
    (only,) = fact(home, {"action": "search", "query": "python uv"})["results"]
    assert only["fts_rank"] == 1.0
