"""``dump``: generic message dumps -- CSV, TSV, JSON arrays and NDJSON of message rows.

Rows are read by :func:`sqlite_utils.utils.rows_from_file` (the format follows
the suffix: ``.csv``, ``.tsv``, ``.json``, ``.jsonl``/``.ndjson``; sniffed for
anything else). Each row is one message; the columns default to

* role: ``role``, ``sender``, ``author``, ``speaker``
* content: ``content``, ``text``, ``message``, ``body``
* time: ``time``, ``timestamp``, ``created_at``, ``date``, ``ts``
* session: ``session``, ``session_id``, ``conversation_id``, ``thread_id``, ``conversation``
* optional: ``title``, ``model``, ``tool_name``

and ``sessions index --map role=...,content=...,time=...,session=...`` names
other columns (the map arrives as ``options["column_map"]``). Rows without a
session column belong to a session named after the file. The whole file is
re-read when it changes; messages already stored for a session are skipped
(``snapshot``).

Detection is deliberately narrow, so a look-alike never imports as a dump:
CSV/TSV whose header has a role and a content column; JSON arrays of objects
whose role and content are strings and that have a time column (or whose
columns ``--map`` names); NDJSON only with ``--map`` (plain role/content lines
are the ``openai-jsonl`` format).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from sqlite_utils.utils import Format, rows_from_file

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    opt_str,
    safe_timestamp,
)

DEFAULT_COLUMNS: dict[str, tuple[str, ...]] = {
    "role": ("role", "sender", "author", "speaker"),
    "content": ("content", "text", "message", "body"),
    "time": ("time", "timestamp", "created_at", "date", "ts"),
    "session": ("session", "session_id", "conversation_id", "thread_id", "conversation"),
    "title": ("title",),
    "model": ("model",),
    "tool_name": ("tool_name",),
}
MAP_KEYS = tuple(DEFAULT_COLUMNS)
FORMATS = {".csv": Format.CSV, ".tsv": Format.TSV, ".json": Format.JSON, ".jsonl": Format.NL,
           ".ndjson": Format.NL}
MAX_DUMP_BYTES = 512 * 1024 * 1024
ROLE_ALIASES = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant",
                "gpt": "assistant", "me": "user", "customer": "user", "client": "user",
                "visitor": "user", "person": "user", "agent": "assistant", "support": "assistant",
                "chatbot": "assistant", "llm": "assistant", "developer": "system",
                "function": "tool", "tool_result": "tool"}
STORED_ROLES = ("user", "assistant", "system", "tool")


def parse_role_map(text: str) -> dict[str, str]:
    """``"rep=assistant,caller=user"`` -> ``{"rep": "assistant", "caller": "user"}``.

    Raises ValueError naming a bad entry or a target that is not a stored role.
    """
    mapping: dict[str, str] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        word, sep, role = entry.partition("=")
        word, role = word.strip().lower(), role.strip().lower()
        if not sep or not word or not role:
            raise ValueError(f"--role-map entry {entry!r}: expected WORD=ROLE")
        if role not in STORED_ROLES:
            raise ValueError(f"--role-map entry {entry!r}: role must be one of {', '.join(STORED_ROLES)}")
        mapping[word] = role
    return mapping


def parse_column_map(text: str) -> dict[str, str]:
    """``"role=sender,content=text"`` -> ``{"role": "sender", "content": "text"}``.

    Raises ValueError naming a bad entry or an unknown key.
    """
    mapping: dict[str, str] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        key, sep, column = entry.partition("=")
        key, column = key.strip().lower(), column.strip()
        if not sep or not column:
            raise ValueError(f"--map entry {entry!r}: expected KEY=COLUMN")
        if key not in DEFAULT_COLUMNS:
            raise ValueError(f"--map key {key!r}: expected one of {', '.join(MAP_KEYS)}")
        mapping[key] = column
    return mapping


def resolve_columns(columns: list[str], column_map: dict[str, str]) -> dict[str, str]:
    """Which of ``columns`` holds each field (mapped names first, then the defaults)."""
    lower = {c.strip().lower(): c for c in columns}
    found: dict[str, str] = {}
    for key, defaults in DEFAULT_COLUMNS.items():
        wanted = column_map.get(key)
        if wanted is not None:
            if wanted in columns:
                found[key] = wanted
            elif wanted.lower() in lower:
                found[key] = lower[wanted.lower()]
            continue
        for name in defaults:
            if name in lower:
                found[key] = lower[name]
                break
    return found


class MessageDumpImporter(Importer):
    """One message per row of a CSV/TSV/JSON/NDJSON dump."""

    name = "dump"
    agent = "Generic message dump (CSV, TSV, JSON array, NDJSON)"
    indexes = "one message per row: role, content, time, session columns (--map names others)"
    source = "dump"
    resumable_by_offset = False
    snapshot = True
    walk_names = ("*.csv", "*.tsv")

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A header or first rows with role and content columns (see the module docstring)."""
        column_map = head.options.get("column_map") or {}
        suffix = head.suffix
        if column_map and suffix in (".csv", ".tsv", ".json", ".jsonl", ".ndjson"):
            return 0.95  # the user said it is a dump: read() names a missing column and those found
        if suffix in (".csv", ".tsv"):
            first = head.text().lstrip("\ufeff").splitlines()[:1]
            if not first:
                return 0.0
            try:
                header = next(csv.reader(io.StringIO(first[0]), delimiter="\t" if suffix == ".tsv" else ","))
            except (csv.Error, StopIteration):
                return 0.0
            found = resolve_columns(header, column_map)
            return 0.9 if {"role", "content"} <= found.keys() else 0.0
        if suffix == ".json":
            doc = head.document()
            if not isinstance(doc, list) or not doc or not all(isinstance(r, dict) for r in doc[:8]):
                return 0.0
            if any(r.get("type") in ("say", "ask") and r.get(r["type"]) for r in doc[:8]):
                return 0.0  # a Cline task's panel entries (ts, type, say|ask, text): cline reads them
            found = resolve_columns(list(doc[0]), column_map)
            if not {"role", "content"} <= found.keys():
                return 0.0
            if not all(isinstance(r.get(found["role"]), str) and isinstance(r.get(found["content"]), str)
                       for r in doc[:8]):
                return 0.0
            return 0.8 if ("time" in found or column_map) else 0.0
        if suffix in (".jsonl", ".ndjson") and column_map:
            objects = head.objects()
            if objects and all({"role", "content"} <= resolve_columns(list(o), column_map).keys()
                               for o in objects):
                return 0.9
        return 0.0

    def read(self, state: SourceState) -> Iterator[Event]:
        size = self.path.stat().st_size
        if size > MAX_DUMP_BYTES:
            yield Problem(None, f"dump too large to load ({size} bytes)")
            return
        raw = self.path.read_bytes()
        self.hasher.update(raw)
        column_map = dict(self.options.get("column_map") or {})
        self._role_map: dict[str, str] = dict(self.options.get("role_map") or {})
        self._unmapped: set[str] = set()
        try:
            rows, _format = rows_from_file(io.BytesIO(raw), format=FORMATS.get(self.path.suffix.lower()),
                                           encoding="utf-8-sig")
            rows = list(rows)
        except (ValueError, csv.Error, UnicodeDecodeError, TypeError) as exc:
            yield Problem(None, f"cannot read rows: {exc}")
            return
        header_offset = 2 if self.path.suffix.lower() in (".csv", ".tsv") else 1
        announced: set[str] = set()
        columns: dict[str, str] | None = None
        for index, row in enumerate(rows):
            line = index + header_offset
            if not isinstance(row, dict):
                yield Problem(line, f"expected a row object, got {type(row).__name__}")
                continue
            if columns is None:
                columns = resolve_columns(list(row), column_map)
                missing = [k for k in ("role", "content") if k not in columns]
                if missing:
                    wanted = ", ".join(f"{k} ({column_map.get(k) or '/'.join(DEFAULT_COLUMNS[k])})"
                                       for k in missing)
                    yield Problem(line, f"no column for {wanted} (columns found: "
                                        f"{', '.join(map(str, row)) or 'none'}); name it with --map")
                    return
            yield from self._row_events(row, columns, line, announced)
        yield Checkpoint(str(size), len(rows))

    def _row_events(self, row: dict[str, Any], columns: dict[str, str], line: int,
                    announced: set[str]) -> Iterator[Event]:
        problems: list[Problem] = []
        session_id = opt_str(row.get(columns.get("session", ""))) or self.default_session_id()
        timestamp = safe_timestamp(row.get(columns["time"]), line, problems) if "time" in columns else None
        if session_id not in announced:
            announced.add(session_id)
            yield SessionRecord(id=session_id, source=self.source_label(),
                                title=opt_str(row.get(columns.get("title", ""))),
                                model=opt_str(row.get(columns.get("model", ""))))
        role = opt_str(row.get(columns["role"]))
        if role is None:
            yield Problem(line, f"column '{columns['role']}': no role (row skipped)")
            return
        role = role.strip().lower()
        role = self._role_map.get(role) or ROLE_ALIASES.get(role, role)
        if role not in STORED_ROLES and role not in self._unmapped:
            self._unmapped.add(role)
            problems.append(Problem(line, f"column '{columns['role']}': role {role!r} is not one of "
                                          f"{', '.join(STORED_ROLES)}; kept as is (map it with "
                                          f"--role-map {role}=user|assistant|system|tool)"))
        content = row.get(columns["content"])
        text = content if isinstance(content, str) else flatten_content(content)
        yield MessageRecord(session_id, role, text or "", tool_name=opt_str(row.get(columns.get("tool_name", ""))),
                            timestamp=timestamp, line=line)
        yield from problems
