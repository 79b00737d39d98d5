"""The pure operations of the built-in store: which entry an edit selects, what an edit or a
batch step produces, the drift rule and the content check. No I/O: :mod:`store` runs these
under the file lock and writes the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes_store.builtin import messages as msg
from hermes_store.builtin.entries import (
    AMBIGUOUS,
    ENTRY_DELIMITER,
    closest_entries,
    dedupe,
    file_name,
    find_unique_match,
    join_entries,
    normalize_newlines,
    splits_on_reload,
)
from hermes_store.builtin.provenance import Event
from hermes_store.builtin.threats import scan_content
from hermes_store.redaction import Redactor


@dataclass
class Outcome:
    """A successful operation before it is written: the new entries and what changed."""

    entries: list[str]
    changes: list[tuple[Event, dict[str, Any]]] = field(default_factory=list)
    message: str = ""
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TargetSpec:
    """What differs between the two stores: the file, the limit and the live-list attributes."""

    name: str
    file: str
    limit_attr: str
    entries_attr: str


TARGET_SPECS: dict[str, TargetSpec] = {
    "memory": TargetSpec("memory", file_name("memory"), "memory_char_limit", "memory_entries"),
    "user": TargetSpec("user", file_name("user"), "user_char_limit", "user_entries"),
}


def spec(target: str) -> TargetSpec:
    """The table row of ``target`` (``user``, or anything else = ``memory``, as in Hermes)."""
    return TARGET_SPECS.get(target, TARGET_SPECS["memory"])


@dataclass(frozen=True)
class Miss:
    """Why ``old_text`` (or a pinned entry) selects no single entry."""

    kind: str  # "stale" (pinned entry gone), "none" or "ambiguous"
    previews: list[str] = field(default_factory=list)


def locate(entries: list[str], old: str, matched_entry: str | None = None) -> int | Miss:
    """Index of the entry a replace/remove changes, or why there is none.

    A pinned ``matched_entry`` (staged writes) selects exactly that entry;
    otherwise ``old`` selects by whole-entry match first, then substring.
    """
    if matched_entry is not None:
        return entries.index(matched_entry) if matched_entry in entries else Miss("stale")
    index, previews = find_unique_match(entries, old)
    if index is None:
        return Miss("none")
    if index == AMBIGUOUS:
        return Miss("ambiguous", previews)
    return index


def edited(entries: list[str], index: int, new: str | None) -> list[str]:
    """``entries`` with entry ``index`` replaced by ``new`` (removed when None), deduplicated."""
    return dedupe(entries[:index] + ([] if new is None else [new]) + entries[index + 1:])


def preserves(old_entries: list[str], new_entries: list[str]) -> bool:
    """Every old entry survives verbatim, or as the start of a longer new entry (Hermes' rule)."""
    return all(any(new == old or new.startswith((old + " ", old + "\n")) for new in new_entries)
               for old in old_entries)


def op_text(op: dict[str, Any], key: str) -> str:
    if key == "content":
        return as_text(op.get("content") or op.get("new_text")).strip()
    return as_text(op.get(key)).strip()


def as_text(value: Any) -> str:
    """An argument as text: None -> "", other non-strings stringified; newlines pinned to LF."""
    if value is None:
        return ""
    return normalize_newlines(value if isinstance(value, str) else str(value))


def round_trips(raw: str, entries: list[str], limit: int) -> bool:
    """The drift rule: the file is exactly the joined entries and no entry exceeds the limit.

    As in Hermes' ``_detect_external_drift``, the file is compared with its entries as split,
    *before* repeated entries are dropped: a file holding the same entry twice (Hermes writes one
    when a replace produces an existing entry) round-trips, and the next write drops the repeat.
    """
    parts = [part for part in (x.strip() for x in raw.split(ENTRY_DELIMITER)) if part] if raw.strip() else []
    return raw.strip() == join_entries(parts) and all(len(e) <= limit for e in parts)


def drifted(raw: str, limit: int) -> bool:
    """Hermes' current drift rule (#107270): some entry is longer than the whole store's limit.

    No tool-written entry can be, so such an entry is free-form text added without delimiters and
    rewriting the file would lose it. A file that merely does not round-trip (blank lines around
    ``§``, empty entries, padding) is not drift: the next replace/remove rewrites it as the clean
    joined entries, losing only whitespace.
    """
    return any(len(part) > limit for part in (x.strip() for x in raw.split(ENTRY_DELIMITER)))


def check_content(content: str, secrets: Redactor | None = None) -> str | None:
    """Why ``content`` may not be stored (threat, delimiter, or -- with ``secrets``, the
    scanner of a home that does not allow them -- a secret), or None when it may."""
    blocked = scan_content(content)
    if blocked:
        return blocked
    if splits_on_reload(content):
        return msg.DELIMITER_IN_CONTENT
    kinds = secrets.contains_secret(content) if secrets is not None else []
    return msg.secret_refused(kinds) if kinds else None


def batch_extras(ops: list[dict[str, Any]], matched: list[str | None]) -> dict[str, Any]:
    """``replaced_entries`` / ``removed_entries``: 1-based op number -> the full entry it overwrote."""
    replaced: dict[int, str] = {}
    removed: dict[int, str] = {}
    for index, (op, previous) in enumerate(zip(ops, matched, strict=True), start=1):
        if previous is not None:
            (replaced if op.get("action") == "replace" else removed)[index] = previous
    extras: dict[str, Any] = {}
    if replaced:
        extras["replaced_entries"] = replaced
    if removed:
        extras["removed_entries"] = removed
    return extras


@dataclass(frozen=True)
class StepFailure:
    """Why a batch op failed: the error text and, for a no-match, the entries closest to its old_text."""

    error: str
    closest: list[str] = field(default_factory=list)


def no_match_failure(entries: list[str], old: str, verb: str) -> StepFailure:
    """The no-match error for ``old`` and the (raw) entries sharing the most words with it."""
    closest = [entries[i] for i in closest_entries(entries, old)]
    return StepFailure(msg.no_match(old, verb, bool(closest)), closest)


def batch_step(working: list[str], index: int, op: dict[str, Any]
               ) -> StepFailure | tuple[list[str], tuple[Event, dict[str, Any]] | None]:
    """One batch op against ``working``: the new list and its change, or why it failed."""
    action = op.get("action")
    pos = msg.batch_pos(index, action)
    content, old = op_text(op, "content"), op_text(op, "old_text")
    if action == "add":
        if not content:
            return StepFailure(f"{pos}: content is required.")
        if content in working:  # idempotent: a duplicate add is skipped, not a failure
            return working, None
        return working + [content], (Event("add", None, content), {"operation_index": index})
    if action not in ("replace", "remove"):
        return StepFailure(f"{pos}: unknown action. Use add, replace, or remove.")
    if not old:
        return StepFailure(f"{pos}: old_text is required.")
    if action == "replace" and not content:
        return StepFailure(f"{pos}: {msg.BATCH_REPLACE_NEEDS_CONTENT}")
    pin = op.get("matched_entry")
    found = locate(working, old, pin if isinstance(pin, str) else None)
    if isinstance(found, Miss):
        if found.kind == "stale":
            return StepFailure(f"{pos}: {msg.stale_pin(str(pin))}")
        if found.kind == "ambiguous":
            return StepFailure(f"{pos}: '{old}' matched multiple distinct entries -- be more specific.")
        miss = no_match_failure(working, old, str(action))
        return StepFailure(f"{pos}: {miss.error}", miss.closest)
    previous = working[found]
    extra = {"operation_index": index, "old_text": old}
    if action == "replace":
        return edited(working, found, content), (Event("replace", previous, content), extra)
    return edited(working, found, None), (Event("remove", previous, None), extra)
