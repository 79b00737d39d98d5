"""Crash-safe file plumbing for the store files: a private lock file and atomic replace."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from hermes_store import fsutil
from hermes_store.fsutil import private_mkdir

LOCK_MODE = 0o600
TEMP_PREFIX, TEMP_SUFFIX = ".mem_", ".tmp"
STALE_TEMP_SECONDS = 3600.0  # a temp file this old belongs to a writer that died mid-write
DEFAULT_LOCK_TIMEOUT = 10.0  # seconds a writer or reader waits for <file>.lock
LOCK_TIMEOUT_ENV = "HERMES_STORE_LOCK_TIMEOUT"


class LockTimeout(OSError):
    """Another process held ``<file>.lock`` for longer than the lock timeout."""


def lock_timeout() -> float:
    """Seconds to wait for a store file's lock: ``$HERMES_STORE_LOCK_TIMEOUT`` or 10."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_LOCK_TIMEOUT
    except ValueError:
        value = DEFAULT_LOCK_TIMEOUT
    return value if value >= 0 else DEFAULT_LOCK_TIMEOUT


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
def locked(path: Path, timeout: float | None = None) -> Iterator[Path]:
    """Hold the exclusive per-file lock ``<path>.lock`` for the ``with`` body.

    Waits at most ``timeout`` seconds (default :func:`lock_timeout`), then raises
    :class:`LockTimeout` naming the lock file.
    """
    lock_path = lock_path_for(path)
    private_mkdir(path.parent)
    prepare_lock_file(lock_path)
    wait = lock_timeout() if timeout is None else timeout
    lock = _file_lock(lock_path)
    try:
        lock.acquire(timeout=wait)
    except Timeout as exc:
        raise LockTimeout(f"{lock_path} is held by another process; gave up after {wait:g} s "
                          f"(set ${LOCK_TIMEOUT_ENV} to wait longer)") from exc
    try:
        yield lock_path
    finally:
        lock.release()


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, LF kept as is) via a temp file in the same directory + fsync + replace.

    The temp file (``.mem_*.tmp``, swept by the store when stale) is removed on
    any failure. Raises RuntimeError naming the path.
    """
    private_mkdir(path.parent)
    try:
        fsutil.atomic_write_text(path, text, prefix=TEMP_PREFIX)
    except (OSError, UnicodeError) as exc:
        raise RuntimeError(f"Failed to write memory file {path}: {exc}") from exc


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Byte-exact variant of :func:`atomic_write_text` (used for backups)."""
    fsutil.atomic_write_bytes(path, data, prefix=TEMP_PREFIX)


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
