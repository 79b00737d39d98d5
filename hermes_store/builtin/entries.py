"""MEMORY.md / USER.md file format: parsing, joining, char counting, checked reads.

A store file holds entries joined by ``ENTRY_DELIMITER`` (newline, ``§``,
newline) with no trailing newline; an empty store is an empty file. Files are
read as UTF-8 with an optional BOM, strictly (invalid UTF-8 makes a file
*unreadable*, never lossily decoded), and CRLF / lone CR become LF the way
Python's universal-newline reading does.
"""

from __future__ import annotations

from pathlib import Path

ENTRY_DELIMITER = "\n§\n"
TARGETS: tuple[str, ...] = ("memory", "user")
TARGET_FILES: dict[str, str] = {"memory": "MEMORY.md", "user": "USER.md"}


def file_name(target: str) -> str:
    """The file a target lives in: ``user`` -> USER.md, anything else -> MEMORY.md."""
    return TARGET_FILES["user"] if target == "user" else TARGET_FILES["memory"]


def normalize_newlines(text: str) -> str:
    """Turn CRLF and lone CR into LF (what universal-newline reading does)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def dedupe(entries: list[str]) -> list[str]:
    """Drop repeated entries, keeping the first occurrence and the order."""
    return list(dict.fromkeys(entries))


def parse_entries(raw: str) -> list[str]:
    """Split file text into entries: split on the full delimiter, strip, drop empties, dedupe."""
    raw = normalize_newlines(raw)
    if not raw.strip():
        return []
    parts = (part.strip() for part in raw.split(ENTRY_DELIMITER))
    return dedupe([part for part in parts if part])


def join_entries(entries: list[str]) -> str:
    """The exact file content for ``entries`` (no trailing newline; ``""`` when empty)."""
    return ENTRY_DELIMITER.join(entries)


def char_count(entries: list[str]) -> int:
    """Characters the entries use: code points of the joined text (3 per delimiter)."""
    return len(join_entries(entries)) if entries else 0


def splits_on_reload(content: str) -> bool:
    """True when ``content`` would not come back as one entry after a write and reload.

    That is the case when it holds the delimiter itself, or starts/ends with a
    bare ``§`` line that would merge with a neighbouring delimiter.
    """
    text = normalize_newlines(content)
    return (
        ENTRY_DELIMITER in text
        or text == "§"
        or text.startswith("§\n")
        or text.endswith("\n§")
    )


def read_raw_checked(path: Path) -> tuple[str, bool]:
    """Read a store file: ``(text, True)``; absent ⇒ ``("", True)``; unreadable ⇒ ``("", False)``.

    Unreadable covers any OSError (permissions, a directory in the way, a
    transient lock) and invalid UTF-8. A BOM is stripped; newlines normalised.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return "", True
    except OSError:
        return "", False
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "", False
    return normalize_newlines(text), True


def usage_short(current: int, limit: int) -> str:
    """``"1,474/2,200"`` — the usage form error responses carry."""
    return f"{current:,}/{limit:,}"


def usage_percent(current: int, limit: int) -> int:
    """Floored percentage of ``limit`` used, capped at 100 (0 when the limit is not positive)."""
    if limit <= 0:
        return 0
    return min(100, int(current / limit * 100))


def usage_long(current: int, limit: int) -> str:
    """``"67% — 1,474/2,200 chars"`` — the usage form of success responses and prompt blocks."""
    return f"{usage_percent(current, limit)}% — {current:,}/{limit:,} chars"


AMBIGUOUS = -1


def preview(entry: str, width: int = 80) -> str:
    """First ``width`` chars of an entry, with ``...`` when it was longer."""
    return entry[:width] + "..." if len(entry) > width else entry


def find_unique_match(entries: list[str], old_text: str) -> tuple[int | None, list[str]]:
    """Locate the entry ``old_text`` identifies: ``(index, [])``, ``(None, [])`` or ``(AMBIGUOUS, previews)``.

    An entry equal to ``old_text`` wins over entries merely containing it
    (case-sensitive substring). Several *identical* matches resolve to the
    first; several distinct ones are ambiguous.
    """
    exact = [i for i, entry in enumerate(entries) if entry == old_text]
    found = exact or [i for i, entry in enumerate(entries) if old_text in entry]
    if not found:
        return None, []
    distinct = dedupe([entries[i] for i in found])
    if len(distinct) > 1:
        return AMBIGUOUS, [preview(entry) for entry in distinct]
    return found[0], []
