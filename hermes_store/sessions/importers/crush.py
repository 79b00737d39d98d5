"""``crush``: Charm Crush's per-project SQLite database ``.crush/crush.db``.

Also the Go OpenCode that Crush grew out of (``.opencode/opencode.db``, same
schema). Tables: ``sessions (id, parent_session_id, title, message_count,
prompt_tokens, completion_tokens, cost, created_at, updated_at (unix s),
summary_message_id)``, ``messages (id, session_id, role, parts, model, provider,
created_at, updated_at, finished_at, is_summary_message)``, ``files``.

``parts`` is a JSON list of ``{type, data}``: ``text`` (``{text}``),
``reasoning`` (``{thinking}``), ``tool_call`` (``{id, name, input}``, ``input``
being JSON text), ``tool_result`` (``{tool_call_id, name, content, is_error}``,
in ``role = "tool"`` messages), ``image_url``, ``binary`` (attachments:
``{Path, MIMEType, Data}``, ``Data`` base64; a text file's content kept after its marker, as
Crush hands it to the model), ``finish`` (``{reason, time, message}``) and, since
mid-2026, ``shell_command`` (``{command, output, exit_code}``: a ``!command`` the
user ran, in a ``user`` message; a ``tool`` row named ``shell``). A message flagged
``is_summary_message`` (the assistant's compaction summary, ``sessions.summary_message_id``) is a
``system`` row; a session's ``workspace_cwd`` (2026) is its workspace. Opened
read-only; sub-agent sessions keep their ``parent_session_id``.

A session's ``revert_message_id`` (Crush's undo, charmbracelet/crush pull request #2563,
``sessions.sql`` ``SetSessionRevert``) marks the message it is rewound to: Crush's chat hides
that message and every later one of the session (``ui.go`` ``setSessionMessages``), a redo
shows them again and the next prompt deletes them (``CleanupRevert``). Those messages are not
indexed while the mark stands; a mark set or moved since the last read drops what was indexed
of the session (:class:`Rewritten`) so the index is the history Crush shows.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Generator, Iterator
from typing import Any, ClassVar

from hermes_store.foreign_db import ForeignDB
from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    Rewritten,
    SessionRecord,
    SourceState,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    dumps,
    foreign_read,
    path_has_part,
    safe_rows,
    tool_call,
)

CHUNK = 2000
REVERTS_KEY = "reverts"  # source state: {session id: revert_message_id} as last read (set ones only)
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}
MAX_ATTACHMENT_CHARS = 8 * 1024 * 1024  # a text file attached to a prompt, base64 (larger: its marker only)


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _attachment(data: dict[str, Any]) -> str:
    """A file the user attached (``BinaryContent {Path, MIMEType, Data}``, ``Data`` base64): its
    marker, and for a text file its content, which Crush hands the model in a ``<file>`` block
    (``message.PromptWithTextAttachments``)."""
    mime = opt_str(data.get("MIMEType")) or "file"
    marker = f"[{mime} {data.get('Path') or ''}]".replace(" ]", "]")
    encoded = data.get("Data")
    if not mime.startswith("text/") or not isinstance(encoded, str) or len(encoded) > MAX_ATTACHMENT_CHARS:
        return marker
    try:
        text = base64.b64decode(encoded, validate=True).decode("utf-8", errors="replace")
    except ValueError:
        return marker
    return f"{marker}\n{text}" if text.strip() else marker


def crush_rows(role: str, parts: list[Any], session_id: str, stamp: float | None, line: int,
               problems: list[Problem]) -> list[MessageRecord]:
    """Rows of one Crush message from its ``parts``."""
    thoughts: list[MessageRecord] = []
    rows: list[MessageRecord] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        data = part.get("data") if isinstance(part, dict) and isinstance(part.get("data"), dict) else {}
        if kind == "text":
            texts.append(str(data.get("text") or ""))
        elif kind == "reasoning":
            if opt_str(data.get("thinking")):
                thoughts.append(MessageRecord(session_id, "reasoning", str(data["thinking"]), timestamp=stamp,
                                              line=line))
        elif kind == "tool_call":
            raw = data.get("input")
            try:
                arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
            except ValueError:
                arguments = raw  # a half-streamed input: kept as text
            calls.append(tool_call(data.get("id"), data.get("name"), arguments))
        elif kind == "tool_result":
            rows.append(MessageRecord(session_id, "tool", str(data.get("content") or ""),
                                      tool_name=opt_str(data.get("name")), tool_call_id=opt_str(data.get("tool_call_id")),
                                      timestamp=stamp, line=line))
        elif kind == "binary":
            texts.append(_attachment(data))
        elif kind == "image_url":
            texts.append("[image]")
        elif kind == "shell_command":  # a command the user ran in bang mode (``!cmd``), with its output
            code = data.get("exit_code")
            text = "\n".join(t for t in (f"$ {data.get('command') or ''}", str(data.get("output") or ""),
                                         f"[exit {code}]" if code not in (None, 0) else "") if t)
            rows.append(MessageRecord(session_id, "tool", text, tool_name="shell", timestamp=stamp, line=line))
        elif kind == "finish":
            if data.get("reason") == "error" and opt_str(data.get("message")):
                rows.append(MessageRecord(session_id, "system", f"[error] {data['message']}", timestamp=stamp, line=line))
        else:
            problems.append(Problem(line, f"unknown part type {kind!r} (skipped)"))
    text = "\n".join(t for t in texts if t)
    if text or calls:
        thoughts.append(MessageRecord(session_id, _ROLES.get(role, "user"), text,
                                      tool_calls=dumps(calls) if calls else None, timestamp=stamp, line=line))
    return thoughts + rows


class CrushImporter(Importer):
    """Every session of a Crush (or Go OpenCode) project database."""

    name = "crush"
    agent = "Crush"
    indexes = "parts JSON, tool messages, bang-mode shell commands, finish errors, sub-agent sessions (read-only)"
    source: str | None = "crush"
    resumable_by_offset = False
    skip_when_unchanged = False  # WAL writes do not touch the main file's mtime
    snapshot = True  # streaming updates rewrite a message's parts in place
    walk_names = ("crush.db",)
    # Crush (and Go OpenCode) keep their database inside each project, never in one place of
    # their own: no default location, a project's database is indexed when the user names it.
    default_locations: ClassVar[dict[str, tuple[str, ...]]] = {}
    project_files = (".crush/crush.db", ".opencode/opencode.db")

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``sessions`` + ``messages`` + ``files`` tables (Crush's schema)."""
        if not head.is_sqlite:
            return 0.0
        tables = head.sqlite_tables()
        if not {"sessions", "messages", "files"} <= tables:
            return 0.0
        return 0.95 if head.path.name == "crush.db" or path_has_part(head.path, ".crush", ".opencode") else 0.75

    @foreign_read
    def read(self, db: ForeignDB, state: SourceState) -> Iterator[Event]:
        source = "opencode" if self.path.name == "opencode.db" else self.source
        workspace = str(self.path.parent.parent) if self.path.parent.name in (".crush", ".opencode") else None
        columns = set(db.columns("messages"))
        if "parts" not in columns:
            yield Problem(None, "not a Crush database (messages has no parts column)")
            return
        models: dict[str, str] = {}
        for row in db.query("SELECT session_id, model FROM messages WHERE model IS NOT NULL AND model != ''"
                            " ORDER BY created_at"):
            models[str(row["session_id"])] = str(row["model"])
        sessions = db.query("SELECT * FROM sessions ORDER BY created_at, id")
        cutoffs = yield from self._reverts(db, sessions, state)
        for row in sessions:
            sid = str(row["id"])
            yield SessionRecord(
                id=sid, source=source, title=opt_str(row.get("title")), model=models.get(sid),
                workspace=opt_str(row.get("workspace_cwd")) or workspace, started_at=_stamp(row.get("created_at")),
                ended_at=_stamp(row.get("updated_at")), parent_session_id=opt_str(row.get("parent_session_id")),
                meta={k: row[k] for k in ("cost", "prompt_tokens", "completion_tokens") if row.get(k)})
        last = (-1, "")
        # a compaction summary is an assistant message flagged is_summary_message: kept as a system row
        summary = "is_summary_message" if "is_summary_message" in columns else "0 AS is_summary_message"
        while True:
            rows = db.query(f"SELECT rowid AS n, id, session_id, role, parts, created_at, {summary} FROM messages"
                            " WHERE rowid > ? ORDER BY rowid LIMIT ?", (last[0], CHUNK))
            if not rows:
                break
            for row in rows:
                last = (int(row["n"]), str(row["id"]))
                cutoff = cutoffs.get(str(row["session_id"]))
                if cutoff is not None and (_order(row.get("created_at")), last[0]) >= cutoff:
                    continue  # undone in Crush (at or after the session's revert mark): hidden there
                problems: list[Problem] = []
                try:
                    parts = json.loads(row["parts"] or "[]", strict=False)
                except (TypeError, ValueError) as exc:
                    yield Problem(last[0], f"message {row['id']}: bad parts JSON ({exc})")
                    continue
                if not isinstance(parts, list):
                    yield Problem(last[0], f"message {row['id']}: parts is not a list")
                    continue
                role = "system" if row.get("is_summary_message") else str(row["role"])
                yield from safe_rows(crush_rows, problems, last[0], f"message {row['id']}", role, parts,
                                     str(row["session_id"]), _stamp(row.get("created_at")), last[0], problems)
                yield from problems
        yield Checkpoint("done")

    @staticmethod
    def _reverts(db: ForeignDB, sessions: list[dict[str, Any]],
                 state: SourceState) -> Generator[Event, None, dict[str, tuple[float, int]]]:
        """Yield :class:`Rewritten` for each session whose revert mark was set or moved since the
        last read; return ``{session id: (created_at, rowid)}`` of each revert message: the
        session's messages from it on are hidden."""
        marks = {str(r["id"]): str(r["revert_message_id"]) for r in sessions if r.get("revert_message_id")}
        seen = state.meta.get(REVERTS_KEY) or {}
        cutoffs: dict[str, tuple[float, int]] = {}
        for sid, mark in marks.items():
            if state.resume_at and seen.get(sid) != mark:
                yield Rewritten(sid)  # messages now hidden may be indexed: the session is read afresh
            found = db.query_one("SELECT rowid AS n, created_at FROM messages WHERE id = ? AND session_id = ?",
                                 (mark, sid))
            if found is not None:  # a mark naming no message of the session hides nothing (as in Crush)
                cutoffs[sid] = (_order(found["created_at"]), int(found["n"]))
        state.meta[REVERTS_KEY] = marks
        return cutoffs


def _order(value: Any) -> float:
    """A message's ``created_at`` as a number to order by (missing or unreadable: first)."""
    return _stamp(value) or 0.0
