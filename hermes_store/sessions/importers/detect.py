"""``--format auto``: decide which importer reads a file, from its name and first lines."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SQLITE_MAGIC = b"SQLite format 3\x00"
_HERMES_ID = re.compile(r"^(\d{8}_\d{6}_[0-9a-f]{4,}|cron_.+_\d{8}_\d{6})$")
_CLAUDE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot"}
_CODEX_TYPES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
_PROBE_BYTES = 256 * 1024
_PROBE_LINES = 8
_LONG_LINE_BYTES = 128 * 1024 * 1024  # the longest first line read to recognise a format


def detect_format(path: Path) -> str | None:
    """Return the importer name for ``path``, or None when no format fits."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_PROBE_BYTES)
    except OSError:
        return None
    if head.startswith(SQLITE_MAGIC):
        return "hermes-db"
    if not head.strip():
        return None
    objects = _first_objects(head, skip_bad=path.suffix.lower() != ".json")
    if not objects and len(head) == _PROBE_BYTES and b"\n" not in head:
        objects = _long_first_line(path)  # e.g. a 50 MB message on the first line
    if not objects:
        if path.suffix.lower() == ".json" and head.lstrip().startswith(b"{"):
            return _whole_json_format(path)
        if path.suffix.lower() == ".jsonl" and _HERMES_ID.match(path.stem):
            return "hermes-jsonl"  # a Hermes session file whose first lines are unreadable
        return None
    return _classify(path, objects)


def _first_objects(head: bytes, *, skip_bad: bool = False) -> list[dict[str, Any]]:
    """Parse the first complete lines of ``head`` as JSON objects.

    Stops at the first line that is not a JSON object, unless ``skip_bad`` (JSONL:
    one corrupt line must not hide the rest of the file), where such lines are skipped.
    """
    found: list[dict[str, Any]] = []
    lines = head.split(b"\n")
    if len(head) == _PROBE_BYTES:
        lines = lines[:-1]  # the last line may be cut
    for raw in lines:
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8", errors="replace"), strict=False)
        except (ValueError, RecursionError):
            obj = None
        if not isinstance(obj, dict):
            if skip_bad:
                continue
            break
        found.append(obj)
        if len(found) >= _PROBE_LINES:
            break
    return found


def _long_first_line(path: Path) -> list[dict[str, Any]]:
    """The first line as a JSON object when it is longer than the probe (bounded read)."""
    try:
        with open(path, "rb") as handle:
            line = handle.readline(_LONG_LINE_BYTES)
    except OSError:
        return []
    if not line.endswith(b"\n") and len(line) >= _LONG_LINE_BYTES:
        return []
    return _first_objects(line + b"\n")


def _classify(path: Path, objects: list[dict[str, Any]]) -> str | None:
    first = objects[0]
    if first.get("role") == "session_meta":
        return "hermes-jsonl"
    if isinstance(first.get("messages"), list):
        if "session_id" in first and ("session_start" in first or "last_updated" in first):
            return "hermes-json"
        return "openai-jsonl"
    for obj in objects:
        kind = obj.get("type")
        if kind in _CODEX_TYPES and "payload" in obj:
            return "codex"
        if kind in _CLAUDE_TYPES and ("sessionId" in obj or "leafUuid" in obj or "uuid" in obj):
            return "claude-code"
    if path.name.startswith("rollout-") and ("instructions" in first or first.get("record_type")):
        return "codex"
    if any(isinstance(obj.get("role"), str) for obj in objects):
        if _HERMES_ID.match(path.stem) or path.parent.name == "sessions":
            return "hermes-jsonl"
        return "openai-jsonl"
    return None


def _whole_json_format(path: Path) -> str | None:
    """A pretty-printed JSON document: a Hermes snapshot, or a conversation object."""
    try:
        with open(path, "rb") as handle:
            doc = json.loads(handle.read().decode("utf-8", errors="replace"), strict=False)
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return "hermes-json"
    return None
