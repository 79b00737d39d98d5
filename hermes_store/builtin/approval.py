"""Write approval (config ``memory.write_approval``): stage agent writes for a person to review.

Records use Hermes' layout, so either program lists, approves or rejects what the
other staged on the same home: ``<home>/pending/memory/<8-hex-id>.json`` holding
``{id, subsystem, action, summary, origin, created_at, payload}``, where
``payload`` is the replayable call — ``{action, target, content, old_text}`` for
one op (plus ``matched_entry`` for replace/remove) or ``{action: "batch", target,
operations}`` with ``matched_entry`` on each destructive op — and ``origin`` is
``foreground`` or ``background_review``. Destructive operations are *pinned* to the
full entry they matched when staged; :func:`approve` applies them only if that exact
entry still exists, otherwise the record is kept and the write refused. Records an
older hermes-store wrote (a batch's pins as a ``matched_entries`` list) are still
approved. :func:`reject` discards a record.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

from hermes_store.builtin.fileio import atomic_write_bytes
from hermes_store.builtin.store import MemoryStore
from hermes_store.fsutil import private_mkdir

STAGED_MESSAGE = ("Staged for approval (memory.write_approval is on). Not yet saved — review with "
                  "/memory pending.")
UNPINNED = ("This destructive pending write predates entry pinning and cannot be verified; nothing was "
            "applied. Reject it and recreate the change.")
DESTRUCTIVE = ("replace", "remove")
ORIGINS = ("foreground", "background_review")


class PendingError(LookupError):
    """A pending record id that does not exist or cannot be read."""


def pending_dir(home: Any) -> Path:
    """``<home>/pending/memory``."""
    return Path(home.root) / "pending" / "memory"


def label(target: str) -> str:
    """How Hermes names a target in summaries: ``user profile`` or ``memory``."""
    return "user profile" if target == "user" else "memory"


def op_line(op: Any) -> str:
    """One batch op as Hermes shows it to an approver (a replace overwrites the whole entry)."""
    op = op if isinstance(op, dict) else {}
    action = op.get("action", "?")
    content = op.get("content") or op.get("new_text") or ""
    old = op.get("old_text", "")
    if action == "remove":
        return f"- remove: {old}"
    if action == "replace":
        return f"- replace entry matching '{old}' -> whole entry becomes: {content}"
    return f"- {action}: {content}"


def gate_text(payload: dict[str, Any]) -> tuple[str, str]:
    """``(summary, detail)`` of a write, as Hermes' approval gate words them."""
    action, target = payload.get("action"), payload.get("target", "memory")
    if action == "batch":
        ops = payload.get("operations") or []
        return f"apply {len(ops)} op(s) to {label(target)}", "\n".join(op_line(op) for op in ops)
    content, old = payload.get("content") or "", payload.get("old_text") or ""
    if action == "replace":
        return f"replace in {label(target)}", f"entry matching: {old}\nwhole entry becomes: {content}"
    if action == "remove":
        return f"remove from {label(target)}", old
    return f"add to {label(target)}", content


def summarize(payload: dict[str, Any]) -> str:
    """The record summary of a write staged by the approval gate."""
    summary, detail = gate_text(payload)
    return f"{summary}: {detail[:120]}"


def review_summary(payload: dict[str, Any]) -> str:
    """The record summary of a destructive write proposed by unattended background review."""
    action, target = payload.get("action"), payload.get("target", "memory")
    if action == "batch":
        detail = "; ".join(op_line(op) for op in payload.get("operations") or [])
    else:
        detail = op_line(payload)
    return f"background review consolidation ({action} on {target}): {detail}"[:200]


def destructive_ops(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The replace/remove ops of a payload, single-op or batch shape."""
    ops = (payload.get("operations") or []) if payload.get("action") == "batch" else [payload]
    return [op for op in ops if isinstance(op, dict) and op.get("action") in DESTRUCTIVE]


def pin(store: MemoryStore, payload: dict[str, Any]) -> dict[str, Any] | None:
    """Record on each replace/remove the full entry it selects now (in place).

    Returns the error the direct write would give when the selection fails now
    (so an invalid write is never staged), else None.
    """
    target = payload.get("target", "memory")
    if payload.get("action") == "batch":
        result = store.resolve_batch_entries(target, payload.get("operations"))
        if result.get("success"):
            payload["operations"] = [op if entry is None else {**op, "matched_entry": entry}
                                     for op, entry in zip(payload["operations"], result["matched_entries"],
                                                          strict=True)]
            return None
        return result
    if payload.get("action") in DESTRUCTIVE:
        result = store.resolve_entry(target, str(payload.get("old_text") or ""), str(payload["action"]))
        if result.get("success"):
            payload["matched_entry"] = result["matched_entry"]
            return None
        return result
    return None


def stage_record(home: Any, payload: dict[str, Any], *, summary: str, origin: str,
                 session_id: str = "") -> dict[str, Any]:
    """Write a pending record for ``payload`` (already validated and pinned); return the record."""
    directory = pending_dir(home)
    private_mkdir(directory)
    record_id = secrets.token_hex(4)
    while (directory / f"{record_id}.json").exists():
        record_id = secrets.token_hex(4)
    record: dict[str, Any] = {
        "id": record_id, "subsystem": "memory", "action": payload.get("action", ""),
        "summary": summary.strip(), "origin": origin if origin in ORIGINS else "foreground",
        "created_at": time.time(), "payload": payload,
    }
    if session_id:
        record["session_id"] = session_id  # ours; Hermes ignores unknown keys
    path = directory / f"{record_id}.json"
    atomic_write_bytes(path, json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
    os.chmod(path, 0o600)
    return record


def stage(store: MemoryStore, payload: dict[str, Any], *, origin: str, session_id: str = "") -> dict[str, Any]:
    """The approval gate's staging: pin, save the record, return Hermes' ``staged`` reply."""
    payload = dict(payload)
    refused = pin(store, payload)
    if refused is not None:
        return refused
    record = stage_record(store.home, payload, summary=summarize(payload), origin=origin,
                          session_id=session_id)
    return {"success": True, "staged": True, "pending_id": record["id"], "message": STAGED_MESSAGE}


def list_pending(home: Any) -> list[dict[str, Any]]:
    """Every pending record, oldest first (unreadable files are reported with an ``error``)."""
    directory = pending_dir(home)
    if not directory.is_dir():
        return []
    records = []
    for path in directory.glob("*.json"):
        try:
            records.append(json.loads(path.read_text(encoding="utf-8-sig")))
        except (OSError, ValueError) as exc:
            records.append({"id": path.stem, "error": f"{path}: unreadable pending record: {exc}",
                            "created_at": 0})
    return sorted(records, key=lambda r: (r.get("created_at") or 0, r.get("id", "")))


def _load(home: Any, record_id: str) -> dict[str, Any]:
    path = pending_dir(home) / f"{record_id}.json"
    if not record_id.isalnum() or not path.is_file():
        raise PendingError(f"No pending memory write '{record_id}'.")
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise PendingError(f"{path}: unreadable pending record: {exc}") from exc


def reject(home: Any, record_id: str) -> dict[str, Any]:
    """Discard pending record ``record_id``."""
    record = _load(home, record_id)
    (pending_dir(home) / f"{record_id}.json").unlink()
    return {"success": True, "message": f"Rejected pending write {record_id}.", "summary": record.get("summary")}


def approve(store: MemoryStore, record_id: str, *, origin: str = "approval") -> dict[str, Any]:
    """Replay pending record ``record_id`` through the store; the record is removed once applied.

    Each replace/remove applies to exactly its pinned entry or is refused (the record is kept).
    """
    record = _load(store.home, record_id)
    payload = _pinned_payload(record.get("payload") or {}, record.get("action"))
    action = payload.get("action")
    target = payload.get("target", "memory")
    session_id = record.get("session_id") or payload.get("session_id")
    if target not in ("memory", "user"):
        return {"success": False, "error": f"Invalid memory target '{target}'. Use 'memory' or 'user'."}
    if any(not op.get("matched_entry") for op in destructive_ops(payload)):
        return {"success": False, "error": UNPINNED}
    kwargs = {"origin": origin, "session_id": session_id}
    if action == "batch":
        result = store.apply_batch(target, payload.get("operations") or [], **kwargs)
    elif action == "add":
        result = store.add(target, payload.get("content") or "", **kwargs)
    elif action == "replace":
        result = store.replace(target, payload.get("old_text") or "", payload.get("content") or "",
                               matched_entry=payload["matched_entry"], **kwargs)
    elif action == "remove":
        result = store.remove(target, payload.get("old_text") or "", matched_entry=payload["matched_entry"],
                              **kwargs)
    else:
        return {"success": False, "error": f"Unknown staged action '{action}'."}
    if result.get("success"):
        (pending_dir(store.home) / f"{record_id}.json").unlink(missing_ok=True)
        result["approved"] = record_id
    return result


def _pinned_payload(payload: dict[str, Any], record_action: Any) -> dict[str, Any]:
    """The payload in Hermes' shape: ``action`` inside it, a batch's pins on its ops.

    Older hermes-store records kept the action only on the record and a batch's pins as a
    parallel ``matched_entries`` list; such records are converted here.
    """
    payload = dict(payload)
    payload.setdefault("action", record_action)
    pins = payload.pop("matched_entries", None)
    ops = payload.get("operations")
    if payload.get("action") == "batch" and isinstance(pins, list) and isinstance(ops, list) \
            and len(pins) == len(ops):
        payload["operations"] = [op if pin_ is None or not isinstance(op, dict) else {**op, "matched_entry": pin_}
                                 for op, pin_ in zip(ops, pins, strict=True)]
    return payload
