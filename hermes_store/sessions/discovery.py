"""Where agents keep their transcripts on this machine, and how much of it is indexed.

Every importer declares ``default_locations`` (globs per platform; ``~`` is
``$HOME``, ``{hermes_home}`` the Hermes home). :func:`find_sources` expands
them (bounded: at most :data:`MAX_FILES` files and :data:`MAX_DIRS` directories
per location, each directory visited once, so symlink loops cannot hang it;
only regular files are listed, anything else matching is a problem, never
opened) and compares each file with what the index remembers about it
(``sources`` rows).

Default locations name only where an agent itself writes, never a wildcard
over every folder under ``$HOME``: a repository cloned into the home folder
must not become the user's past through ``--discover``. Agents that keep
their transcripts inside each project (Aider's ``.aider.chat.history.md``,
Crush's ``.crush/crush.db``) are indexed only when the user names the path.
"""

from __future__ import annotations

import fnmatch
import json
import os
import stat
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers import IMPORTERS
from hermes_store.sessions.storage import SessionStorage

#: What to do about a store with no session in it, as every front end says it (the CLI's note,
#: the TUI's status line): ``sessions index`` alone is a usage error, so the advice names a PATH
#: or ``--discover`` (the TUI's "Run `hermes-store sessions index`" sent users to that error)
HOW_TO_INDEX = ("import transcripts with `hermes-store sessions index PATH`, or `hermes-store sessions index "
                "--discover` for every agent's on this machine (`hermes-store sessions sources` lists them)")

MAX_FILES = 100_000  # files listed per location (the rest are counted as truncated)
MAX_DIRS = 200_000  # directories visited per location (a larger tree is counted as truncated)
MAX_PROBLEMS = 50  # problems listed per location
MAX_DEPTH = 64  # directory levels a ``**`` descends
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
    problems: list[str] = field(default_factory=list)  # e.g. a FIFO named like a transcript
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


class _Walk:
    """One bounded expansion of a glob: each directory once (by device and inode)."""

    def __init__(self, location: Location) -> None:
        self.location = location
        self.seen: set[tuple[int, int]] = set()
        self.dirs = 0
        self.matches: list[str] = []

    def full(self) -> bool:
        return self.location.truncated

    def visit(self, directory: str) -> bool:
        """True the first time ``directory`` (resolved by inode) is entered within the bounds."""
        try:
            info = os.stat(directory)
        except OSError:
            return False
        key = (info.st_dev, info.st_ino)
        if key in self.seen or not stat.S_ISDIR(info.st_mode):
            return False
        if self.dirs >= MAX_DIRS:
            self.location.truncated = True
            return False
        self.seen.add(key)
        self.dirs += 1
        return True

    def file(self, path: str) -> None:
        """Record ``path`` if it is a regular file; anything else matching is a problem."""
        try:
            info = os.stat(path)
        except OSError:
            return
        if stat.S_ISDIR(info.st_mode):
            return
        if not stat.S_ISREG(info.st_mode):
            if len(self.location.problems) < MAX_PROBLEMS:
                self.location.problems.append(f"{path}: not a regular file (skipped, not opened)")
            return
        self.matches.append(path)
        if len(self.matches) >= MAX_FILES:
            self.location.truncated = True

    def walk(self, base: str, parts: list[str], depth: int = 0) -> None:
        """Match ``parts`` (glob components, ``**`` for any depth) below ``base``."""
        if self.full():
            return
        if not parts:
            self.file(base)
            return
        part, rest = parts[0], parts[1:]
        if part == "**":
            self.walk(base, rest, depth)
            if depth >= MAX_DEPTH:
                return
            for name in self._entries(base, dirs_only=True):
                if self.full():
                    return
                child = os.path.join(base, name)
                if self.visit(child):
                    self.walk(child, parts, depth + 1)
            return
        if not _WILDCARDS & set(part):
            self._step(os.path.join(base, part), rest, depth)
            return
        for name in self._entries(base, dirs_only=False):
            if self.full():
                return
            if fnmatch.fnmatchcase(name, part) and (part.startswith(".") or not name.startswith(".")):
                self._step(os.path.join(base, name), rest, depth)

    def _step(self, child: str, rest: list[str], depth: int) -> None:
        if not rest:
            self.file(child)
        elif self.visit(child):
            self.walk(child, rest, depth)

    @staticmethod
    def _entries(directory: str, dirs_only: bool) -> list[str]:
        try:
            with os.scandir(directory) as entries:
                names = []
                for entry in entries:
                    if dirs_only:
                        try:
                            if not entry.is_dir() or entry.name.startswith("."):
                                continue
                        except OSError:
                            continue
                    names.append(entry.name)
                return sorted(names)
        except OSError:
            return []


def _files(pattern: str, location: Location) -> list[str]:
    """The regular files matching ``pattern`` (bounded; see :class:`_Walk`)."""
    walk = _Walk(location)
    parts = list(Path(pattern).parts)
    fixed: list[str] = []
    while parts and not _WILDCARDS & set(parts[0]) and parts[0] != "**":
        fixed.append(parts.pop(0))
    base = str(Path(*fixed)) if fixed else os.sep
    if not parts:
        walk.file(base)
    elif walk.visit(base):
        walk.walk(base, parts)
    return sorted(set(walk.matches))


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


def project_formats() -> list[tuple[str, tuple[str, ...]]]:
    """``(agent, files)`` of every format written inside each project (indexed only when named)."""
    return [(cls.agent or name, cls.project_files) for name, cls in IMPORTERS.items() if cls.project_files]


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
