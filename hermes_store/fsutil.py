"""Crash-safe file replacement, the one implementation every writer of a plain file uses.

``atomic_write_bytes`` writes to a temp file in the same directory, fsyncs it,
gives it the final mode, renames it over the target and fsyncs the directory:
a reader (or a crash) sees the complete old file or the complete new one.

Symlinks, one rule everywhere (README, "Symlinks"): a file we write that is a symlink
is written *through* — the link stays, the file it points to is replaced atomically in
its own directory (:func:`resolve_for_write`); a link whose target directory does not
exist, or a loop, is refused naming both. Our own lock files are the exception: a
symlinked lock file is refused (locking would truncate its target).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a rename in ``directory`` durable where the platform allows fsync on a directory."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def resolve_for_write(path: str | os.PathLike[str]) -> Path:
    """The file a write of ``path`` must replace: ``path`` itself, or the end of its symlink chain."""
    path = Path(path)
    if not path.is_symlink():
        return path
    try:
        target = Path(os.path.realpath(path, strict=False))
    except (OSError, RuntimeError) as exc:
        raise OSError(f"{path}: cannot follow the symlink: {exc}") from exc
    if target.is_symlink() or not target.parent.is_dir():
        raise OSError(f"{path} is a symlink to {target}, which cannot be written "
                      "(a loop, or its directory does not exist)")
    return target


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None,
                       prefix: str | None = None) -> None:
    """Replace ``path`` with ``data`` atomically.

    ``mode`` defaults to the existing file's permissions, or 0600 for a new
    file. ``prefix`` names the temp file (``.<name>.`` by default) so callers
    can recognise their own leftovers. The temp file is removed on any failure
    and the original error re-raised.
    """
    path = resolve_for_write(path)  # a symlink is written through, never replaced by a plain file
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            mode = 0o600
    if not path.parent.is_dir():  # else the error names the temp file, not what was asked for
        raise OSError(f"{path}: cannot write it: no directory {path.parent}")
    fd, tmp = tempfile.mkstemp(prefix=prefix or f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, mode: int | None = None,
                      prefix: str | None = None) -> None:
    """UTF-8 text variant of :func:`atomic_write_bytes` (newlines written exactly as given)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode, prefix=prefix)


def private_mkdir(directory: str | os.PathLike[str]) -> Path:
    """Create ``directory`` and every missing parent with mode 0700 (``mkdir(parents=True)``
    would give the parents the umask's mode, e.g. a world-readable home); returns it."""
    directory = Path(directory)
    missing = []
    current = directory
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for item in reversed(missing):
        try:
            item.mkdir(mode=0o700)
        except FileExistsError:
            pass
    return directory
