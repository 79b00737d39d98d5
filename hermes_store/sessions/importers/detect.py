"""``--format auto``: decide which importer reads a file, from its name and first lines."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SQLITE_MAGIC = b"SQLite format 3\x00"
_HERMES_ID = re.compile(r"^(\d{8}_\d{6}_[0-9a-f]{4,}|cron_.+_\d{8}_\d{6})$")
_CLAUDE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot"}
_CODEX_TYPES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
_PROBE_BYTES = 256 * 1024
_PROBE_LINES = 8
_LONG_LINE_BYTES = 128 * 1024 * 1024  # the longest first line read to recognise a format


_MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
SNIFF_THRESHOLD = 0.5


@dataclass
class Head:
    """What a ``sniff`` sees of a file: its path, first 256 KiB and cached parses."""

    path: Path
    data: bytes
    is_sqlite: bool
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, path: Path) -> Head:
        """Read the head of ``path`` (``b""`` for a directory or an unreadable file)."""
        data = b""
        if not path.is_dir():
            try:
                with open(path, "rb") as handle:
                    data = handle.read(_PROBE_BYTES)
            except OSError:
                data = b""
        return cls(path=path, data=data, is_sqlite=data.startswith(SQLITE_MAGIC))

    def text(self) -> str:
        """``data`` decoded as UTF-8 (bad bytes replaced)."""
        if "text" not in self._cache:
            self._cache["text"] = self.data.decode("utf-8", errors="replace")
        return self._cache["text"]

    def objects(self) -> list[dict[str, Any]]:
        """The first <= 8 JSON objects among the head's JSONL lines (bad lines skipped)."""
        if "objects" not in self._cache:
            self._cache["objects"] = [] if self.is_sqlite else _first_objects(self.data, skip_bad=True)
        return self._cache["objects"]

    def document(self) -> Any | None:
        """The whole file parsed as one JSON document (files <= 64 MiB); None otherwise."""
        if "document" not in self._cache:
            self._cache["document"] = self._load_document()
        return self._cache["document"]

    def _load_document(self) -> Any | None:
        stripped = self.data.lstrip()
        if self.is_sqlite or stripped[:1] not in (b"{", b"["):
            return None
        try:
            if self.path.stat().st_size > _MAX_DOCUMENT_BYTES:
                return None
            raw = self.data if len(self.data) < _PROBE_BYTES else self.path.read_bytes()
            return json.loads(raw.decode("utf-8", errors="replace"), strict=False)
        except (OSError, ValueError, RecursionError):
            return None

    def sqlite_tables(self) -> frozenset[str]:
        """Table names of an SQLite file (opened read-only); empty when not SQLite."""
        if "tables" not in self._cache:
            self._cache["tables"] = self._load_tables()
        return self._cache["tables"]

    def _load_tables(self) -> frozenset[str]:
        if not self.is_sqlite:
            return frozenset()
        from hermes_store.db import Database, DatabaseError

        try:
            with Database(self.path, readonly=True, migrate=False) as db:
                rows = db.query("SELECT name FROM sqlite_master WHERE type='table'")
        except (DatabaseError, Exception):
            return frozenset()
        return frozenset(str(row["name"]) for row in rows)


def candidates(path: Path) -> list[tuple[str, float]]:
    """Every importer's confidence (> 0) that ``path`` is its format, best first."""
    from hermes_store.sessions.importers import IMPORTERS

    head = Head.of(Path(path))
    found: list[tuple[str, float]] = []
    for name, cls in IMPORTERS.items():
        sniff = getattr(cls, "sniff", None)
        if sniff is None:
            continue
        try:
            confidence = float(sniff(head))
        except Exception:  # a sniff must never raise; one that does claims nothing
            confidence = 0.0
        if confidence > 0:
            found.append((name, confidence))
    found.sort(key=lambda item: -item[1])
    return found


def detect_format(path: Path) -> str | None:
    """Return the importer name for ``path``, or None when no format fits."""
    sniffed = candidates(path)
    if sniffed and sniffed[0][1] >= SNIFF_THRESHOLD:
        return sniffed[0][0]
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
