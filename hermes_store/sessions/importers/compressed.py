"""Transcripts an agent compressed: ``*.zst`` files read through the ``zstd`` program.

Codex compresses cold rollouts in the background (openai/codex ``codex-rs/rollout/src/
compression.rs``: a rollout older than a week, ``rollout-*.jsonl``, becomes
``rollout-*.jsonl.zst``; a resume decompresses it back to the plain name, and a plain file beside a
compressed one is the newer copy). Python has no zstd decoder of its own before 3.14 and no
dependency is added for one: the ``zstd`` command-line program (packaged everywhere zstd is)
decompresses the file as a stream. Without it such a file is reported, never read as empty.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import IO

ZSTD_SUFFIX = ".zst"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class CompressedUnreadable(OSError):
    """A compressed transcript that cannot be decompressed here (no ``zstd`` program, a bad frame)."""


def is_compressed(path: Path) -> bool:
    """True for a zstd-compressed transcript (``*.zst``)."""
    return path.name.endswith(ZSTD_SUFFIX)


def plain_path(path: Path) -> Path:
    """The file ``path`` decompresses to (``rollout-….jsonl`` for ``rollout-….jsonl.zst``)."""
    return path.with_name(path.name[: -len(ZSTD_SUFFIX)]) if is_compressed(path) else path


class _Decompressed:
    """The decompressed bytes of a ``.zst`` file, read from a ``zstd -dc`` process (closed with it)."""

    def __init__(self, path: Path) -> None:
        program = shutil.which("zstd")
        if program is None:
            raise CompressedUnreadable(f"{path.name} is zstd-compressed and the zstd program is not installed "
                                       "(install zstd to index it)")
        self._path = path
        self._process = subprocess.Popen([program, "-dcq", "--", str(path)], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
        assert self._process.stdout is not None
        self._out: IO[bytes] = self._process.stdout

    def readline(self, limit: int = -1) -> bytes:
        """The next decompressed line (at most ``limit`` bytes); b"" at the end."""
        line = self._out.readline(limit)
        if not line:
            self._check()
        return line

    def read(self, size: int = -1) -> bytes:
        """At most ``size`` decompressed bytes (all when negative); b"" at the end."""
        data = self._out.read(size)
        if not data or size < 0:
            self._check()
        return data

    def seek(self, offset: int) -> None:
        """Skip to ``offset`` bytes into the decompressed stream (from its start: a fresh stream)."""
        remaining = offset
        while remaining > 0:
            chunk = self._out.read(min(remaining, 1 << 20))
            if not chunk:
                break
            remaining -= len(chunk)

    def _check(self) -> None:
        code = self._process.wait()
        if code != 0:
            detail = (self._process.stderr.read() if self._process.stderr else b"").decode("utf-8", "replace")
            raise CompressedUnreadable(f"{self._path.name}: zstd could not decompress it ({detail.strip() or code})")

    def close(self) -> None:
        """Stop the process (it may not have been read to the end)."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> _Decompressed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_source(path: Path, buffering: int = -1) -> IO[bytes] | _Decompressed:
    """``path`` opened for reading its bytes: decompressed when it is a ``.zst`` file (raises
    :class:`CompressedUnreadable` when that cannot be done here)."""
    if is_compressed(path):
        with open(path, "rb") as handle:
            magic = handle.read(len(ZSTD_MAGIC))
        if magic != ZSTD_MAGIC:
            raise CompressedUnreadable(f"{path.name} is named .zst but is not zstd data")
        return _Decompressed(path)
    return open(path, "rb", buffering=buffering)


def read_prefix(path: Path, size: int) -> bytes:
    """The first ``size`` decompressed bytes of ``path`` (b"" when it cannot be decompressed)."""
    try:
        with open_source(path) as handle:
            return handle.read(size)
    except (OSError, ValueError):
        return b""
