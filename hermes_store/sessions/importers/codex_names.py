"""Thread names Codex keeps beside its rollouts, in ``<codex home>/session_index.jsonl``.

A rename (``/rename``, the app's sidebar) is appended to the Codex home's index as
``{"id": <thread id>, "thread_name": <name>, "updated_at": <RFC 3339>}``; the file is
append-only and the newest entry of a thread wins, an empty name clearing it (openai/codex
``codex-rs/rollout/src/session_index.rs``: ``append_thread_name``, "the most recent entry wins
when resolving names or ids"). Newer rollouts no longer carry the ``thread_name_updated``
event, so the index is where a renamed thread's title is. The index is read once per change
(size and mtime) and only its newest :data:`MAX_INDEX_BYTES`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

INDEX_NAME = "session_index.jsonl"
ROLLOUT_DIRS = ("sessions", "archived_sessions")
MAX_INDEX_BYTES = 16 * 1024 * 1024  # an index of renames; a larger one is read from its end

_CACHE: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}


def codex_home(rollout: Path) -> Path | None:
    """The Codex home a rollout lies under (the parent of its ``sessions`` / ``archived_sessions``)."""
    for folder in rollout.parents:
        if folder.name in ROLLOUT_DIRS:
            return folder.parent
    return None


def thread_name(rollout: Path, thread: str | None) -> str | None:
    """The newest name ``<codex home>/session_index.jsonl`` gives ``thread``, if any."""
    home = codex_home(rollout)
    if thread is None or home is None:
        return None
    return _names(home / INDEX_NAME).get(thread.lower())


def _names(index: Path) -> dict[str, str]:
    """``thread id -> name`` of an index (the newest entry of each id; an empty name clears it)."""
    try:
        info = os.stat(index)
    except OSError:
        return {}
    key, stamp = str(index), (info.st_size, info.st_mtime_ns)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    names: dict[str, str] = {}
    try:
        with open(index, "rb") as handle:
            if info.st_size > MAX_INDEX_BYTES:
                handle.seek(info.st_size - MAX_INDEX_BYTES)
                handle.readline()  # a cut line
            data = handle.read(MAX_INDEX_BYTES)
    except OSError:
        return {}
    for raw in data.splitlines():
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # a line being written, or damaged: Codex skips it too
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        name = entry.get("thread_name")
        if isinstance(name, str) and name.strip():
            names[entry["id"].lower()] = " ".join(name.split())[:200]
        else:
            names.pop(entry["id"].lower(), None)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = (stamp, names)
    return names
