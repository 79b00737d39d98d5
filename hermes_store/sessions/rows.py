"""Row helpers shared by the session modules: storable text, the CJK column, session rows.

The bottom of the ``sessions`` package: the live API, the bulk loader, search
and maintenance all import from here, and this module imports only the lowest
layer (``query``) -- so the package's modules form a top-down chain.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from hermes_store.tooling import storable_text

SESSION_COLUMNS = ("id", "origin_format", "source", "title", "model", "workspace", "started_at",
                   "ended_at", "parent_session_id", "message_count", "meta")
MESSAGE_COLUMNS = ("id", "seq", "role", "content", "tool_name", "tool_calls", "tool_call_id",
                   "timestamp", "message_uid")
CALLS_BACKFILL_KEY = "sessions_calls_backfill"  # store_meta marker of SQLite 0010 / pg 0008


class SessionNotFound(KeyError):
    """No session with that id in the index."""

    def __str__(self) -> str:
        return f"session not found: {self.args[0]}"


def scrub(text: str | None) -> str | None:
    """Make a string storable: no NUL bytes, no lone surrogates."""
    return None if text is None else storable_text(text)


MAX_TREE_DEPTH = 64  # deeper parts of a session's meta are stored as (cleaned) JSON text


def clean_tree(value: Any, clean: Callable[[str], str | None], depth: int = 0) -> Any:
    """``value`` (decoded JSON, such as a session's ``meta``) with every string passed through
    ``clean`` (scrub + redact) and every key scrubbed: what a transcript or a caller puts in a
    session's meta is stored like its title. A part nested deeper than ``MAX_TREE_DEPTH`` is
    kept as its cleaned JSON text."""
    if isinstance(value, str):
        return clean(value)
    if depth >= MAX_TREE_DEPTH and isinstance(value, (dict, list, tuple)):
        return clean(json.dumps(value, ensure_ascii=False, default=str))
    if isinstance(value, dict):
        return {scrub(str(key)): clean_tree(item, clean, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_tree(item, clean, depth + 1) for item in value]
    return value


def new_session_id(now: float | None = None) -> str:
    """A Hermes-style id: ``YYYYMMDD_HHMMSS_<6 hex>``."""
    moment = datetime.fromtimestamp(now if now is not None else time.time())
    return f"{moment:%Y%m%d_%H%M%S}_{secrets.token_hex(3)}"


def session_row(row: dict[str, Any] | None) -> dict[str, Any] | None:
    """A sessions row with ``meta`` decoded from JSON."""
    if row is None:
        return None
    out = dict(row)
    try:
        out["meta"] = json.loads(out.get("meta") or "{}")
    except ValueError:
        out["meta"] = {}
    return out


def decode_meta(raw: str | None) -> dict[str, Any]:
    """A ``meta`` JSON text as a dict ({} when absent, unreadable or not an object)."""
    try:
        value = json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
