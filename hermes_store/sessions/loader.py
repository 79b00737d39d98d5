"""The bulk loader behind ``hermes-store sessions index``.

Design, in short:

* Inputs are walked recursively (symlink loops are cut by device/inode) and
  each file is read by its importer as a stream of events.
* Rows are buffered and written in batches of ``batch_messages`` inside one
  ``BEGIN IMMEDIATE`` transaction, together with every touched file's resume
  point in ``sources``. A crash or Ctrl-C rolls back at most one batch, and
  the next run resumes exactly where the last commit left off.
* FTS: in ``fts_mode="batch"`` (the default) the batch transaction holds a
  ``fts_deferred`` row, so the insert trigger stands aside; the new rows are
  indexed with one ``INSERT ... SELECT`` from the projection view and the row
  is removed before COMMIT -- no DDL, and other connections never see it.
  ``fts_mode="trigger"`` leaves the trigger in place (kept for the benchmark).
* Idempotent: unchanged files are skipped from their ``sources`` row;
  append-only JSONL resumes at its byte offset after checking the prefix hash
  (a rewritten file is re-imported from scratch); snapshots add only the
  messages past those already stored; ``state.db`` resumes after the last id.
* A session already indexed from another file (or recorded live) is never
  duplicated: its messages from the second file are counted as skipped.
* Pipelining: batches are written on a second connection in a background
  thread while the next batch is parsed (SQLite runs without the GIL; rows go
  in as multi-row INSERTs so the writer rarely needs the GIL). One indexing run
  per store at a time, across processes and hosts (the storage's ``index_run_lock``:
  ``<db>.index.lock`` beside SQLite, an advisory lock on PostgreSQL).

This module holds the policy (what to read, what is new, what to skip); every
read and write goes through the session storage
(:meth:`~hermes_store.sessions.storage.SessionStorage.bulk_writer` and friends),
whose SQLite implementation (:class:`~hermes_store.sessions.storage_sqlite.SqliteBulkWriter`)
holds the batched INSERTs, the deferred FTS pass and the writer thread.
"""

from __future__ import annotations

import errno
import gc
import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_store.db import Database
from hermes_store.foreign_db import ForeignDBError
from hermes_store.redaction import Redactor, redactor_for, rules_redactor
from hermes_store.sessions.importers import IMPORTERS, AmbiguousFormat, describe_unknown, detection
from hermes_store.sessions.importers.base import (
    MAX_CONTENT_CHARS,
    Checkpoint,
    Importer,
    MessageRecord,
    Notice,
    Problem,
    Rewritten,
    SessionRecord,
    SourceState,
    clean_text,
)
from hermes_store.sessions.importers.detect import Probe
from hermes_store.sessions.importers.head import MAX_LINE_BYTES, first_line_too_long
from hermes_store.sessions.maintenance import backfill_calls, backfill_projection
from hermes_store.sessions.pending import pending_row, redacted_rows
from hermes_store.sessions.rows import clean_tree, scrub
from hermes_store.sessions.storage import SESSION_FIELDS, Batch, SessionDelta, open_session_storage
from hermes_store.sessions.storage_sql import content_hash
from hermes_store.sessions.walk import walk_inputs
from hermes_store.tooling import SURROGATES as SURROGATE

DEFAULT_BATCH = 20_000
FIRST_BATCH = 2_000  # the writer thread starts this soon; batches then grow 4x up to batch_messages
RUN_LOCK_TIMEOUT = 3600.0  # seconds a second indexing run waits for the first one
SESSION_CACHE_LIMIT = 50_000  # sessions remembered between batches before the cache is reset
MAX_PROBLEMS_PER_FILE = 200
FTS_MODES = ("batch", "trigger")


MAPPED_FORMAT = "dump"  # the importer --map/--role-map configure (message_dump)


@dataclass
class IndexSummary:
    """What one ``index`` run did. ``skipped`` counts messages not added because already indexed."""

    files: int = 0
    sessions_added: int = 0
    messages_added: int = 0
    skipped: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    failed_files: int = 0
    forgotten: int = 0  # messages not imported because `hermes-store forget` removed them for good
    messages_updated: int = 0  # re-read under a stored uid with another text: edited in place
    notices: list[dict[str, Any]] = field(default_factory=list)  # inputs of a format with nothing to import
    unwalked: list[str] = field(default_factory=list)  # hidden agent data folders a walk left out
    reread: int = 0  # files read again because a newer version of their importer reads them better

    @property
    def all_failed(self) -> bool:
        """True when there were inputs and every one of them failed."""
        return self.files > 0 and self.failed_files == self.files

    def as_dict(self) -> dict[str, Any]:
        """The public summary: ``files, sessions_added, messages_added, skipped, errors``,
        ``forgotten`` when messages were left out because they were forgotten for good,
        ``messages_updated`` when stored messages were edited in place, and ``notices`` when
        inputs of a known format held nothing to import (``{path, line, notice}``), ``unwalked``
        when a walked directory held hidden folders named like an agent's (not walked), ``reread``
        when files indexed by an older version of their importer were read again."""
        out: dict[str, Any] = {"files": self.files, "sessions_added": self.sessions_added,
                               "messages_added": self.messages_added, "skipped": self.skipped,
                               "errors": list(self.errors)}
        if self.forgotten:
            out["forgotten"] = self.forgotten
        if self.messages_updated:
            out["messages_updated"] = self.messages_updated
        if self.notices:
            out["notices"] = list(self.notices)
        if self.unwalked:
            out["unwalked"] = list(self.unwalked)
        if self.reread:
            out["reread"] = self.reread
        return out


@dataclass(slots=True)
class _Session:
    owner: str | None  # key of the file that may write this session (None: nobody in this run)
    next_seq: int
    is_new: bool
    added: int = 0
    min_ts: float | None = None
    max_ts: float | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    foreign: bool = False  # already indexed from another file: this run must not claim it
    refused: int = 0  # messages of a colliding id not imported (reported, never "already indexed")
    stored: list[str] | None = None  # contents already indexed for a foreign session, by seq
    compared: int = 0  # messages of it compared so far in this file
    uids: dict[str, str] | None = None  # {message_uid: stored content} while re-reading by uid
    adopted: bool = False  # taken over from the file that stored it (see _continues)


@dataclass(slots=True)
class _File:
    key: str
    shown: str
    format: str
    source_id: int | None
    state: SourceState
    importer: Importer
    derive_end: bool
    snapshot: bool
    default_source: str = "cli"
    size: int = 0
    mtime: float = 0.0
    complete: bool = False
    messages: int = 0  # messages of this file committed to the store (cumulative)
    problems: int = 0
    accepted: int = 0  # messages taken from this file in this run
    pending: int = 0  # messages taken from this file and not yet committed
    snap_base: dict[str, int] = field(default_factory=dict)
    snap_seen: dict[str, int] = field(default_factory=dict)
    by_uid: bool = False  # re-read after the source renumbered: known uids keep their rows
    uids_kept: bool = False  # every message of this source read so far was stored with its uid
    said: bool = False  # a message taken from this file in this run has text or a tool call
    first_empty: int | None = None  # the line of the first message taken with neither


class BulkLoader:
    """Imports transcript files into one store database (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        *,
        batch_messages: int = DEFAULT_BATCH,
        fts_mode: str = "batch",
        progress: Callable[[Path, int], None] | None = None,
        pipeline: bool = True,
        options: dict[str, Any] | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        if fts_mode not in FTS_MODES:
            raise ValueError(f"fts_mode: expected one of {', '.join(FTS_MODES)}, got {fts_mode!r}")
        self.db = db
        self.storage = open_session_storage(db)
        self.redactor = redactor_for(db)  # secrets replaced before anything is buffered
        self._rules: Redactor | None = None  # the rules whatever store.redact says (tombstones)
        self.redact = self.redactor.redact
        # what `hermes-store forget` removed for good: never imported again
        self._forgotten_sessions, self._forgotten_messages = self.storage.tombstones()
        self.batch_messages = max(1, int(batch_messages))
        self._limit = min(self.batch_messages, FIRST_BATCH)  # this batch's size (see FIRST_BATCH)
        self.fts_mode = fts_mode
        self.progress = progress
        self.on_wait = on_wait  # told once when another run holds the indexing lock
        self.pipeline = pipeline
        self.options = dict(options or {})  # handed to every importer (e.g. column_map)
        self.summary = IndexSummary()
        self.writer_cpu_seconds = 0.0
        self._sessions: dict[str, _Session] = {}
        self._renamed: set[tuple[str, str]] = set()
        self._files: dict[str, _File] = {}  # files with state not yet committed
        self._pending: list[tuple[Any, ...]] = []
        self._updates: list[tuple[Any, ...]] = []  # rows re-read under a stored uid, content changed
        own = str(Path(self.storage.location()).resolve())
        self._exclude = {own, own + "-wal", own + "-shm", own + "-journal"}

    # -- driver -------------------------------------------------------------------

    def run(self, paths: Iterable[str | os.PathLike[str]], fmt: str = "auto") -> IndexSummary:
        """Import every input; returns the summary (also kept in ``self.summary``)."""
        if fmt != "auto" and fmt not in IMPORTERS:
            raise ValueError(f"unknown format {fmt!r} (expected auto or one of {', '.join(IMPORTERS)})")
        with self._run_lock():
            return self._run(paths, fmt)

    def _run_lock(self) -> Any:
        """One indexing run per store at a time (across processes and hosts): a second run
        waits, then finds the files already indexed instead of racing on the same sessions
        (the storage's lock: a lock file beside SQLite, an advisory lock on PostgreSQL)."""
        return self.storage.index_run_lock(RUN_LOCK_TIMEOUT, self.on_wait)

    def _run(self, paths: Iterable[str | os.PathLike[str]], fmt: str) -> IndexSummary:
        backfill_projection(self.storage)  # once after migration 0007 (emoji in the projection)
        backfill_calls(self.storage)  # once after migration 0010 / pg 0008 (tool calls indexed)
        done: set[str] = set()
        resolved_dirs: dict[str, str | None] = {}  # this run's resolved parent directories
        self._writer = self.storage.bulk_writer(pipeline=self.pipeline, on_commit=self._committed)
        collecting = gc.isenabled()
        gc.disable()  # millions of short-lived acyclic objects: cyclic GC passes are pure overhead
        try:
            loops: list[tuple[Path, Path]] = []
            unwalked: list[Path] = []
            for path, explicit in walk_inputs(paths, loops, unwalked):
                self._report_loops(loops)
                key = _key(path, resolved_dirs)
                if key in done or (key in self._exclude and not explicit):
                    continue
                done.add(key)
                self._import_file(path, key, fmt)
                if self.progress is not None:
                    self.progress(path, _size(path))
            self._report_loops(loops)
            self.summary.unwalked = [str(p) for p in dict.fromkeys(unwalked)]
            self._flush(wait=True)
        finally:
            if collecting:
                gc.enable()
            self._writer.close()
            self.writer_cpu_seconds = self._writer.cpu_seconds
        return self.summary

    def _report_loops(self, loops: list[tuple[Path, Path]]) -> None:
        while loops:
            link, target = loops.pop(0)
            self.summary.errors.append({"path": str(link), "line": None,
                                        "error": f"directory loop: links back to {target} (not followed)"})

    def _import_file(self, path: Path, key: str, fmt: str) -> None:
        summary = self.summary
        summary.files += 1
        if key in self._exclude:
            self._file_error(path, "is the store's own database")
            return
        try:
            info = path.stat()
        except OSError as exc:
            self._file_error(path, _unreadable(path, exc))
            return
        if not path.is_file():
            self._file_error(path, "not a regular file")
            return
        row = self.storage.source_state(key)
        meta: dict[str, Any] = json.loads(row["meta"] or "{}") if row is not None else {}
        known = IMPORTERS.get(row["format"]) if row is not None else None
        # read by an older version of its importer (a fix since changes what it yields): read
        # again whole. An append-only file whose prefix is unchanged still holds all it gave; a
        # document replaced whole on any change is read so at its next change anyway. Not a
        # snapshot matched by place: the agent may have cut messages only the store keeps.
        outdated = (known is not None and (not known.snapshot or known.replaced_whole)
                    and int(meta.get("reader", 1)) < known.reader)
        # importer options (a dump's --map / --role-map) may read the same file differently: re-read
        if (known is not None and known.skip_when_unchanged and fmt in ("auto", known.name)
                and not self.options and meta.get("complete") and row["size"] == info.st_size
                and row["mtime"] == info.st_mtime and not outdated):
            summary.skipped += int(meta.get("messages", 0))  # unchanged since it was indexed
            return
        importer, probe = self._importer(path, fmt)
        if importer is None:
            return
        if probe is not None and row is not None:  # known before: its read starts from the stored state
            probe.close()
            probe = None
            importer = _again(importer)
        state = SourceState() if probe is None else probe.state
        by_uid = False
        if row is not None:
            state = SourceState(resume_at=row["resume_at"], content_hash=row["content_hash"],
                                lines=int(meta.get("lines", 0)), meta=dict(meta.get("state", {})))
            if row["format"] != importer.name:  # read by another importer (now detected as this one)
                summary.reread += int(outdated)
                self._forget_source(int(row["id"]))
                state, meta = SourceState(), {}
            elif importer.is_rewritten(state) or (outdated and importer.whole()):
                summary.reread += int(outdated)
                if state.meta.get(UIDS_KEPT):  # renumbered: re-read, every message found by its uid
                    self._flush(wait=True)
                    self._sessions.clear()
                    state = SourceState(meta={UIDS_KEPT: True})  # the read's counters start again
                    by_uid = True
                else:
                    self._forget_source(int(row["id"]))
                    state, meta = SourceState(), {}
            elif not importer.snapshot:
                summary.skipped += int(meta.get("messages", 0))  # already indexed, not re-read
        current = _File(
            key=key, shown=str(path), format=importer.name,
            source_id=int(row["id"]) if row is not None else None, state=state, importer=importer,
            derive_end=importer.derives_end_time, snapshot=importer.snapshot,
            default_source=importer.source_label(), size=info.st_size, mtime=info.st_mtime, messages=int(meta.get("messages", 0)),
            by_uid=by_uid, uids_kept=by_uid or not state.resume_at or bool(state.meta.get(UIDS_KEPT)),
        )
        self._files[key] = current
        try:
            # a new file continues the read detection checked its content with (not read twice)
            self._consume(current, probe.replay() if probe is not None else importer.read(state))
            current.complete = True
        except (OSError, UnicodeError, ValueError) as exc:
            self._problem(current, None, f"read failed: {exc}")
        if current.accepted and not current.said:
            self._problem(current, current.first_empty,
                          f"all {current.accepted} messages read as {current.format} are empty (no text, no tool "
                          "call): the file's shape is not one this importer reads; pass --format to read it "
                          "as another")
        if current.problems > MAX_PROBLEMS_PER_FILE:
            summary.errors.append({"path": current.shown, "line": None,
                                   "error": f"{current.problems - MAX_PROBLEMS_PER_FILE} further problems not listed"})
        if current.problems and not current.accepted and not current.messages:
            summary.failed_files += 1

    def _importer(self, path: Path, fmt: str) -> tuple[Importer | None, Probe | None]:
        """The importer for ``path`` (detected when ``fmt`` is auto; (None, None) after reporting
        why) and detection's paused content check of it, when there was one."""
        if fmt != "auto":
            return IMPORTERS[fmt](path, self.options), None
        try:
            found = detection(path, options=self.options, keep_probe=True)
        except (AmbiguousFormat, ForeignDBError) as exc:  # ForeignDBError: e.g. locked by its writer
            self._file_error(path, str(exc))
            return None, None
        if found.name is None and self.options.get("column_map") and found.ranked \
                and found.ranked[0][0] == MAPPED_FORMAT:
            found.name = MAPPED_FORMAT  # --map names the columns: its read reports what is missing
        if found.name is None:
            if not found.ranked and first_line_too_long(path):
                self._file_error(path, f"line 1 is longer than {MAX_LINE_BYTES:,} bytes, so its format cannot be "
                                       "recognised; nothing imported (pass --format to import the other lines)")
                return None, None
            self._file_error(path, describe_unknown(found.ranked, found.refused))
            return None, None
        probe = found.probe
        if probe is not None and type(probe.importer) is IMPORTERS[found.name]:
            return probe.importer, probe
        if probe is not None:
            probe.close()
        importer = IMPORTERS[found.name](path, self.options)
        importer.head = found.head  # a whole document the detector parsed is not parsed again
        return importer, None

    def _consume(self, current: _File, events: Iterator[Any]) -> None:
        add_message = self._add_message
        for event in events:
            kind = type(event)
            if kind is MessageRecord:
                add_message(current, event)
            elif kind is Checkpoint:
                current.state.resume_at = event.resume_at
                current.state.lines = event.lines
                if len(self._pending) >= self._limit:
                    self._flush()
                    self._limit = min(self.batch_messages, self._limit * 4)
            elif kind is SessionRecord:
                self._add_session(current, event)
            elif kind is Problem:
                self._problem(current, event.line, event.error)
            elif kind is Notice:
                self.summary.notices.append({"path": current.shown, "line": event.line, "notice": event.text})
            elif kind is Rewritten:
                self._rewritten(current, self._clean_id(current, event.session_id, None))

    # -- events -------------------------------------------------------------------

    def _session(self, current: _File, session_id: str) -> _Session:
        info = self._sessions.get(session_id)
        if info is not None:
            return info
        cursor = self.storage.session_cursor(session_id)
        if cursor is None:
            info = _Session(owner=current.key, next_seq=0, is_new=True)
        else:
            source_id, next_seq = cursor
            mine = current.source_id is not None and source_id == current.source_id
            info = _Session(owner=current.key if mine else None, next_seq=next_seq, is_new=False,
                            foreign=not mine and source_id is not None)
        self._sessions[session_id] = info
        if current.snapshot and session_id not in current.snap_base:
            current.snap_base[session_id] = info.next_seq
        return info

    def _rewritten(self, current: _File, session_id: str) -> None:
        """Drop the messages this file imported of a session whose history it rewrote; the
        importer sends every message of it it still holds next, from seq 0."""
        info = self._session(current, session_id)
        if info.owner != current.key or info.is_new:
            return  # not imported from this file (or not at all): nothing of it to drop
        self._flush(wait=True)
        current.messages -= self.storage.drop_messages(session_id)
        self._sessions.pop(session_id, None)
        current.snap_base.pop(session_id, None)  # a snapshot's messages of it are all new again

    def _clean_id(self, current: _File, raw: str, line: int | None) -> str:
        """A storable session id (NUL bytes and lone surrogates removed), reported when changed."""
        clean = scrub(raw) or ""
        if clean != raw and (current.key, raw) not in self._renamed:
            self._renamed.add((current.key, raw))
            self._problem(current, line, f"session id {raw!r} contains NUL bytes or lone surrogates; "
                                         f"stored as {clean!r}")
        return clean

    def _same_as_stored(self, info: _Session, session_id: str, record: MessageRecord) -> bool:
        """True while the file's messages for a session indexed elsewhere repeat the stored ones."""
        if info.refused:
            return False
        if info.stored is None:
            info.stored = [m["content"] for m in self.storage.get_messages(session_id)]
        index = info.compared
        info.compared += 1
        return index < len(info.stored) and info.stored[index] == (self.redact(scrub(record.content)) or "")

    def _continues(self, current: _File, info: _Session, session_id: str) -> bool:
        """Whether this file continues a session another file stored: it repeated every stored
        message in order and goes on (an agent's newer store holding what the older one did --
        OpenCode's database after its JSON storage, a Gemini CLI ``.json`` resumed as ``.jsonl``).
        Then it takes the session over: its further messages are added, and it owns it."""
        if info.refused or not info.stored or info.compared != len(info.stored) + 1:
            return False
        info.owner, info.foreign, info.adopted = current.key, False, True
        if current.snapshot:  # matched by place from now on: the stored ones were this file's first
            current.snap_base[session_id] = current.snap_seen[session_id] = len(info.stored)
        return True

    def _refuse_collision(self, current: _File, info: _Session, session_id: str, line: int | None) -> None:
        """A message for a session this file does not own: a collision, reported truthfully."""
        info.refused += 1
        if info.refused == 1:
            self._problem(current, line, f"session id {session_id!r} is already indexed from another file; "
                                         "this file's messages for it were not imported (ids must be unique)")

    def _add_session(self, current: _File, record: SessionRecord) -> None:
        session_id = self._clean_id(current, record.id, None)
        info = self._session(current, session_id)
        if info.owner != current.key:
            return
        fields = info.fields
        for name in SESSION_FIELDS:
            value = getattr(record, name)
            if value is not None:
                fields[name] = self.redact(scrub(value)) if isinstance(value, str) else value
        if record.meta:  # stored like the fields: a Codex header's git URL may hold a token
            fields.setdefault("meta", {}).update(clean_tree(record.meta, lambda text: self.redact(scrub(text))))

    def _forgotten(self, hashes: Any, content: str) -> bool:
        """Whether ``content`` is a forgotten message: its tombstone holds the hash of the text
        as stored then -- redacted, or as it came when ``store.redact`` was off -- so both forms
        are compared, and turning redaction off (or on) never brings a forgotten message back."""
        if self._rules is None:
            self._rules = rules_redactor(self.db)
        return content_hash(content) in hashes or content_hash(self._rules.redact(content) or "") in hashes

    def _add_message(self, current: _File, record: MessageRecord) -> None:
        session_id = record.session_id
        if not session_id.isascii() or "\x00" in session_id:
            session_id = self._clean_id(current, session_id, record.line)
        if self._forgotten_sessions and session_id in self._forgotten_sessions:
            self.summary.forgotten += 1
            return
        info = self._sessions.get(session_id) or self._session(current, session_id)
        if info.owner != current.key:
            if not info.foreign or self._same_as_stored(info, session_id, record):
                self.summary.skipped += 1  # a copy of it, or recorded live: these messages are already indexed
                return
            if not self._continues(current, info, session_id):
                self._refuse_collision(current, info, session_id, record.line)  # a different session, same id
                return
        if current.snapshot:
            seen = current.snap_seen.get(session_id, 0)
            current.snap_seen[session_id] = seen + 1
            if seen < current.snap_base.get(session_id, 0):
                self.summary.skipped += 1
                return
        content = record.content
        ascii_only = content.isascii()  # O(1) in CPython: no surrogates, no CJK
        if "\x00" in content or len(content) > MAX_CONTENT_CHARS or (
                not ascii_only and SURROGATE.search(content)):
            problems: list[Problem] = []
            content = clean_text(content, record.line, "content", problems)
            for problem in problems:
                self._problem(current, problem.line, problem.error)
        tool_calls = record.tool_calls
        if tool_calls is not None and not tool_calls.isascii() and (
                "\x00" in tool_calls or SURROGATE.search(tool_calls)):
            self._problem(current, record.line, "field 'tool_calls': NUL bytes or lone surrogates replaced")
            tool_calls = scrub(tool_calls)
        # secrets are replaced for the whole batch in _flush (one prefilter scan); a session
        # with forgotten messages compares the stored forms now
        if self._forgotten_messages and session_id in self._forgotten_messages and \
                self._forgotten(self._forgotten_messages[session_id], content):
            self.summary.forgotten += 1
            return
        uid = record.message_uid
        if current.uids_kept and (uid is None or uid == ""):
            current.uids_kept = False
            current.state.meta.pop(UIDS_KEPT, None)
        elif current.uids_kept:
            current.state.meta[UIDS_KEPT] = True
        if uid and current.by_uid and self._known_uid(info, session_id, uid, record, content, tool_calls):
            return
        timestamp = record.timestamp
        if timestamp is not None:
            if info.min_ts is None or timestamp < info.min_ts:
                info.min_ts = timestamp
            if info.max_ts is None or timestamp > info.max_ts:
                info.max_ts = timestamp
        info.added += 1
        current.accepted += 1
        if not current.said:
            if tool_calls or content.strip():
                current.said = True
            elif current.first_empty is None:
                current.first_empty = record.line
        current.pending += 1
        seq = info.next_seq
        info.next_seq = seq + 1
        if uid and info.uids is not None:
            info.uids[uid] = self.redact(content) or ""
        self._pending.append(pending_row(session_id, seq, record, content, tool_calls, ascii_only))

    def _known_uid(self, info: _Session, session_id: str, uid: str, record: MessageRecord,
                   content: str, tool_calls: str | None) -> bool:
        """True when a re-read message's uid is stored for the session: it keeps its row (seq
        and ref); a changed content (edited in place under the same uid) is queued as an update."""
        if info.uids is None:
            info.uids = {} if info.is_new else self.storage.message_uids(session_id)
        stored = info.uids.get(uid)
        if stored is None:
            return False
        if stored != (self.redact(content) or ""):
            self._updates.append(pending_row(session_id, None, record, content, tool_calls, content.isascii()))
            info.uids[uid] = self.redact(content) or ""
            self.summary.messages_updated += 1
        self.summary.skipped += 1
        return True

    def _committed(self, messages_added: int, sessions_added: int) -> None:
        """Called by the writer after each batch commits."""
        self.summary.messages_added += messages_added
        self.summary.sessions_added += sessions_added

    def _problem(self, current: _File, line: int | None, error: str) -> None:
        current.problems += 1
        if current.problems <= MAX_PROBLEMS_PER_FILE:  # a problem may quote the line: redacted like it
            self.summary.errors.append({"path": current.shown, "line": line, "error": self.redact(error)})

    def _file_error(self, path: Path, error: str) -> None:
        self.summary.errors.append({"path": str(path), "line": None, "error": error})
        self.summary.failed_files += 1

    # -- writing ------------------------------------------------------------------

    def _forget_source(self, source_id: int) -> None:
        """Drop everything a rewritten/replaced source imported (FTS follows via triggers)."""
        self._flush(wait=True)
        self._writer.forget_source(source_id)
        self._sessions.clear()

    def _flush(self, wait: bool = False) -> None:
        """Hand the pending batch to the writer (one transaction); ``wait`` for it to commit."""
        if self._pending or self._updates or self._files or self._sessions:
            job = Batch(rows=redacted_rows(self.redactor, self._pending), fts_mode=self.fts_mode)
            self._pending = []
            if self._updates:
                job.updates = [(r[3], r[5], r[8], r[9], r[10], r[11], r[0], r[12])
                               for r in redacted_rows(self.redactor, self._updates)]
                self._updates = []
            for session_id, info in self._sessions.items():
                if info.owner is None or not (info.added or info.fields or info.is_new):
                    continue
                owner = self._files[info.owner]
                job.sessions.append(SessionDelta(
                    session_id, info.fields, info.is_new, owner, info.added, info.min_ts,
                    info.max_ts, owner.derive_end, info.adopted))
                info.fields, info.is_new, info.added, info.min_ts, info.max_ts = {}, False, 0, None, None
                info.adopted = False
            for current in self._files.values():
                job.sources.append((current, _progress(current)))
                current.messages += current.pending
                current.pending = 0
            self._files = {k: f for k, f in self._files.items() if not f.complete}
            if len(self._sessions) > SESSION_CACHE_LIMIT:
                wait = True
            self._writer.write(job, wait=wait)
        elif wait:
            self._writer.wait()
        if wait and len(self._sessions) > SESSION_CACHE_LIMIT:
            self._sessions.clear()  # the store is up to date: re-read on demand


UIDS_KEPT = "uids_kept"  # source state flag: every message of it is stored with its message_uid


def _again(importer: Importer) -> Importer:
    """A new importer of the same format for the same file (its detection head kept)."""
    fresh = type(importer)(importer.path, importer.options)
    fresh.head = importer.head
    return fresh


def _progress(current: _File) -> dict[str, Any]:
    """A snapshot of a file's resume state, as the ``sources`` row will hold it."""
    meta = {"lines": current.state.lines, "messages": current.messages + current.pending,
            "complete": current.complete, "state": dict(current.state.meta),
            "reader": current.importer.reader}
    return {"size": current.size if current.complete else 0,
            "mtime": current.mtime if current.complete else 0.0,
            "content_hash": current.importer.content_hash(),
            "resume_at": None if current.state.resume_at is None else str(current.state.resume_at),
            "meta": json.dumps(meta, ensure_ascii=False)}


def _key(path: Path, resolved_dirs: dict[str, str | None] | None = None) -> str:
    """The file's resolved absolute path (its ``sources`` key).

    A file that is not itself a symlink resolves to its resolved directory plus its name, so
    with ``resolved_dirs`` (a per-run cache) the files of one directory resolve it once.
    """
    name = path.name
    if resolved_dirs is not None and name not in ("", ".", "..") and not os.path.islink(path):
        folder = str(path.parent)
        if folder not in resolved_dirs:
            resolved_dirs[folder] = _resolved(Path(folder))
        if resolved_dirs[folder] is not None:
            return os.path.join(resolved_dirs[folder], name)
    return _resolved(path) or str(path.absolute())


def _resolved(path: Path) -> str | None:
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return None


def _unreadable(path: Path, exc: OSError) -> str:
    """Why ``path`` cannot be read, with symlink loops named as such."""
    if exc.errno == errno.ELOOP or (path.is_symlink() and _loops(path)):
        return "symbolic link loop (the link leads back to itself)"
    return f"cannot read: {exc.strerror or exc}"


def _loops(path: Path) -> bool:
    try:
        path.resolve(strict=True)
    except RuntimeError:
        return True
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
