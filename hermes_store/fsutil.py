"""Crash-safe file replacement, the one implementation every writer of a plain file uses.

``atomic_write_bytes`` writes to a temp file in the same directory, fsyncs it,
gives it the final mode, renames it over the target and fsyncs the directory:
a reader (or a crash) sees the complete old file or the complete new one.
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


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None,
                       prefix: str | None = None) -> None:
    """Replace ``path`` with ``data`` atomically.

    ``mode`` defaults to the existing file's permissions, or 0600 for a new
    file. ``prefix`` names the temp file (``.<name>.`` by default) so callers
    can recognise their own leftovers. The temp file is removed on any failure
    and the original error re-raised.
    """
    path = Path(path)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            mode = 0o600
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
