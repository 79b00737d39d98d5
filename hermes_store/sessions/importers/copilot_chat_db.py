"""``copilot-chat-db``: GitHub Copilot Chat sessions VS Code kept in its ``state.vscdb`` (read-only).

Before VS Code saved each chat as a file (``chatSessions/``, :mod:`copilot_chat`), its chat
service stored every chat of a window under one key of the window's storage database,
``<User>/workspaceStorage/<hash>/state.vscdb`` (a folder's window) or
``<User>/globalStorage/state.vscdb`` (windows without a folder), an SQLite ``ItemTable(key,
value)``:

* ``interactive.sessions``: ``JSON.stringify`` of a list of ``ISerializableChatData``
  (versions 1-3: ``{version, sessionId, creationDate, lastMessageDate?, computedTitle? (v2),
  customTitle? (v3), requesterUsername, responderUsername, initialLocation, requests:
  [...]}``; the 25 newest, each request as in a ``chatSessions`` file, the oldest with
  ``message`` and ``response`` plain strings and ``responseErrorDetails``);
* ``chat.ChatSessionStore.index``: ``{version: 1, entries: {sessionId:
  {title, lastMessageDate, isEmpty, ...}}}``, the index of the ``chatSessions/`` files.

When VS Code moved to files it copied each saved chat to ``chatSessions/<sessionId>.json``
and left the key in place, so a session whose file is beside the database is read from that
file (``copilot-chat``), not twice. A database holding only the index is claimed with a
notice (its chats are the files); one with neither key (a window that never chatted) is
refused, like any database without its format's content. Only these two keys are read: the same table holds
extension secrets, never touched. Cursor's database (same layout, ``cursorDiskKV``) is
``cursor``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from hermes_store.foreign_db import ForeignDB
from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    Notice,
    Problem,
    SourceState,
    opt_str,
)
from hermes_store.sessions.importers.copilot_chat import session_events, workspace_of
from hermes_store.sessions.importers.doc_common import (
    foreign_read,
    path_has_part,
    workspace_database,
)

SESSIONS_KEY = "interactive.sessions"
INDEX_KEY = "chat.ChatSessionStore.index"
_EDITIONS = ("Code", "Code - Insiders", "VSCodium")


def _globs(base: str) -> tuple[str, ...]:
    return tuple(f"{base}/{edition}/User/{where}/state.vscdb"
                 for edition in _EDITIONS for where in ("globalStorage", "workspaceStorage/*"))


def _chat_keys(db: ForeignDB) -> set[str]:
    """Which of the two chat keys ``db``'s ``ItemTable`` holds."""
    rows = db.query("SELECT key FROM ItemTable WHERE key IN (?, ?)", (SESSIONS_KEY, INDEX_KEY))
    return {str(row["key"]) for row in rows}


def _probe(path: Path) -> tuple[set[str], bool]:
    """The chat keys of the file's ``ItemTable``, and whether it holds any key at all."""
    try:
        with ForeignDB(path, busy_seconds=0.2) as db:
            if not db.table_exists("ItemTable"):
                return set(), False
            return _chat_keys(db), db.has_rows("ItemTable")
    except Exception:  # a sniff never raises (a locked file is reported by detection itself)
        return set(), False


def _in_vscode_user_dir(path: Path) -> bool:
    """``<edition>/User/{globalStorage,workspaceStorage/<hash>}/`` of a VS Code edition."""
    parts = path.parts
    return any(parts[i] in _EDITIONS and parts[i + 1] == "User"
               and parts[i + 2] in ("globalStorage", "workspaceStorage") for i in range(len(parts) - 3))


class CopilotChatDbImporter(Importer):
    """The Copilot Chat sessions of one VS Code ``state.vscdb`` (``interactive.sessions``)."""

    name = "copilot-chat-db"
    agent = "GitHub Copilot Chat (VS Code state.vscdb)"
    indexes = ("interactive.sessions (chats saved before chatSessions/ files): requests and responses, "
               "tool invocations, thinking, edits, errors (read-only)")
    source: str | None = "copilot-chat"
    resumable_by_offset = False
    skip_when_unchanged = False  # WAL writes do not touch the main file's mtime
    snapshot = True
    walk_names = ("state.vscdb",)
    default_locations = {"linux": _globs("~/.config"), "darwin": _globs("~/Library/Application Support")}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """An ``ItemTable`` holding ``interactive.sessions`` or the chat-session index (not Cursor's),
        or the ``workspace.json`` beside such a database (read through it)."""
        if cls.member_of(head) is not None:
            return 0.6
        if not head.is_sqlite:
            return 0.0
        tables = head.sqlite_tables()
        if "ItemTable" not in tables or "cursorDiskKV" in tables or path_has_part(head.path, "Cursor"):
            return 0.0
        keys, used = _probe(head.path)
        if keys:
            return 0.95 if SESSIONS_KEY in keys else 0.9
        # a window that never chatted: VS Code's own file, holding nothing to import (a notice)
        return 0.6 if used and _in_vscode_user_dir(head.path) else 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """A workspace-storage folder's ``workspace.json`` (``{folder}`` or ``{workspace}``) is read
        through the ``state.vscdb`` beside it (it gives that database's sessions their folder)."""
        return None if path_has_part(head.path, "Cursor") else workspace_database(head)

    def read(self, state: SourceState) -> Iterator[Event]:
        """The database's sessions; nothing for a ``workspace.json`` (read through its database)."""
        if self.path.name == "workspace.json" and self.member_of(self.head or Head.read(self.path)) is not None:
            return iter(())
        return self._read_database(state)

    def _files_dir(self) -> Path:
        """Where VS Code wrote this database's chats as files (``chatSessions`` of a folder's
        window, ``emptyWindowChatSessions`` of the global database)."""
        name = "emptyWindowChatSessions" if self.path.parent.name == "globalStorage" else "chatSessions"
        return self.path.parent / name

    @foreign_read
    def _read_database(self, db: ForeignDB, state: SourceState) -> Iterator[Event]:
        if not db.table_exists("ItemTable"):
            yield Problem(None, "no ItemTable: not a VS Code storage database")
            return
        row = db.query_one("SELECT value FROM ItemTable WHERE key=?", (SESSIONS_KEY,))
        if row is None:
            if INDEX_KEY in _chat_keys(db):
                yield Notice(None, f"{INDEX_KEY}: this database only indexes the chats of {self._files_dir()}"
                                   " (read as copilot-chat); nothing to import here")
                yield Checkpoint("done")
            elif db.has_rows("ItemTable") and _in_vscode_user_dir(self.path):
                yield Notice(None, f"neither {SESSIONS_KEY} nor {INDEX_KEY} in ItemTable: a VS Code window"
                                   " that never chatted; nothing to import here")
                yield Checkpoint("done")
            else:
                yield Problem(None, f"neither {SESSIONS_KEY} nor {INDEX_KEY} in ItemTable: no Copilot Chat here")
            return
        value = row["value"]
        if isinstance(value, (bytes, memoryview)):
            value = bytes(value).decode("utf-8", errors="replace")
        try:
            chats = json.loads(value, strict=False) if isinstance(value, str) else None
        except (ValueError, RecursionError) as exc:
            yield Problem(None, f"{SESSIONS_KEY}: value is not JSON ({exc})")
            return
        if not isinstance(chats, list):
            yield Problem(None, f"{SESSIONS_KEY}: expected a JSON list of chat sessions")
            return
        workspace = workspace_of(self.path.parent)
        files, in_files = self._files_dir(), 0
        for index, chat in enumerate(chats):
            where = f"{SESSIONS_KEY}[{index}]"
            if not isinstance(chat, dict) or not isinstance(chat.get("requests"), list):
                yield Problem(None, f"{where}: expected a chat session with a 'requests' list (skipped)")
                continue
            session_id = opt_str(chat.get("sessionId"))
            if session_id is None:
                yield Problem(None, f"{where}: no sessionId (skipped)")
                continue
            if not chat["requests"]:
                continue  # opened, never asked: VS Code keeps these in an empty window
            if any((files / f"{session_id}{ext}").is_file() for ext in (".json", ".jsonl")):
                in_files += 1  # VS Code copied it to a file when it moved to chatSessions/
                continue
            yield from session_events(chat, session_id, self.source, workspace, f"{where} ")
        if in_files:
            yield Notice(None, f"{SESSIONS_KEY}: {in_files} session(s) also saved in {files}, "
                               "read from there (copilot-chat)")
        yield Checkpoint("done")
