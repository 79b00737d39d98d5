"""Time budgets of searches, enforced inside the database engine (lowest layer).

A search reachable from a tool or the CLI runs under a time budget enforced inside SQLite:
every connection has a progress handler (:func:`past_deadline`) that interrupts the running
statement once the current deadline has passed (apsw.InterruptError), or once the caller that
asked for it gave up (:func:`stop_when`). Front ends choose the budget (query_budget); the
search layer opens the bounded region (bounded_query) around its MATCH statements only, so
follow-up lookups and writes are never interrupted. :mod:`hermes_store.db` re-exports these
names, its API before they moved here.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

logger = logging.getLogger(__name__)

DEFAULT_TOOL_QUERY_BUDGET = 2.0  # seconds per search for an agent's tool call
DEFAULT_CLI_QUERY_BUDGET = 30.0  # seconds per search for a person at the CLI
TOOL_BUDGET_ENV = "HERMES_STORE_TOOL_QUERY_BUDGET"
CLI_BUDGET_ENV = "HERMES_STORE_CLI_QUERY_BUDGET"
PROGRESS_STEPS = 2000  # SQLite VM steps between deadline checks
_BUDGET: ContextVar[float | None] = ContextVar("hermes_store_query_budget", default=None)
_DEADLINE: ContextVar[float | None] = ContextVar("hermes_store_query_deadline", default=None)
_STOP: ContextVar[threading.Event | None] = ContextVar("hermes_store_query_stop", default=None)


def configured_budget(env: str, default: float) -> float | None:
    """Seconds from the environment variable ``env`` (``0`` or ``off``: no budget), else ``default``."""
    raw = os.environ.get(env, "").strip().lower()
    if not raw:
        return default
    if raw in ("0", "off", "none", "no"):
        return None
    try:
        value = float(raw)
    except ValueError:
        logger.warning("%s=%r is not a number of seconds; using %.1f", env, raw, default)
        return default
    return value if value > 0 else None


@contextmanager
def query_budget(seconds: float | None) -> Iterator[None]:
    """Within: every bounded search may run for at most ``seconds`` (None: unbounded)."""
    token = _BUDGET.set(seconds if seconds and seconds > 0 else None)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def current_budget() -> float | None:
    """The budget set by the innermost :func:`query_budget` (None when unbounded)."""
    return _BUDGET.get()


@contextmanager
def bounded_query() -> Iterator[None]:
    """Within: statements on any connection stop (apsw.InterruptError) when the budget is spent."""
    budget = _BUDGET.get()
    if budget is None and _STOP.get() is None:
        yield
        return
    deadline = time.monotonic() + budget if budget is not None else float("inf")
    outer = _DEADLINE.get()
    token = _DEADLINE.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


@contextmanager
def stop_when(event: threading.Event) -> Iterator[None]:
    """Within: a bounded search stops as soon as ``event`` is set, as at a spent budget (for a
    caller that gave up, e.g. an MCP client's ``notifications/cancelled``: the SDK drops the
    reply, so the search would run on to its end for nobody)."""
    token = _STOP.set(event)
    try:
        yield
    finally:
        _STOP.reset(token)


def past_deadline() -> bool:
    """Whether the running bounded statement must stop (the progress handler of every
    connection): its budget is spent, or its caller gave up (:func:`stop_when`)."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return False
    stop = _STOP.get()
    return (stop is not None and stop.is_set()) or time.monotonic() > deadline
