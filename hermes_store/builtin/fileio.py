"""Crash-safe file plumbing for the store files: a private lock file and atomic replace."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

from hermes_store.home import private_mkdir

LOCK_MODE = 0o600
TEMP_PREFIX, TEMP_SUFFIX = ".mem_", ".tmp"
STALE_TEMP_SECONDS = 3600.0  # a temp file this old belongs to a writer that died mid-write


def lock_path_for(path: Path) -> Path:
    """``MEMORY.md`` -> ``MEMORY.md.lock``."""
    return path.with_name(path.name + ".lock")


def prepare_lock_file(lock_path: Path) -> None:
    """Create the lock file with mode 0600 (tightening an existing one); refuse a symlink.

    Raises OSError when ``lock_path`` is a symlink or cannot be opened.
    """
    if lock_path.is_symlink():
        raise OSError(f"refusing to use lock file {lock_path}: it is a symlink")
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(lock_path, flags, LOCK_MODE)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, LOCK_MODE)
    finally:
        os.close(fd)


def _file_lock(lock_path: Path) -> FileLock:
    try:  # filelock >= 4 can remove the path on release; keep it, as Hermes does
        return FileLock(str(lock_path), mode=LOCK_MODE, preserve_lock_file=True)
    except TypeError:
        return FileLock(str(lock_path), mode=LOCK_MODE)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[Path]:
    """Hold the exclusive per-file lock ``<path>.lock`` (blocking) for the ``with`` body."""
    lock_path = lock_path_for(path)
    private_mkdir(path.parent)
    prepare_lock_file(lock_path)
    with _file_lock(lock_path):
        yield lock_path


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, LF kept as is) via a temp file in the same directory + fsync + replace.

    The temp file is removed on any failure. Raises RuntimeError naming the path.
    """
    private_mkdir(path.parent)
    fd, tmp_name = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp_name, path.stat().st_mode & 0o777)
        os.replace(tmp_name, path)
    except (OSError, UnicodeError) as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise RuntimeError(f"Failed to write memory file {path}: {exc}") from exc
    _fsync_dir(path.parent)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Byte-exact variant of :func:`atomic_write_text` (used for backups)."""
    fd, tmp_name = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


def remove_stale_temps(directory: Path, older_than: float = STALE_TEMP_SECONDS) -> list[str]:
    """Delete ``.mem_*.tmp`` files left in ``directory`` by a writer killed mid-write.

    Only files older than ``older_than`` seconds are touched (a live writer's temp
    file exists for milliseconds). Returns the names removed; errors are ignored.
    """
    removed = []
    cutoff = time.time() - older_than
    with contextlib.suppress(OSError):
        for candidate in directory.glob(f"{TEMP_PREFIX}*{TEMP_SUFFIX}"):
            with contextlib.suppress(OSError):
                if candidate.is_file() and candidate.stat().st_mtime < cutoff:
                    candidate.unlink()
                    removed.append(candidate.name)
    return removed


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable where the platform allows fsync on a directory."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
