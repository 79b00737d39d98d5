"""``hermes-store mcp`` gives the same replies on SQLite and on PostgreSQL.

The same home contents (:func:`mcp_helpers.build_home`) are built on each engine and the same
calls -- reads, writes, and one failing call per tool -- are made through the SDK's stdio
client; replies are compared after :func:`engine_helpers.normalise` (home paths, wall-clock
times, engine scores, the shared store's ``written_by``).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import normalise
from mcp_helpers import (  # imported through the helpers: they skip the module without the mcp extra
    CLIENT_NAME,
    CURRENT_SESSION,
    SERVER_CMD,
    Client,
    StdioServerParameters,
    build_home,
    start_blocking_portal,
    stdio_client,
    types,
)
from test_mcp_server import ERROR_CALLS, READ_CALLS

# build_home stamps its sessions with this run's clock: their generated ids and times differ
# between the two homes as they would between two runs on one engine
GENERATED_ID = re.compile(r"\b\d{8}_\d{6}_[0-9a-f]{6}\b")
CLOCK_KEYS = ("timestamp", "time", "when", "started_at", "last_active")


def _neutral(value: Any, roots: tuple[str, ...]) -> Any:
    """:func:`normalise`, then this run's session ids and clock readings made neutral."""
    text = GENERATED_ID.sub("<sid>", json.dumps(normalise(value, roots), ensure_ascii=False))
    text = re.sub(r'"(' + "|".join(CLOCK_KEYS) + r')": ("[^"]*"|[0-9.]+)', r'"\1": "<clock>"', text)
    # a fact's rank within its kind comes from the engine's relevance formula (bm25 vs
    # ts_rank): for a partly matching query two facts of near-equal relevance may swap there,
    # while recall's merged order (compared) stays the same
    text = re.sub(r"\bfacts rank \d+", "facts rank <n>", text)
    return json.loads(text)


WRITE_CALLS = [
    ("fact_store", {"action": "add", "content": "Bob deploys the billing service", "tags": "billing"}),
    ("fact_feedback", {"action": "helpful", "fact_id": 1}),
    ("memory", {"action": "add", "target": "memory", "content": "zebrafish runs on Tuesdays"}),
    ("fact_store", {"action": "search", "query": "billing"}),
    ("recall", {"query": "zebrafish billing"}),
    ("session_search", {"query": "zebrafish OR billing", "sort": "newest"}),
]


@contextlib.contextmanager
def _served(root: Path, url: str | None) -> Iterator[Any]:
    """A server on ``root`` (and ``url``) with a connected client, as a blocking caller."""
    options = ["--home", str(root)] + (["--database-url", url] if url else [])
    params = StdioServerParameters(command=SERVER_CMD[0],
                                   args=[*SERVER_CMD[1:], *options, "mcp", "--session-id", CURRENT_SESSION])
    errlog = root.parent / f"{root.name}-mcp-stderr.log"
    with open(errlog, "w", encoding="utf-8") as err, start_blocking_portal() as portal:
        client = Client(stdio_client(params, errlog=err), client_info=types.Implementation(
            name=CLIENT_NAME, version="1.0"))
        with portal.wrap_async_context_manager(client) as connected:
            yield lambda name, args: portal.call(connected.call_tool, name, args)
    assert "Traceback" not in errlog.read_text(encoding="utf-8")


def _replies(root: Path, url: str | None, monkeypatch) -> list[tuple[str, Any]]:
    if url:
        monkeypatch.setenv("HERMES_STORE_DATABASE_URL", url)  # build_home's Home(root) finds it
    else:
        monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    build_home(root)
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    out = []
    with _served(root, url) as call:
        for name, args in READ_CALLS + ERROR_CALLS + WRITE_CALLS:
            result = call(name, args)
            out.append((f"{name} {args}", {"error": result.is_error, "reply": result.structured_content}))
    return out


def test_mcp_replies_are_the_same_on_both_engines(tmp_path, pg_store_url, monkeypatch):
    lite, pg = tmp_path / "lite" / "home", tmp_path / "pg" / "home"
    roots = (str(lite), str(pg))
    on_sqlite = [(k, _neutral(v, roots)) for k, v in _replies(lite, None, monkeypatch)]
    on_pg = [(k, _neutral(v, roots)) for k, v in _replies(pg, pg_store_url, monkeypatch)]
    differing = [(k, a, b) for (k, a), (_, b) in zip(on_sqlite, on_pg, strict=True) if a != b]
    assert not differing, "\n".join(f"{k}:\n  sqlite: {a}\n  postgresql: {b}" for k, a, b in differing)
    errors = [k for k, v in on_sqlite if v["error"]]
    assert len(errors) == len(ERROR_CALLS)  # the failing calls failed, the others did not
    assert any(v["reply"].get("count") for _, v in on_sqlite)


@pytest.fixture(autouse=True)
def _no_inherited_url(monkeypatch):
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
