"""MEMORY.md / USER.md file format: parsing, joining, char counting, checked reads.

A store file holds entries joined by ``ENTRY_DELIMITER`` (newline, ``§``,
newline) with no trailing newline; an empty store is an empty file. Files are
read as UTF-8 with an optional BOM, strictly (invalid UTF-8 makes a file
*unreadable*, never lossily decoded), and CRLF / lone CR become LF the way
Python's universal-newline reading does.
"""

from __future__ import annotations

import re
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


def read_problem(path: Path) -> str | None:
    """Why :func:`read_raw_checked` finds ``path`` unreadable, naming the place: the OS error, or
    the line and column of the first byte that is not UTF-8 (``line 3, column 5: byte 0xff is
    not valid UTF-8``). None when the file reads (or is absent)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    data = data.removeprefix(b"\xef\xbb\xbf")  # the BOM read_raw_checked strips
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return f"line {line}, column {column}: byte 0x{data[exc.start]:02x} is not valid UTF-8"
    return None


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


# Typography a model re-types differently from the stored entry (as upstream's tolerant match):
# every quote or backtick folds to "'", every dash or minus to "-".
_MATCH_FOLD = str.maketrans({
    **dict.fromkeys("\"`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f", "'"),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
})
_WORD = re.compile(r"\w+")
CLOSEST_MAX = 3
CLOSEST_MIN_SHARE = 0.3


def fold_for_match(text: str) -> str:
    """``text`` with quotes, dashes and whitespace folded for tolerant ``old_text`` matching.

    A literal backslash-n (an over-escaped newline) and every whitespace run become one
    space, curly and straight quotes and backticks become ``'``, every dash becomes ``-``.
    """
    return " ".join(text.replace("\\n", " ").translate(_MATCH_FOLD).split())


def substring_matches(entries: list[str], old_text: str) -> list[int]:
    """Indices of the entries containing ``old_text``: byte-exact first, else typography-folded.

    A folded needle without a letter or digit selects nothing (punctuation or spaces alone
    would select whole entries).
    """
    exact = [i for i, entry in enumerate(entries) if old_text in entry]
    if exact:
        return exact
    needle = fold_for_match(old_text)
    if not any(c.isalnum() for c in needle):
        return []
    return [i for i, entry in enumerate(entries) if needle in fold_for_match(entry)]


def find_unique_match(entries: list[str], old_text: str) -> tuple[int | None, list[str]]:
    """Locate the entry ``old_text`` identifies: ``(index, [])``, ``(None, [])`` or ``(AMBIGUOUS, previews)``.

    An entry equal to ``old_text`` wins over entries merely containing it
    (case-sensitive substring; when no entry holds it byte for byte, the
    typography-folded forms are compared). Several *identical* matches resolve
    to the first; several distinct ones are ambiguous.
    """
    exact = [i for i, entry in enumerate(entries) if entry == old_text]
    found = exact or substring_matches(entries, old_text)
    if not found:
        return None, []
    distinct = dedupe([entries[i] for i in found])
    if len(distinct) > 1:
        return AMBIGUOUS, [preview(entry) for entry in distinct]
    return found[0], []


def closest_entries(entries: list[str], old_text: str) -> list[int]:
    """Indices of up to three entries sharing the most words with ``old_text`` (at least 30 %).

    The share is the fraction of ``old_text``'s distinct lower-cased words found in the
    entry; ties keep file order. Used to name the likely target of an ``old_text`` that
    matched nothing.
    """
    words = set(_WORD.findall(old_text.lower()))
    if not words:
        return []
    scored = sorted(((len(words & set(_WORD.findall(entry.lower()))) / len(words), i)
                     for i, entry in enumerate(entries)), key=lambda pair: (-pair[0], pair[1]))
    return [i for share, i in scored[:CLOSEST_MAX] if share >= CLOSEST_MIN_SHARE]

