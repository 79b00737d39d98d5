"""Write approval (config ``memory.write_approval``): stage agent writes for a person to review.

With approval on, a ``memory`` tool write is not applied: it is saved as a
pending record ``<home>/pending/memory/<8-hex-id>.json`` (``{id, subsystem,
action, summary, origin, created_at, payload}``) and the tool answers with a
``staged`` response. Destructive operations are *pinned* to the full entry they
matched when staged; :func:`approve` applies them only if that exact entry still
exists, otherwise the record is kept and the write refused. :func:`reject`
discards a record.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

from hermes_store.builtin import messages as msg
from hermes_store.builtin.entries import AMBIGUOUS, find_unique_match
from hermes_store.builtin.fileio import atomic_write_bytes
from hermes_store.builtin.store import MemoryStore
from hermes_store.home import private_mkdir

STAGED_MESSAGE = ("Staged for approval (memory.write_approval is on). Not yet saved — review with "
                  "/memory pending.")
UNPINNED = ("This destructive pending write predates entry pinning and cannot be verified; nothing was "
            "applied. Reject it and recreate the change.")


class PendingError(LookupError):
    """A pending record id that does not exist or cannot be read."""


def pending_dir(home: Any) -> Path:
    """``<home>/pending/memory``."""
    return Path(home.root) / "pending" / "memory"


def _label(target: str) -> str:
    return "user profile" if target == "user" else "memory"


def summarize(action: str, target: str, payload: dict[str, Any]) -> str:
    """One line describing a staged write, e.g. ``add to memory: <text>``."""
    if action == "batch":
        ops = payload.get("operations") or []
        detail = "; ".join(f"{op.get('action')}: {op.get('content') or op.get('old_text') or ''}"
                           for op in ops if isinstance(op, dict))
        return f"apply {len(ops)} op(s) to {_label(target)}: {detail[:120]}"
    verb = {"add": "add to", "replace": "replace in", "remove": "remove from"}.get(action, action)
    detail = payload.get("content") or payload.get("old_text") or ""
    return f"{verb} {_label(target)}: {str(detail)[:120]}"


def _pin(store: MemoryStore, target: str, action: str,
         old_text: str) -> tuple[str | None, dict[str, Any] | None]:
    """The full entry ``old_text`` identifies now, or the error a real write would give."""
    old = old_text.strip()
    entries = store.fresh_entries(target)
    index, previews = find_unique_match(entries, old)
    if index is None:
        return None, {"success": False, "error": msg.no_match(old, action),
                      "current_entries": store.current_entries(target), "usage": store.usage(target)}
    if index == AMBIGUOUS:
        return None, {"success": False, "error": msg.ambiguous(old), "matches": previews}
    return entries[index], None


def resolve_batch_entries(store: MemoryStore, target: str, operations: list[dict[str, Any]]) -> dict[str, Any]:
    """Dry run of a batch's matching: ``{"success": true, "matched_entries": [...]}`` (None for adds)."""
    working = store.fresh_entries(target)
    matched: list[str | None] = []
    for index, op in enumerate(operations, start=1):
        op = op if isinstance(op, dict) else {}
        action = op.get("action")
        content = str(op.get("content") or op.get("new_text") or "").strip()
        if action == "add":
            matched.append(None)
            if content and content not in working:
                working.append(content)
            continue
        found, _ = find_unique_match(working, str(op.get("old_text") or "").strip())
        if found is None or found == AMBIGUOUS:
            return {"success": False, "error": f"Operation {index}: cannot pin the entry it changes; "
                    "nothing was staged."}
        matched.append(working[found])
        if action == "replace" and content:
            working[found] = content
        elif action == "remove":
            del working[found]
    return {"success": True, "matched_entries": matched}


def stage(store: MemoryStore, action: str, target: str, payload: dict[str, Any], *,
          origin: str) -> dict[str, Any]:
    """Save a pending record for a write (pinning destructive ops); return the tool response."""
    payload = dict(payload, target=target)
    if action in ("replace", "remove"):
        entry, error = _pin(store, target, action, str(payload.get("old_text") or ""))
        if error is not None:
            return error
        payload["matched_entry"] = entry
    elif action == "batch":
        resolved = resolve_batch_entries(store, target, payload.get("operations") or [])
        if not resolved["success"]:
            return resolved
        payload["matched_entries"] = resolved["matched_entries"]
    directory = pending_dir(store.home)
    private_mkdir(directory)
    record_id = secrets.token_hex(4)
    while (directory / f"{record_id}.json").exists():
        record_id = secrets.token_hex(4)
    record = {"id": record_id, "subsystem": "memory", "action": action,
              "summary": summarize(action, target, payload), "origin": origin,
              "created_at": time.time(), "payload": payload}
    path = directory / f"{record_id}.json"
    atomic_write_bytes(path, json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
    os.chmod(path, 0o600)
    return {"success": True, "staged": True, "pending_id": record_id, "message": STAGED_MESSAGE}


def list_pending(home: Any) -> list[dict[str, Any]]:
    """Every pending record, oldest first (unreadable files are reported with an ``error``)."""
    directory = pending_dir(home)
    if not directory.is_dir():
        return []
    records = []
    for path in directory.glob("*.json"):
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            records.append({"id": path.stem, "error": f"{path}: unreadable pending record: {exc}",
                            "created_at": 0})
    return sorted(records, key=lambda r: (r.get("created_at") or 0, r.get("id", "")))


def _load(home: Any, record_id: str) -> dict[str, Any]:
    path = pending_dir(home) / f"{record_id}.json"
    if not record_id.isalnum() or not path.is_file():
        raise PendingError(f"No pending memory write '{record_id}'.")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PendingError(f"{path}: unreadable pending record: {exc}") from exc


def reject(home: Any, record_id: str) -> dict[str, Any]:
    """Discard pending record ``record_id``."""
    record = _load(home, record_id)
    (pending_dir(home) / f"{record_id}.json").unlink()
    return {"success": True, "message": f"Rejected pending write {record_id}.", "summary": record.get("summary")}


def approve(store: MemoryStore, record_id: str, *, origin: str = "approval") -> dict[str, Any]:
    """Apply pending record ``record_id`` through the store; the record is removed once applied."""
    record = _load(store.home, record_id)
    payload = record.get("payload") or {}
    action = record.get("action")
    target = payload.get("target", "memory")
    session_id = payload.get("session_id")
    if action == "add":
        result = store.add(target, payload.get("content"), origin=origin, session_id=session_id)
    elif action in ("replace", "remove"):
        pin = payload.get("matched_entry")
        if not pin:
            return {"success": False, "error": UNPINNED}
        if action == "replace":
            result = store.replace(target, payload.get("old_text"), payload.get("content"),
                                   matched_entry=pin, origin=origin, session_id=session_id)
        else:
            result = store.remove(target, payload.get("old_text"), matched_entry=pin, origin=origin,
                                  session_id=session_id)
    elif action == "batch":
        result = _approve_batch(store, target, payload, origin, session_id)
    else:
        return {"success": False, "error": f"Pending write {record_id} has unknown action {action!r}."}
    if result.get("success"):
        (pending_dir(store.home) / f"{record_id}.json").unlink(missing_ok=True)
        result["approved"] = record_id
    return result


def _approve_batch(store: MemoryStore, target: str, payload: dict[str, Any], origin: str,
                   session_id: str | None) -> dict[str, Any]:
    operations = payload.get("operations") or []
    pins = payload.get("matched_entries")
    if not isinstance(pins, list) or len(pins) != len(operations):
        if any(isinstance(op, dict) and op.get("action") in ("replace", "remove") for op in operations):
            return {"success": False, "error": UNPINNED}
        pins = [None] * len(operations)
    current = resolve_batch_entries(store, target, operations)
    if not current["success"] or current["matched_entries"] != pins:
        stale = next((p for p, c in zip(pins, current.get("matched_entries") or [None] * len(pins),
                                        strict=False) if p is not None and p != c), None)
        return {"success": False, "error": msg.stale_pin(stale or "")}
    pinned_ops = []
    for op, pin in zip(operations, pins, strict=True):
        op = dict(op) if isinstance(op, dict) else {}
        if pin is not None:
            op["old_text"] = pin  # the exact entry wins over substring matches
        pinned_ops.append(op)
    return store.apply_batch(target, pinned_ops, origin=origin, session_id=session_id)
