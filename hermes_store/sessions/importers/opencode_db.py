"""``opencode-db``: OpenCode's SQLite database ``~/.local/share/opencode/opencode.db`` (v1.2+).

Tables (Drizzle schema): ``session`` (``id, project_id, parent_id, slug, directory,
title, version, time_created, time_updated`` in ms, ...), ``message`` (``id,
session_id, time_created, time_updated, data`` = the message header JSON without
``id``/``sessionID``) and ``part`` (``id, message_id, session_id, time_created,
data`` = the part JSON without its ids). The JSON is the same as in the older
storage tree, so rows are built by :mod:`opencode_json`'s helpers. Newer versions
keep a session's messages in ``session_message`` instead (content inline, see
:mod:`opencode_v2`); a session with rows there is read from them. A compaction summary
(an assistant message with ``summary: true``) is a ``system`` row, as in every reader of
OpenCode's messages (:func:`opencode_json.is_compaction_summary`). Agents built on OpenCode
write the same database under their own name (Kilo's ``~/.local/share/kilo/kilo.db``): its
sessions take that agent's source (:func:`opencode_json.family_source`). Opened
read-only; every run re-reads it and adds messages past those already stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hermes_store.foreign_db import ForeignDB
from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    Problem,
    SessionRecord,
    SourceState,
)
from hermes_store.sessions.importers.doc_common import (
    foreign_read,
    safe_rows,
)
from hermes_store.sessions.importers.opencode_json import (
    family_source,
    message_rows,
    model_of,
    session_record,
)
from hermes_store.sessions.importers.opencode_v2 import v2_message_rows, v2_model

CHUNK = 2000
_REQUIRED = {"session", "message", "part"}


def _decode(text: Any, where: str, problems: list[Problem]) -> dict[str, Any] | None:
    try:
        value = json.loads(text, strict=False) if isinstance(text, (str, bytes)) else None
    except (ValueError, RecursionError) as exc:
        problems.append(Problem(None, f"{where}: bad JSON in 'data' ({exc})"))
        return None
    if not isinstance(value, dict):
        problems.append(Problem(None, f"{where}: 'data' is not a JSON object"))
        return None
    return value


class OpenCodeDbImporter(Importer):
    """Every session of an ``opencode.db``."""

    name = "opencode-db"
    agent = "OpenCode (SQLite)"
    indexes = ("sessions, messages and parts from opencode.db (Kilo's kilo.db too), or a session's session_message"
               " rows (read-only)")
    source: str | None = "opencode"
    resumable_by_offset = False
    skip_when_unchanged = False  # WAL writes do not touch the main file's mtime
    snapshot = True
    # a build of another channel than latest/beta keeps its own opencode-<channel>.db beside it
    # (``Database.getChannelPath``); Kilo's (built on OpenCode) is kilo.db in its own data folder
    default_locations = {"linux": ("~/.local/share/opencode/opencode.db", "~/.local/share/opencode/opencode-*.db",
                                   "~/.local/share/kilo/kilo.db"),
                         "darwin": ("~/.local/share/opencode/opencode.db", "~/.local/share/opencode/opencode-*.db",
                                    "~/.local/share/kilo/kilo.db")}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """An SQLite file with OpenCode's ``session``/``message``/``part`` tables."""
        if not head.is_sqlite:
            return 0.0
        tables = head.sqlite_tables()
        if not _REQUIRED <= tables:
            return 0.0
        return 0.95 if "project" in tables else 0.7

    @foreign_read
    def read(self, db: ForeignDB, state: SourceState) -> Iterator[Event]:
        if not all(db.table_exists(t) for t in _REQUIRED):
            yield Problem(None, "not an OpenCode database (no session/message/part tables)")
            return
        source = family_source(self.path, self.source or self.name)
        sessions = db.query("SELECT * FROM session")  # columns differ between versions
        sessions.sort(key=lambda r: (r.get("time_created") or 0, str(r.get("id"))))
        v2 = db.table_exists("session_message")
        v2_order = "seq, id" if v2 and "seq" in db.columns("session_message") else "time_created, id"
        for row in sessions:
            info = {"id": row["id"], "projectID": row.get("project_id"), "parentID": row.get("parent_id"),
                    "slug": row.get("slug"), "directory": row.get("directory"), "title": row.get("title"),
                    "version": row.get("version"),
                    "time": {"created": row.get("time_created"), "updated": row.get("time_updated")}}
            record = session_record(info, source, {})
            problems: list[Problem] = []
            if v2 and db.query_one("SELECT 1 AS one FROM session_message WHERE session_id=? LIMIT 1", (row["id"],)):
                yield from self._read_v2(db, record, v2_order)
                continue
            headers = list(self._messages(db, str(row["id"]), problems))
            record.model = next((m for m in (model_of(h) for _, h in reversed(headers)) if m), None)
            yield record
            yield from problems
            for message_id, header in headers:
                problems = []
                parts = self._parts(db, message_id, problems)
                where = f"message {message_id}"
                yield from safe_rows(message_rows, problems, None, where, str(row["id"]), header, parts, where,
                                     problems)
                yield from problems
            yield Checkpoint(str(row["id"]))
        yield Checkpoint("done")

    @staticmethod
    def _read_v2(db: ForeignDB, record: SessionRecord, order: str) -> Iterator[Event]:
        """One session from its ``session_message`` rows, in their order."""
        session_id = record.id
        problems: list[Problem] = []
        decoded: list[tuple[str, Any, dict[str, Any]]] = []
        offset = 0
        while True:
            rows = db.query(f"SELECT id, type, data FROM session_message WHERE session_id=? ORDER BY {order}"
                            " LIMIT ? OFFSET ?", (session_id, CHUNK, offset))
            if not rows:
                break
            offset += len(rows)
            for row in rows:
                where = f"session_message {row['id']}"
                data = _decode(row["data"], where, problems)
                if data is not None:
                    decoded.append((where, row["type"] or data.get("type"), data))
        record.model = next((m for m in (v2_model(d) for _, k, d in reversed(decoded) if k == "assistant") if m),
                            None)
        yield record
        yield from problems
        for where, kind, data in decoded:
            problems = []
            yield from safe_rows(v2_message_rows, problems, None, where, session_id, kind, data, where, problems)
            yield from problems
        yield Checkpoint(session_id)

    @staticmethod
    def _messages(db: ForeignDB, session_id: str, problems: list[Problem]) -> Iterator[tuple[str, dict[str, Any]]]:
        last = (-1, "")
        while True:
            rows = db.query(
                "SELECT id, time_created, data FROM message WHERE session_id=?"
                " AND (time_created > ? OR (time_created = ? AND id > ?))"
                " ORDER BY time_created, id LIMIT ?",
                (session_id, last[0], last[0], last[1], CHUNK))
            if not rows:
                return
            for row in rows:
                last = (row["time_created"], row["id"])
                header = _decode(row["data"], f"message {row['id']}", problems)
                if header is not None:
                    if not isinstance(header.get("time"), dict):
                        header["time"] = {}
                    header["time"].setdefault("created", row["time_created"])
                    header["id"] = row["id"]
                    yield str(row["id"]), header

    @staticmethod
    def _parts(db: ForeignDB, message_id: str, problems: list[Problem]) -> Iterator[dict[str, Any]]:
        last = ""
        while True:
            rows = db.query("SELECT id, data FROM part WHERE message_id=? AND id > ? ORDER BY id LIMIT ?",
                            (message_id, last, CHUNK))
            if not rows:
                return
            for row in rows:
                last = row["id"]
                part = _decode(row["data"], f"part {row['id']}", problems)
                if part is not None:
                    yield part

