"""Where agents keep their transcripts on this machine, and how much of it is indexed.

Every importer declares ``default_locations`` (globs per platform; ``~`` is
``$HOME``, ``{hermes_home}`` the Hermes home). :func:`find_sources` expands
them (bounded: at most :data:`MAX_FILES` files per location) and compares each
file with what the index remembers about it (``sources`` rows).
"""

from __future__ import annotations

import glob
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers import IMPORTERS
from hermes_store.sessions.storage import SessionStorage

MAX_FILES = 100_000  # files listed per location (the rest are counted as truncated)
_WILDCARDS = set("*?[")


@dataclass
class Location:
    """One default location of one format, expanded on this machine."""

    format: str
    agent: str
    pattern: str  # as declared, e.g. "~/.claude/projects/*/*.jsonl"
    root: str  # the directory part before the first wildcard
    exists: bool = False
    files: int = 0
    indexed_files: int = 0  # files whose stored state matches their size and mtime
    sessions: int = 0  # sessions indexed from these files
    messages: int = 0  # messages indexed from these files
    truncated: bool = False
    paths: list[str] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The public form (without the file list)."""
        data = asdict(self)
        data.pop("paths")
        return data


def platform_key(platform: str | None = None) -> str:
    """``"darwin"`` on macOS, else ``"linux"`` (the keys of ``default_locations``)."""
    return "darwin" if (platform or sys.platform) == "darwin" else "linux"


def expand(pattern: str, home: Path, hermes_home: Path) -> str:
    """A declared glob with ``~`` and ``{hermes_home}`` replaced."""
    text = pattern.replace("{hermes_home}", str(hermes_home))
    if text == "~" or text.startswith("~/"):
        text = str(home) + text[1:]
    return text


def _root(pattern: str) -> str:
    parts = Path(pattern).parts
    fixed: list[str] = []
    for part in parts:
        if _WILDCARDS & set(part):
            break
        fixed.append(part)
    return str(Path(*fixed)) if fixed else "/"


def locations(home: Path, hermes_home: Path, platform: str | None = None) -> list[Location]:
    """Every registered format's default locations, expanded (no file system access)."""
    key = platform_key(platform)
    found: list[Location] = []
    for name, cls in IMPORTERS.items():
        patterns = cls.default_locations.get(key) or cls.default_locations.get("linux") or ()
        for pattern in patterns:
            expanded = expand(pattern, home, hermes_home)
            found.append(Location(format=name, agent=cls.agent or name, pattern=pattern,
                                  root=_root(expanded), paths=[expanded]))
    return found


def _files(pattern: str, location: Location) -> list[str]:
    matches: list[str] = []
    for path in glob.iglob(pattern, recursive=True):
        if os.path.isfile(path):
            matches.append(path)
            if len(matches) >= MAX_FILES:
                location.truncated = True
                break
    return sorted(matches)


def find_sources(storage: SessionStorage | None, home: Path, hermes_home: Path,
                 platform: str | None = None) -> list[Location]:
    """Expand every default location and count what is there and what is indexed."""
    result = locations(home, hermes_home, platform)
    for location in result:
        pattern = location.paths[0]
        location.exists = os.path.isdir(location.root) or os.path.isfile(location.root)
        location.paths = _files(pattern, location) if location.exists else []
        location.files = len(location.paths)
        if storage is not None and storage.ready() and location.paths:
            _count_indexed(storage, location)
    return result


def _count_indexed(storage: SessionStorage, location: Location) -> None:
    source_ids: list[int] = []
    for path in location.paths:
        try:
            key = str(Path(path).resolve())
            info = os.stat(path)
        except (OSError, RuntimeError):
            continue
        row = storage.source_state(key)
        if row is None:
            continue
        source_ids.append(int(row["id"]))
        meta = row.get("meta")
        messages = 0
        if isinstance(meta, str):
            try:
                messages = int(json.loads(meta or "{}").get("messages", 0))
            except (ValueError, TypeError, AttributeError):
                messages = 0
        location.messages += messages
        if row.get("size") == info.st_size and row.get("mtime") == info.st_mtime:
            location.indexed_files += 1
    location.sessions = sum(storage.session_counts(source_ids).values())


def discovered_paths(found: list[Location]) -> list[Path]:
    """Every existing file of every location, each once, in order."""
    seen: set[str] = set()
    paths: list[Path] = []
    for location in found:
        for path in location.paths:
            if path not in seen:
                seen.add(path)
                paths.append(Path(path))
    return paths
