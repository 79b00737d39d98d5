"""MemoryStore: the built-in MEMORY.md / USER.md store, behaviour-compatible with Hermes.

State model (as in Hermes): ``load_from_disk()`` reads both files, keeps the
live entry lists and renders a *frozen* system-prompt snapshot from the
threat-sanitised entries. Writes re-read the file under its lock, operate on
the fresh entries, write atomically and update the live lists — never the
snapshot. Responses are dicts with Hermes' keys and messages.

Beyond Hermes: provenance and history in SQLite (never in the files), an
``on_write`` hook after each committed write, ``restore`` of a history event,
prompt cost, a compact render style, and fixes for known holes (delimiter in
content, echoed entries sanitised, ``new_text`` scanned in batches).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_store.builtin import messages as msg
from hermes_store.builtin.entries import (
    TARGETS,
    char_count,
    join_entries,
    parse_entries,
    read_problem,
    read_raw_checked,
    usage_long,
    usage_short,
)
from hermes_store.builtin.fileio import (
    atomic_write_bytes,
    atomic_write_text,
    lock_path_for,
    locked,
    remove_stale_temps,
)
from hermes_store.builtin.operations import (
    Outcome,
    StepFailure,
    as_text,
    batch_extras,
    batch_step,
    check_content,
    drifted,
    edited,
    locate,
    no_match_failure,
    op_text,
    preserves,
    round_trips,
    spec,
)
from hermes_store.builtin.provenance import Event, Provenance
from hermes_store.builtin.render import RENDER_STYLES, block_cost, render_block
from hermes_store.builtin.threats import (
    MAX_SCAN_CHARS,
    sanitize_entries,
    scan_findings,
)
from hermes_store.home import (
    DEFAULT_MEMORY_CHAR_LIMIT,
    DEFAULT_USER_CHAR_LIMIT,
    ConfigError,
    Home,
    coerce_int,
)
from hermes_store.redaction import RedactionSettings, Redactor

logger = logging.getLogger(__name__)

OnWrite = Callable[[str, str, str, dict], Any]


class MemoryStore:
    """Bounded, file-backed memory for one Hermes home (targets ``memory`` and ``user``).

    ``home`` is a :class:`~hermes_store.home.Home`, a path to a home directory,
    or None (resolve ``HERMES_HOME`` on every call, so profile switches are
    honoured). ``on_write(action, target, content, metadata)`` is called after
    each committed add/replace/remove (a batch is reported op by op).
    """

    def __init__(self, home: Home | str | os.PathLike[str] | None = None,
                 memory_char_limit: int | str = DEFAULT_MEMORY_CHAR_LIMIT,
                 user_char_limit: int | str = DEFAULT_USER_CHAR_LIMIT, *,
                 render: str | None = None, on_write: OnWrite | None = None,
                 origin: str = "api", session_id: str = "", provenance: bool = True) -> None:
        self._home_arg = home if isinstance(home, Home) or home is None else Home(home)
        self.memory_char_limit = coerce_int(memory_char_limit, DEFAULT_MEMORY_CHAR_LIMIT,
                                            name="memory_char_limit")
        self.user_char_limit = coerce_int(user_char_limit, DEFAULT_USER_CHAR_LIMIT,
                                          name="user_char_limit")
        if render is not None and render not in RENDER_STYLES:
            raise ValueError(f"render: expected one of {', '.join(RENDER_STYLES)}, got {render!r}")
        self._render = render
        self.on_write = on_write
        self.origin = origin
        self.session_id = session_id
        self.memory_entries: list[str] = []
        self.user_entries: list[str] = []
        self._system_prompt_snapshot: dict[str, str] = {"memory": "", "user": ""}
        self._consolidation_failures = 0
        self._lock = threading.RLock()
        self._provenance_enabled = provenance
        self._provenance: Provenance | None = None

    # -- configuration ------------------------------------------------------

    @property
    def home(self) -> Home:
        """The home in use (re-resolved from the environment when none was given)."""
        return self._home_arg if self._home_arg is not None else Home()

    @property
    def render_style(self) -> str:
        """``hermes`` (byte-identical blocks) or ``compact``; from config unless given."""
        if self._render is not None:
            return self._render
        return self.home.read_memory_config().render

    @property
    def secret_scanner(self) -> Redactor | None:
        """What refuses secrets in writes (None when ``memory.allow_secrets: true``)."""
        home = self.home
        if home.read_memory_config().allow_secrets:
            return None
        try:
            settings = home.redaction_settings()
        except ConfigError:
            settings = RedactionSettings()
        return Redactor(b"scan", RedactionSettings(patterns=settings.patterns, allow=settings.allow))

    @property
    def provenance(self) -> Provenance | None:
        """The provenance log (None when disabled)."""
        if not self._provenance_enabled:
            return None
        home = self.home
        if self._provenance is None or self._provenance.home.root != home.root:
            if self._provenance is not None:
                self._provenance.close()
            self._provenance = Provenance(home)
        return self._provenance

    def path_for(self, target: str) -> Path:
        """The file of ``target`` (``user`` -> USER.md, anything else -> MEMORY.md)."""
        return self.home.memories_dir / spec(target).file

    def limit_for(self, target: str) -> int:
        """The char limit of ``target``."""
        return int(getattr(self, spec(target).limit_attr))

    def entries_for(self, target: str) -> list[str]:
        """The live entry list of ``target`` (as of the last load or write)."""
        return getattr(self, spec(target).entries_attr)

    def _set_live(self, target: str, entries: list[str]) -> None:
        setattr(self, spec(target).entries_attr, list(entries))

    # -- loading and the frozen snapshot -------------------------------------

    def load_from_disk(self) -> None:
        """Read both files into live state and freeze the system-prompt snapshot. A read-only
        home (``mcp --read-only``) is only read: no folder made, no temp file or hand edit
        cleaned up or recorded."""
        writable = not self.home.read_only
        if self.home.root.exists() and not self.home.root.is_dir():
            raise ConfigError(f"{self.home.root}: the Hermes home is not a directory")
        # no folder is made by a load: a read (``memory show`` of a mistyped --home) left an
        # empty <home>/memories/ behind; the first write makes it (fileio's locked / atomic write)
        if writable and self.home.memories_dir.is_dir():
            remove_stale_temps(self.home.memories_dir)
        style = self.render_style
        for target in TARGETS:
            path = self.path_for(target)
            raw, ok = read_raw_checked(path)
            if not ok:
                logger.warning("%s could not be read (%s); it is treated as empty until readable", path,
                               read_problem(path))
            entries = parse_entries(raw) if ok else []
            limit = self.limit_for(target)
            used = char_count(entries)
            if used > limit:
                logger.warning(msg.over_limit_on_load(), path.name, used, limit)
            self._set_live(target, entries)
            sanitized = sanitize_entries(entries, path.name)
            self._system_prompt_snapshot[target] = render_block(target, sanitized, limit, style)
            if ok and writable:
                self._sync_provenance(target)

    def _sync_provenance(self, target: str) -> None:
        """Record hand edits made since the last write (under the file lock, best effort)."""
        prov = self.provenance
        if prov is None or not prov.store_ready():  # no store yet: the first write records the file
            return
        path = self.path_for(target)
        try:
            with locked(path):
                raw, ok = read_raw_checked(path)
                if ok:
                    prov.sync(target, parse_entries(raw))
        except OSError as exc:
            logger.warning("provenance sync of %s skipped: %s", path, exc)

    def format_for_system_prompt(self, target: str) -> str | None:
        """The frozen block for ``target`` rendered at load time, or None when empty."""
        block = self._system_prompt_snapshot.get(spec(target).name, "")
        return block or None

    def system_prompt(self, *, memory_enabled: bool = True, user_profile_enabled: bool = True) -> str:
        """The blocks a session's system prompt gets (MEMORY then USER), joined by a blank line."""
        parts = []
        if memory_enabled:
            parts.append(self.format_for_system_prompt("memory"))
        if user_profile_enabled:
            parts.append(self.format_for_system_prompt("user"))
        return "\n\n".join(p for p in parts if p)

    def reset_consolidation_failures(self) -> None:
        """Start a new turn: the consolidation-failure budget re-arms."""
        self._consolidation_failures = 0

    # -- views of the live state ---------------------------------------------

    def fresh_entries(self, target: str) -> list[str]:
        """Entries currently on disk (falls back to the live list when the file is unreadable)."""
        raw, ok = read_raw_checked(self.path_for(target))
        return parse_entries(raw) if ok else list(self.entries_for(target))

    def current_entries(self, target: str) -> list[str]:
        """On-disk entries as echoed to a model: poisoned ones replaced by ``[BLOCKED: …]``."""
        return sanitize_entries(self.fresh_entries(target), spec(target).file)

    def usage(self, target: str, entries: list[str] | None = None) -> str:
        """``"C/L"`` usage of ``target`` (on-disk entries unless given)."""
        entries = self.fresh_entries(target) if entries is None else entries
        return usage_short(char_count(entries), self.limit_for(target))

    def describe(self, target: str) -> list[dict[str, Any]]:
        """Live entries with index, chars and provenance (created/updated time and writer)."""
        prov = self.provenance
        entries = self.entries_for(target)
        info = prov.entry_info_for(target, entries) if prov is not None else {}
        rows = []
        for index, entry in enumerate(entries, start=1):
            meta = info.get(entry, {})
            rows.append({
                "index": index,
                "text": entry,
                "chars": len(entry),
                "created_at": meta.get("created_at"),
                "updated_at": meta.get("updated_at"),
                "created_origin": meta.get("created_origin"),
                "created_session": meta.get("created_session"),
                "updated_origin": meta.get("updated_origin"),
                "updated_session": meta.get("updated_session"),
                "blocked": scan_findings(entry) if len(entry) <= MAX_SCAN_CHARS else ["too_large"],
            })
        return rows

    def round_trips(self, target: str) -> bool | None:
        """True when the file on disk is exactly what the tool would write (no drift);
        None when it cannot be read. False means replace/remove are refused until cleaned up."""
        raw, ok = read_raw_checked(self.path_for(target))
        if not ok:
            return None
        return round_trips(raw, parse_entries(raw), self.limit_for(target))

    def read_problem(self, target: str) -> str | None:
        """Why ``target``'s file cannot be read (the OS error, or the line and column of its
        first byte that is not UTF-8); None when it reads."""
        return read_problem(self.path_for(target))

    def drifted(self, target: str) -> bool | None:
        """True when the file holds an entry longer than the store's limit (Hermes' drift rule):
        replace/remove/batch are refused until it is cleaned up; None when it cannot be read."""
        raw, ok = read_raw_checked(self.path_for(target))
        if not ok:
            return None
        return drifted(raw, self.limit_for(target))

    def cost(self, target: str) -> dict[str, Any]:
        """Bytes/chars/tokens of the block a new session would get for ``target``."""
        entries = sanitize_entries(self.entries_for(target), spec(target).file)
        return block_cost(target, entries, self.limit_for(target), self.render_style)

    def history(self, target: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Recorded add/replace/remove events, newest first."""
        prov = self.provenance
        return prov.history(target, limit) if prov is not None else []

    # -- responses ------------------------------------------------------------

    def _success(self, target: str, entries: list[str], message: str,
                 extras: dict[str, Any] | None = None) -> dict[str, Any]:
        self._consolidation_failures = 0
        result: dict[str, Any] = {
            "success": True,
            "done": True,
            "target": target,
            "usage": usage_long(char_count(entries), self.limit_for(target)),
            "entry_count": len(entries),
            "message": message,
        }
        result.update(extras or {})
        result["note"] = msg.WRITE_NOTE
        return result

    @staticmethod
    def _error(error: str, **extra: Any) -> dict[str, Any]:
        return {"success": False, "error": error, **extra}

    def _consolidation_failure(self, error: str, **extra: Any) -> dict[str, Any]:
        self._consolidation_failures += 1
        if self._consolidation_failures > msg.MAX_CONSOLIDATION_FAILURES_PER_TURN:
            return {"success": False, "done": True,
                    "error": msg.terminal_failure(self._consolidation_failures)}
        return self._error(error, **extra)

    def _inventory(self, target: str, entries: list[str]) -> dict[str, Any]:
        """``current_entries`` (sanitised) and ``usage`` for recoverable errors."""
        return {
            "current_entries": sanitize_entries(entries, spec(target).file),
            "usage": usage_short(char_count(entries), self.limit_for(target)),
        }

    # -- the locked read-modify-write -----------------------------------------

    def _mutate(self, target: str, operation: Callable[[list[str]], Outcome | dict[str, Any]], *,
                check_drift: bool, origin: str | None, session_id: str | None,
                restored_from: int | None = None) -> dict[str, Any]:
        target = spec(target).name
        path = self.path_for(target)
        name = path.name
        origin = self.origin if origin is None else origin
        session_id = self.session_id if session_id is None else session_id
        with self._lock:
            try:
                with locked(path):
                    raw, ok = read_raw_checked(path)
                    if not ok:
                        return self._error(msg.unreadable(name, read_problem(path)))
                    entries = parse_entries(raw)
                    if check_drift:
                        refusal = self._drift_refusal(target, path, raw, entries)
                        if refusal is not None:
                            return refusal
                    self._set_live(target, entries)
                    outcome = operation(entries)
                    if isinstance(outcome, dict):
                        return outcome
                    if outcome.entries != entries or raw != join_entries(entries):
                        atomic_write_text(path, join_entries(outcome.entries))
                    self._set_live(target, outcome.entries)
                    prov = self.provenance
                    if prov is not None and outcome.changes:
                        prov.record(target, entries, outcome.entries,
                                    [event for event, _ in outcome.changes], origin=origin,
                                    session_id=session_id, restored_from=restored_from)
            except RuntimeError as exc:
                return self._error(str(exc))
            except OSError as exc:
                return self._error(msg.lock_failed(name, str(lock_path_for(path)), str(exc)))
        self._notify(target, outcome.changes, origin, session_id)
        return self._success(target, outcome.entries, outcome.message, outcome.extras)

    def _drift_refusal(self, target: str, path: Path, raw: str,
                       entries: list[str]) -> dict[str, Any] | None:
        if not drifted(raw, self.limit_for(target)):
            return None
        backup = self._write_backup(path, raw)
        return self._error(msg.drift(path.name, backup), drift_backup=backup,
                           remediation=msg.DRIFT_REMEDIATION)

    @staticmethod
    def _write_backup(path: Path, raw: str) -> str:
        data = raw.encode("utf-8")
        stamp = int(time.time())
        try:
            while True:
                backup = path.with_name(f"{path.name}.bak.{stamp}")
                if not backup.exists():
                    atomic_write_bytes(backup, data)
                    return str(backup)
                if backup.read_bytes() == data:
                    return str(backup)
                stamp += 1
        except OSError:
            return f"{path} (BACKUP FAILED — file unchanged on disk)"

    def _notify(self, target: str, changes: list[tuple[Event, dict[str, Any]]], origin: str,
                session_id: str) -> None:
        if self.on_write is None:
            return
        for event, extra in changes:
            metadata = {"write_origin": origin, "session_id": session_id, **extra}
            if event.old_text is not None:
                metadata["previous_content"] = event.old_text
            try:
                self.on_write(event.action, target, event.new_text or "", metadata)
            except Exception:  # a mirror must never undo or hide a committed write
                logger.warning("memory on_write callback failed for %s", event.action, exc_info=True)

    # -- single operations ------------------------------------------------------

    def add(self, target: str, content: str, *, origin: str | None = None,
            session_id: str | None = None) -> dict[str, Any]:
        """Append an entry (exact duplicates are a successful no-op)."""
        return self._add(target, content, origin=origin, session_id=session_id)

    def _add(self, target: str, content: Any, *, origin: str | None, session_id: str | None,
             restored_from: int | None = None) -> dict[str, Any]:
        content = as_text(content).strip()
        if not content:
            return self._error(msg.EMPTY_CONTENT)
        refusal = check_content(content, self.secret_scanner)
        if refusal:
            return self._error(refusal)
        limit = self.limit_for(target)

        def operation(entries: list[str]) -> Outcome | dict[str, Any]:
            if content in entries:
                return self._success(target, entries, msg.ENTRY_EXISTS)
            new_entries = entries + [content]
            if char_count(new_entries) > limit:
                return self._consolidation_failure(
                    msg.add_over_limit(char_count(entries), limit, len(content), char_count(new_entries)),
                    **self._inventory(target, entries))
            return Outcome(new_entries, [(Event("add", None, content), {})], msg.ENTRY_ADDED)

        return self._mutate(target, operation, check_drift=False, origin=origin,
                            session_id=session_id, restored_from=restored_from)

    def replace(self, target: str, old_text: str, new_content: str, *,
                matched_entry: str | None = None, origin: str | None = None,
                session_id: str | None = None) -> dict[str, Any]:
        """Overwrite the whole entry that ``old_text`` identifies with ``new_content``."""
        return self._replace(target, old_text, new_content, matched_entry=matched_entry,
                             origin=origin, session_id=session_id)

    def _replace(self, target: str, old_text: Any, new_content: Any, *,
                 matched_entry: str | None = None, origin: str | None, session_id: str | None,
                 restored_from: int | None = None) -> dict[str, Any]:
        old = as_text(old_text).strip()
        new = as_text(new_content).strip()
        if not old:
            return self._error(msg.EMPTY_OLD_TEXT)
        if not new:
            return self._error(msg.EMPTY_NEW_CONTENT)
        refusal = check_content(new, self.secret_scanner)
        if refusal:
            return self._error(refusal)
        limit = self.limit_for(target)

        def operation(entries: list[str]) -> Outcome | dict[str, Any]:
            located = self._locate(target, entries, old, "replace", matched_entry)
            if isinstance(located, dict):
                return located
            previous = entries[located]
            new_entries = edited(entries, located, new)
            total = char_count(new_entries)
            if total > limit:
                return self._consolidation_failure(msg.replace_over_limit(total, limit),
                                                   **self._inventory(target, entries))
            return Outcome(new_entries, [(Event("replace", previous, new), {"old_text": old})],
                            msg.ENTRY_REPLACED, {"replaced_entry": previous, "new_entry": new})

        return self._mutate(target, operation, check_drift=True, origin=origin,
                            session_id=session_id, restored_from=restored_from)

    def remove(self, target: str, old_text: str, *, matched_entry: str | None = None,
               origin: str | None = None, session_id: str | None = None) -> dict[str, Any]:
        """Delete the entry ``old_text`` identifies (removing the last entry is allowed)."""
        return self._remove(target, old_text, matched_entry=matched_entry, origin=origin,
                            session_id=session_id)

    def _remove(self, target: str, old_text: Any, *, matched_entry: str | None = None,
                origin: str | None, session_id: str | None,
                restored_from: int | None = None) -> dict[str, Any]:
        old = as_text(old_text).strip()
        if not old:
            return self._error(msg.EMPTY_OLD_TEXT)

        def operation(entries: list[str]) -> Outcome | dict[str, Any]:
            located = self._locate(target, entries, old, "remove", matched_entry)
            if isinstance(located, dict):
                return located
            previous = entries[located]
            new_entries = edited(entries, located, None)
            return Outcome(new_entries, [(Event("remove", previous, None), {"old_text": old})],
                            msg.ENTRY_REMOVED, {"removed_entry": previous})

        return self._mutate(target, operation, check_drift=True, origin=origin,
                            session_id=session_id, restored_from=restored_from)

    def resolve_entry(self, target: str, old_text: str, verb: str) -> dict[str, Any]:
        """``{"success": True, "matched_entry": <full entry>}`` for the entry ``old_text`` selects
        now (read under the lock, nothing written), or the error the direct edit would return."""
        old = as_text(old_text).strip()

        def operation(entries: list[str]) -> dict[str, Any]:
            found = self._locate(target, entries, old, verb, None)
            return found if isinstance(found, dict) else {"success": True, "matched_entry": entries[found]}

        return self._mutate(target, operation, check_drift=False, origin=None, session_id=None)

    def _locate(self, target: str, entries: list[str], old: str, verb: str,
                matched_entry: str | None) -> int | dict[str, Any]:
        """Index of the entry to change, or the single-op error response."""
        found = locate(entries, old, matched_entry)
        if isinstance(found, int):
            return found
        if found.kind == "stale":
            return self._error(msg.stale_pin(matched_entry or ""))
        if found.kind == "ambiguous":
            return self._error(msg.ambiguous(old), matches=found.previews)
        # Hermes' no-match error: closest_entries (when any) and current_entries, no ``usage`` key.
        miss = no_match_failure(entries, old, verb)
        name = spec(target).file
        extra = {"closest_entries": sanitize_entries(miss.closest, name)} if miss.closest else {}
        return self._consolidation_failure(miss.error, **extra,
                                           current_entries=sanitize_entries(entries, name))

    # -- batch ---------------------------------------------------------------------

    def apply_batch(self, target: str, operations: list[dict[str, Any]], *, origin: str | None = None,
                    session_id: str | None = None, preserve_existing: bool = False) -> dict[str, Any]:
        """Apply add/replace/remove operations all-or-nothing; the budget applies to the final state.

        An op may carry ``matched_entry`` (a staged, pinned op): only that exact entry
        qualifies. With ``preserve_existing`` (unattended review) the batch is refused
        with ``requires_approval`` unless every existing entry survives verbatim or as
        the start of a longer entry.
        """
        return self._batch(target, operations, commit=True, preserve_existing=preserve_existing,
                           origin=origin, session_id=session_id)

    def resolve_batch_entries(self, target: str, operations: list[dict[str, Any]]) -> dict[str, Any]:
        """Dry run of :meth:`apply_batch` under the lock: it fails exactly where the batch would;
        on success ``{"success": True, "matched_entries": [...]}`` (per op, the full entry its
        replace/remove selects now; None for an add). Nothing is written."""
        return self._batch(target, operations, commit=False)

    def add_independent_entries(self, target: str, contents: list[str], *, origin: str | None = None,
                                session_id: str | None = None) -> dict[str, Any]:
        """Add each content that is new and still fits, in order, under one lock (no
        consolidation failures): the additions of a staged batch saved ahead of its approval."""
        cleaned = [c for c in (as_text(content).strip() for content in contents if isinstance(content, str)) if c]
        if not cleaned:
            return {"success": True, "additions_saved": 0}
        for content in cleaned:
            refusal = check_content(content, self.secret_scanner)
            if refusal:
                return self._error(refusal)
        limit = self.limit_for(target)

        def operation(entries: list[str]) -> Outcome | dict[str, Any]:
            working = list(entries)
            changes: list[tuple[Event, dict[str, Any]]] = []
            for content in cleaned:
                if content not in working and char_count(working + [content]) <= limit:
                    working.append(content)
                    changes.append((Event("add", None, content), {}))
            if not changes:
                return {"success": True, "additions_saved": 0}
            return Outcome(working, changes, msg.INDEPENDENT_ADDITIONS, {"additions_saved": len(changes)})

        return self._mutate(target, operation, check_drift=False, origin=origin, session_id=session_id)

    def _batch(self, target: str, operations: Any, *, commit: bool, preserve_existing: bool = False,
               origin: str | None = None, session_id: str | None = None) -> dict[str, Any]:
        if not isinstance(operations, list):
            return self._error(msg.BATCH_NOT_LIST)
        if not operations:
            return self._error(msg.BATCH_EMPTY)
        if len(operations) > msg.MAX_BATCH_OPERATIONS:  # bounded before any scan or lock
            return self._error(msg.BATCH_TOO_LARGE.format(count=len(operations)))
        ops = [op if isinstance(op, dict) else {} for op in operations]
        for index, op in enumerate(ops, start=1):  # one poisoned op rejects the batch, before any I/O
            if op.get("action") in ("add", "replace"):
                content = op_text(op, "content")
                refusal = check_content(content, self.secret_scanner) if content else None
                if refusal:
                    return self._error(f"Operation {index}: {refusal}")
        limit = self.limit_for(target)

        def abort(error: str, entries: list[str], closest: list[str] | None = None) -> dict[str, Any]:
            # No current_entries (upstream #97316); a no-match op names its closest entries only.
            extra = {"closest_entries": sanitize_entries(closest, spec(target).file)} if closest else {}
            return self._consolidation_failure(error + msg.ALL_OR_NOTHING,
                                               usage=usage_short(char_count(entries), limit), **extra)

        def operation(entries: list[str]) -> Outcome | dict[str, Any]:
            working = list(entries)
            changes: list[tuple[Event, dict[str, Any]]] = []
            matched: list[str | None] = []
            for index, op in enumerate(ops, start=1):
                step = batch_step(working, index, op)
                if isinstance(step, StepFailure):
                    return abort(step.error, entries, step.closest)
                working, change = step
                matched.append(change[0].old_text if change is not None else None)
                if change is not None:
                    changes.append(change)
            if preserve_existing and not preserves(entries, working):
                return self._error(msg.REVIEW_NOT_LITERAL, requires_approval=True)
            if entries and not working:
                return abort(msg.batch_empties_store(spec(target).file), entries)
            total = char_count(working)
            if total > limit:
                return abort(msg.batch_over_limit(len(ops), total, limit), entries)
            if not commit:
                return {"success": True, "matched_entries": matched}
            return Outcome(working, changes, f"Applied {len(ops)} operation(s).", batch_extras(ops, matched))

        return self._mutate(target, operation, check_drift=commit, origin=origin, session_id=session_id)

    # -- undo -------------------------------------------------------------------------

    def restore(self, event_id: int, *, origin: str = "restore",
                session_id: str | None = None) -> dict[str, Any]:
        """Undo history event ``event_id``: re-add what it removed, put back what it replaced,
        or remove what it added. The undo is itself recorded (``restored_from``)."""
        prov = self.provenance
        event = prov.event(event_id) if prov is not None else None
        if event is None:
            reason = f" ({prov.last_error})" if prov is not None and prov.last_error else ""
            return self._error(f"No history event {event_id}{reason}.")
        target, action = event["target"], event["action"]
        old, new = event["old_text"], event["new_text"]
        kwargs = {"origin": origin, "session_id": session_id, "restored_from": int(event["id"])}
        if action == "add":
            if new not in self.fresh_entries(target):
                return self._error(f"Nothing to restore for event {event_id}: the entry it added is no "
                                   f"longer in {spec(target).file}.")
            result = self._remove(target, new, matched_entry=new, **kwargs)
        elif action == "remove" or new not in self.fresh_entries(target):
            result = self._add(target, old, **kwargs)
        else:
            result = self._replace(target, new, old, matched_entry=new, **kwargs)
        if result.get("success"):
            result["restored_event"] = int(event["id"])
        return result

    def close(self) -> None:
        """Release the provenance database connection."""
        if self._provenance is not None:
            self._provenance.close()
