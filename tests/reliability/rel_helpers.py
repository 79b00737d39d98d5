"""Shared plumbing for the reliability suite: knobs, forked children, store checks, filesystems.

Imported by the test modules (pytest puts this directory on ``sys.path``).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes_store.builtin.entries import join_entries, parse_entries
from hermes_store.db import Database
from hermes_store.sessions.maintenance import fts_integrity, fts_tables, integrity_check

HERE = Path(__file__).resolve().parent
WORKERS = HERE / "rel_workers.py"
PYTHON = sys.executable


def knob(name: str, default: int) -> int:
    """An integer from the environment (``HERMES_REL_<NAME>``), else ``default``."""
    raw = os.environ.get(f"HERMES_REL_{name}", "").strip()
    return int(raw) if raw else default


# --------------------------------------------------------------------------- processes


def run_worker(*args: Any, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``rel_workers.py ARGS`` as a separate Python process (stdout/stderr piped)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.Popen([PYTHON, str(WORKERS), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=full_env)


def finish(proc: subprocess.Popen, timeout: float = 600) -> tuple[int, str, str]:
    """Wait for a worker and return ``(returncode, stdout, stderr)``."""
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def kill_at_random_point(body: Callable[[], None], *, max_delay: float,
                         rng: random.Random) -> bool:
    """Fork a child that runs ``body`` (after signalling it is ready) and SIGKILL it after a
    random delay in ``[0, max_delay)``. Returns True when the child was killed mid-way,
    False when it had already finished (exit code 0). A child failing otherwise raises."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(read_fd)
            os.write(write_fd, b"r")
            os.close(write_fd)
            body()
        except BaseException:  # report, never return into the parent's pytest
            import traceback

            traceback.print_exc()
            code = 3
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        os.read(read_fd, 1)
    finally:
        os.close(read_fd)
    time.sleep(rng.random() * max_delay)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status) == signal.SIGKILL
    code = os.WEXITSTATUS(status)
    if code != 0:
        raise AssertionError(f"child failed with exit code {code} before it was killed")
    return False


def run_forked(body: Callable[[], None]) -> None:
    """Run ``body`` in a forked child to completion (fresh connections, as a new process)."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            body()
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status}"


# --------------------------------------------------------------------------- checks


def db_problems(db_path: Path) -> list[str]:
    """``PRAGMA integrity_check`` problems plus every FTS5 ``integrity-check`` failure."""
    if not Path(db_path).exists():
        return []
    db = Database(db_path)
    try:
        problems = integrity_check(db)
        for table in fts_tables(db):
            error = fts_integrity(db, table)
            if error is not None:
                problems.append(f"{table}: {error}")
        return problems
    finally:
        db.close()


def read_md(path: Path) -> list[str]:
    """Entries of a MEMORY.md/USER.md file, asserting it decodes and round-trips exactly."""
    if not path.exists():
        return []
    raw = path.read_bytes().decode("utf-8")  # strict: a torn write would raise here
    entries = parse_entries(raw)
    assert raw == join_entries(entries), f"{path.name} does not round-trip (torn or drifted)"
    return entries


def tmp_leftovers(directory: Path) -> list[str]:
    """Temp files an atomic write left behind in ``directory``."""
    return sorted(p.name for p in Path(directory).glob("*.tmp"))


def jsonl_lines(text: str) -> list[dict[str, Any]]:
    """Parse worker output: one JSON object per non-empty line."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# --------------------------------------------------------------------------- filesystems


def _mount(*args: str) -> bool:
    try:
        done = subprocess.run(["mount", *args], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=20)


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str) -> Iterator[Path | None]:
    """Mount a tmpfs of ``size`` at ``path`` (root only); yields None when mounting is refused
    (or ``HERMES_REL_NO_MOUNT=1`` asks for the non-root fallback)."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or knob("NO_MOUNT", 0) or not _mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)):
        yield None
        return
    try:
        yield path
    finally:
        _umount(path)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[str]:
    """Make the directory tree at ``path`` read-only for this process for the ``with`` body.

    As root (which ignores permission bits) a read-only bind mount is used;
    otherwise write permission is removed. Yields how it was done.
    """
    if os.geteuid() == 0:
        if not _mount("--bind", str(path), str(path)):
            raise RuntimeError("cannot bind-mount as root")
        try:
            if not _mount("-o", "remount,bind,ro", str(path)):
                raise RuntimeError("cannot remount read-only")
            yield "bind-mount ro"
        finally:
            _umount(path)
        return
    modes = {}
    for root, dirs, files in os.walk(path):
        for name in [*dirs, *files, "."]:
            item = Path(root) / name if name != "." else Path(root)
            modes[item] = item.stat().st_mode
            item.chmod(modes[item] & ~0o222)
    try:
        yield "chmod a-w"
    finally:
        for item, mode in sorted(modes.items(), key=lambda kv: len(str(kv[0]))):
            item.chmod(mode)


def tree_snapshot(path: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every regular file under ``path``."""
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}
