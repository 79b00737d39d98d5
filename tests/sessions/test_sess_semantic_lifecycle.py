"""The embeddings of what a command removes go with it (both engines, a small deterministic
embedder: no model needed)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.sessions.vectors import VectorStore
from tests.sessions.test_sess_semantic import _index
from tests.sessions.test_sess_semantic_location import _count, _embed

pytestmark = pytest.mark.usefixtures("engine")
OLD = {"s-old1": ["hiking a mountain trail", "ok"], "s-old2": ["filing a tax return", "ok"]}


def test_sessions_prune_drops_the_vectors_of_what_it_deletes(home):
    """``sessions prune`` deleted whole sessions but kept their vectors (``status`` still
    counted them as embedded, and the vector file kept them) until the next ``embed``, unlike
    ``sessions delete`` and ``forget``."""
    _index(home, OLD)  # sessions of 2023
    assert _embed(home)["embedded"] == 2
    dry = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "prune", "--older-than", "1d",
                                   "--dry-run", "--json"])
    assert json.loads(dry.output)["count"] == 2 and _count(home) == 2  # a dry run removes nothing
    out = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "prune", "--older-than", "1d", "--json"])
    assert out.exit_code == 0, out.output
    assert sorted(json.loads(out.output)["sessions"]) == ["s-old1", "s-old2"]
    assert _count(home) == 0
    vectors = VectorStore.for_home(home)
    try:
        assert vectors.rows_store.message_ids() == []
    finally:
        vectors.close()
