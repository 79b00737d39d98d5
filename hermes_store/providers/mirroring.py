"""Turning a committed ``memory`` tool call into the writes an external provider mirrors.

A single call is one write; a batch (``operations``) is expanded op by op. Each write
carries ``old_text`` and the ``previous_content`` of a replaced or removed entry, taken
from ``replaced_entry``/``removed_entry`` or the per-operation ``replaced_entries`` /
``removed_entries`` (a list, or a dict keyed by 1-based operation number).
"""

from __future__ import annotations

from typing import Any

__all__ = ["expand_memory_writes"]


def _indexed(value: Any, index: int) -> Any:
    """Entry ``index`` (0-based) of a per-operation list, or of a dict keyed 1-based."""
    if isinstance(value, list) and 0 <= index < len(value):
        return value[index]
    if isinstance(value, dict):
        return value.get(str(index + 1), value.get(index + 1))
    return None


def expand_memory_writes(result: dict[str, Any],
                         args: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """``(action, target, content, metadata)`` for each write in a committed memory tool call."""
    default_target = args.get("target") or "memory"
    operations = args.get("operations")
    if isinstance(operations, list) and operations:
        ops = operations
        batch = True
    else:
        ops = [args]
        batch = False
    writes = []
    for index, op in enumerate(ops):
        if not isinstance(op, dict):
            continue
        action = op.get("action")
        if action not in ("add", "replace", "remove"):
            continue
        target = op.get("target") or default_target
        content = op.get("content") or op.get("new_text") or None  # Hermes: "" falls to the alias
        extra: dict[str, Any] = {}
        if op.get("old_text") is not None:
            extra["old_text"] = op["old_text"]
        if action == "replace":
            previous = (_indexed(result.get("replaced_entries"), index) if batch
                        else result.get("replaced_entry"))
        elif action == "remove":
            previous = (_indexed(result.get("removed_entries"), index) if batch
                        else result.get("removed_entry"))
            if content is None:
                content = previous if previous is not None else op.get("old_text")
        else:
            previous = None
        if previous is not None:
            extra["previous_content"] = previous
        if batch:
            extra["batch_index"] = index
        writes.append((action, target, content if isinstance(content, str) else "", extra))
    return writes
