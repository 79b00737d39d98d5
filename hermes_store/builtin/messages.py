"""Response texts of the built-in store (Hermes-compatible wording where Hermes has one)."""

from __future__ import annotations

MAX_CONSOLIDATION_FAILURES_PER_TURN = 3
ALL_OR_NOTHING = " No operations were applied (batch is all-or-nothing)."
WRITE_NOTE = "Write saved. This update is complete — do not repeat it."

EMPTY_CONTENT = "Content cannot be empty."
EMPTY_OLD_TEXT = "old_text cannot be empty."
EMPTY_NEW_CONTENT = "new_content cannot be empty. Use 'remove' to delete entries."
ENTRY_ADDED = "Entry added."
ENTRY_EXISTS = "Entry already exists (no duplicate added)."
ENTRY_REPLACED = "Entry replaced."
ENTRY_REMOVED = "Entry removed."
BATCH_NOT_LIST = "operations must be a list of {action, content?, old_text?} objects."
BATCH_EMPTY = "operations list is empty."
MAX_BATCH_OPERATIONS = 100  # operations in one memory batch (a larger one is refused before any scan)
BATCH_TOO_LARGE = (f"operations list is too long: {{count:,}} operations (at most {MAX_BATCH_OPERATIONS} "
                   "in one batch); nothing was changed.")
INDEPENDENT_ADDITIONS = "Independent additions saved."
REVIEW_NOT_LITERAL = ("Background review cannot verify that every existing entry remains verbatim; "
                      "stage this change for approval.")
DELIMITER_IN_CONTENT = (
    "Content contains the entry delimiter (a line holding only '§'), so it would split into "
    "separate entries when the file is read back. Remove that line, or save each part as its own entry."
)


def _free_at_least(new_total: int, limit: int) -> str:
    return f"would put memory at {new_total:,}/{limit:,} chars: free at least {new_total - limit:,} chars"


def add_over_limit(current: int, limit: int, added: int, new_total: int) -> str:
    """An add that would exceed the limit (consolidation failure; upstream's newest wording)."""
    over = new_total - limit
    return (
        f"Memory at {current:,}/{limit:,} chars; adding this entry ({added} chars) would exceed the limit "
        f"by {over:,} chars. Retry as ONE 'operations' batch that removes or shortens (replace) stale "
        f"entries from current_entries below to free at least {over:,} chars AND adds this entry — the "
        "limit is checked only on the batch result."
    )


def replace_over_limit(new_total: int, limit: int) -> str:
    """A replace that would exceed the limit (consolidation failure; upstream's newest wording)."""
    return (
        f"Replacement {_free_at_least(new_total, limit)}. Shorten the new content, or retry as ONE "
        "'operations' batch with this replace plus removes/shortenings of other stale entries (see "
        "current_entries below) — the limit is checked only on the batch result."
    )


def no_match(old_text: str, verb: str, has_closest: bool) -> str:
    """No entry holds ``old_text`` (upstream's newest wording; a consolidation failure).

    Points at ``closest_entries`` when there are some, and says that ``old_text`` must come
    from one entry when it holds the ``§`` that separates entries.
    """
    hint = " old_text must come from ONE entry ('§' separates entries); use one op per entry." if "§" in old_text else ""
    tail = " (closest_entries below)." if has_closest else "."
    return (f"No entry matched '{old_text}'.{hint} Retry the {verb} with old_text copied verbatim from the "
            f"intended entry{tail}")


def ambiguous(old_text: str) -> str:
    """``old_text`` matched several distinct entries."""
    return f"Multiple entries matched '{old_text}'. Be more specific."


def stale_pin(entry: str) -> str:
    """A pinned (staged) destructive write whose entry has changed."""
    return (
        f"Entry changed since it was staged, so this write was not applied: '{entry}' is no longer in "
        "memory as reviewed. Recreate the change against the current entry or reject it; the pending "
        "record has been preserved."
    )


def terminal_failure(count: int) -> str:
    """The terminal response after too many consolidation failures in one turn."""
    return (
        f"Memory consolidation failed {count} times this turn. Stop retrying memory calls — leave "
        "memory unchanged for now and continue with your reply to the user. The fact can be saved in "
        "a later turn."
    )


def unreadable(name: str, problem: str | None = None) -> str:
    """Refusal when the store file exists but cannot be read (Hermes' text), then what was found
    (``problem``: the OS error or where the text is not UTF-8)."""
    found = f" Found: {name}: {problem}." if problem else ""
    return (
        f"Refusing to write {name}: the file exists on disk but could not be read right now "
        "(temporarily locked by another program, a permission change, invalid/corrupt text encoding, "
        "or a filesystem error). Treating an unreadable file as empty and saving would wipe existing "
        f"memory, so the write is refused. Nothing was changed — retry in a moment.{found}"
    )


def drift(name: str, backup: str) -> str:
    """Refusal when the file holds an entry longer than the whole store's limit (Hermes' drift
    guard, issue #26045, narrowed upstream by #107270: layout differences are not drift)."""
    return (
        f"Refusing to write {name}: it holds an entry larger than the whole store's char limit, "
        "i.e. free-form text written without § delimiters (the patch tool, a shell append, a manual "
        f"edit). Rewriting it would lose that text. A snapshot was saved to {backup}. Resolve the "
        "drift first — either rewrite the file as a clean §-delimited list of entries, or move the "
        "extra content out — then retry. This guard exists to prevent silent data loss (issue #26045)."
    )


DRIFT_REMEDIATION = (
    "Open the .bak file, integrate the missing entries into the memory tool one at a time via "
    "memory(action=add, content=...), then remove or rewrite the original file to a clean state."
)


def lock_failed(name: str, lock: str, reason: str) -> str:
    """Refusal when the per-file lock cannot be taken (e.g. a symlinked lock)."""
    return f"Refusing to write {name}: cannot take the lock {lock} ({reason}). Nothing was changed."


def batch_pos(index: int, action: object) -> str:
    """``Operation {i} ({action})`` prefix of batch errors."""
    return f"Operation {index} ({action or 'unknown'})"


def batch_empties_store(name: str) -> str:
    """Refusal when a batch would empty a non-empty store."""
    return (
        f"Refusing to empty {name}: this batch would remove every entry from a previously non-empty "
        "store. Keep at least one entry — merge overlapping entries into a shorter one instead of "
        "removing the last one. To delete the final entry deliberately, use single remove() calls."
    )


def batch_over_limit(n: int, new_total: int, limit: int) -> str:
    """A batch whose final state exceeds the limit (upstream's newest wording)."""
    return (
        f"Applying all {n} operations {_free_at_least(new_total, limit)} more. Add removes or shorter "
        "replacements of other stale entries to the same batch, then retry."
    )


BATCH_REPLACE_NEEDS_CONTENT = ("content is required — set this operation object's own 'content' to the "
                               "COMPLETE new entry (or use action='remove' to delete).")


def over_limit_on_load() -> str:
    """Logging format for a file over its limit at load time (name, used, limit)."""
    return (
        "%s exceeds its char limit on load: %d/%d chars. Entries stay loaded; further additions are "
        "blocked until it is back under the limit."
    )


def secret_refused(kinds: list[str]) -> str:
    """The refusal of a memory write that holds a secret (a deliberate difference from Hermes)."""
    named = ", ".join(dict.fromkeys(kinds))
    return (f"Refused: the content holds what looks like a secret ({named}). Memory entries are put into "
            "every system prompt, so secrets are not saved there; keep it in an environment variable or "
            "a credential store and save only where it lives. (To allow it, set memory.allow_secrets: true "
            "in config.yaml.)")
