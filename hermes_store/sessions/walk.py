"""Which files a directory given to ``sessions index`` (or ``sessions watch``) stands for.

A walk takes transcript-like files (:data:`WALK_SUFFIXES` and the names importers declare in
``walk_names``), databases first, and leaves out hidden folders (but those an agent keeps inside
its own data folder, :func:`agent_inner_folder_names`): a home directory's ``.cache``
or a project's ``.git`` hold no transcripts and can be huge. Agents keep their own data in
hidden folders too (``~/.claude``, ``~/.codex``, ``~/.local/share/...``): such a folder is not
walked either, but it is *reported* (:func:`agent_folder_names`, read from the importers'
``default_locations``), so ``sessions index ~`` says what it left out instead of finding
nothing in silence.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from hermes_store.sessions.importers import IMPORTERS

WALK_SUFFIXES = {".jsonl", ".json", ".db", ".sqlite", ".sqlite3"}
DB_SUFFIXES = {".db", ".sqlite", ".sqlite3"}
# indexes that live next to transcripts but hold none: Hermes' gateway routing mirror, Codex's prompt history
WALK_IGNORED = {"sessions.json", "history.jsonl"}


def walk_inputs(paths: Iterable[str | os.PathLike[str]],
                loops: list[tuple[Path, Path]] | None = None,
                unwalked: list[Path] | None = None) -> Iterator[tuple[Path, bool]]:
    """Yield ``(file, explicit)`` for every input; directories are walked recursively.

    Walked files are limited to transcript-like suffixes (.jsonl .json .db
    .sqlite .sqlite3) and the names importers declare in ``walk_names``,
    databases first, minus known non-transcript indexes (``sessions.json``,
    ``history.jsonl``) and the agents' own non-transcript files (:func:`walk_skipped`); files
    named explicitly are always yielded. Symlinked
    directories are followed once; a symlink back to one of its own ancestors
    (a directory loop) is not followed and, when ``loops`` is given, appended
    to it as ``(link, target)``. Hidden folders are not walked; when ``unwalked`` is given,
    those named like an agent's data folder (:func:`agent_folder_names`) are appended to it.
    """
    seen_dirs: set[tuple[int, int]] = set()
    agents = agent_folder_names() if unwalked is not None else frozenset()
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.is_dir():
            yield path, True
            continue
        found: list[Path] = []
        for root, dirs, files in os.walk(path, followlinks=True):
            try:
                info = os.stat(root)
            except OSError:
                dirs[:] = []
                continue
            key = (info.st_dev, info.st_ino)
            if key in seen_dirs:
                dirs[:] = []
                continue
            seen_dirs.add(key)
            if unwalked is not None:
                unwalked.extend(Path(root) / d for d in sorted(dirs) if d in agents)
            inner = agent_inner_folder_names()
            dirs[:] = sorted(d for d in dirs if (not d.startswith(".") or d in inner) and not _is_loop(root, d, loops))
            for name in files:
                candidate = Path(root) / name
                if _walked(name) and not walk_skipped(candidate):
                    found.append(candidate)
        found.sort(key=lambda p: (p.suffix.lower() not in DB_SUFFIXES, str(p)))
        for candidate in found:
            yield candidate, False


@functools.lru_cache(maxsize=1)
def agent_folder_names() -> frozenset[str]:
    """The hidden folder names agents keep their data under, from every importer's
    ``default_locations`` (``~/.claude/projects/*/*.jsonl`` gives ``.claude``)."""
    names: set[str] = set()
    for cls in IMPORTERS.values():
        for patterns in cls.default_locations.values():
            for pattern in patterns:
                parts = pattern.replace("\\", "/").split("/")
                if len(parts) > 2 and parts[0] == "~" and parts[1].startswith(".") and parts[1] != ".":
                    names.add(parts[1])
    return frozenset(names)


@functools.lru_cache(maxsize=1)
def agent_inner_folder_names() -> frozenset[str]:
    """Hidden folder names *inside* an agent's data folder that hold its transcripts (Antigravity's
    ``brain/<id>/.system_generated/logs``), from the importers' ``default_locations``: walked, as
    the agent's own structure, unlike hidden folders in general."""
    names: set[str] = set()
    for cls in IMPORTERS.values():
        for patterns in cls.default_locations.values():
            for pattern in patterns:
                parts = pattern.replace("\\", "/").split("/")
                names.update(p for p in parts[2:] if p.startswith(".") and p not in (".", "..") and "*" not in p)
    return frozenset(names)


def _is_loop(root: str, name: str, loops: list[tuple[Path, Path]] | None) -> bool:
    """True when ``root/name`` is a symlink to ``root`` or one of its ancestors (recorded)."""
    link = os.path.join(root, name)
    if not os.path.islink(link):
        return False
    target = os.path.realpath(link)
    here = os.path.realpath(root)
    if here != target and not here.startswith(target.rstrip(os.sep) + os.sep):
        return False
    if loops is not None:
        loops.append((Path(link), Path(target)))
    return True


def _walked(name: str) -> bool:
    """True for a file name a directory walk imports (see :func:`walk_inputs`)."""
    if name in WALK_IGNORED:
        return False
    if not name.startswith(".") and Path(name).suffix.lower() in WALK_SUFFIXES:
        return True
    return any(fnmatch.fnmatch(name, pattern) for pattern in _walk_names())


def watched_name(name: str) -> bool:
    """True for a file name that a directory walk (and ``sessions watch``) indexes."""
    return _walked(name)


def watched(path: Path) -> bool:
    """True for a file a directory walk (and ``sessions watch``) indexes: a transcript-like name
    that is none of the agents' own non-transcript files (:func:`walk_skipped`)."""
    return _walked(path.name) and not walk_skipped(path)


def walk_skipped(path: Path) -> bool:
    """True for a file an agent keeps beside its transcripts that holds none (its settings,
    credentials, caches, indexes: every importer's ``walk_skipped`` globs)."""
    text = "/" + path.as_posix().lstrip("/")
    return any(fnmatch.fnmatchcase(text, pattern) for pattern in _skipped_patterns())


@functools.lru_cache(maxsize=1)
def _skipped_patterns() -> tuple[str, ...]:
    return tuple("*/" + pattern.lstrip("/") for cls in IMPORTERS.values() for pattern in cls.walk_skipped)


@functools.lru_cache(maxsize=1)
def _walk_names() -> tuple[str, ...]:
    return tuple(pattern for cls in IMPORTERS.values() for pattern in cls.walk_names)
