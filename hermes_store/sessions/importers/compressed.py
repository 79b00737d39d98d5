"""Transcripts an agent compressed: ``*.zst`` files, read as a stream through ``zstandard``.

Codex compresses cold rollouts in the background (openai/codex ``codex-rs/rollout/src/
compression.rs``: a rollout older than a week, ``rollout-*.jsonl``, becomes
``rollout-*.jsonl.zst``; a resume decompresses it back to the plain name, and a plain file beside a
compressed one is the newer copy). The file is decompressed as it is read (bounded memory: the
readers take a line at a time); a damaged frame is reported with what came before it kept, never
read as empty.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO

import zstandard

ZSTD_SUFFIX = ".zst"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class CompressedUnreadable(OSError):
    """A compressed transcript that cannot be decompressed (not zstd data, a damaged frame)."""


def is_compressed(path: Path) -> bool:
    """True for a zstd-compressed transcript (``*.zst``)."""
    return path.name.endswith(ZSTD_SUFFIX)


def plain_path(path: Path) -> Path:
    """The file ``path`` decompresses to (``rollout-….jsonl`` for ``rollout-….jsonl.zst``)."""
    return path.with_name(path.name[: -len(ZSTD_SUFFIX)]) if is_compressed(path) else path


class _Frames(io.RawIOBase):
    """The decompressed bytes of a file of zstd frames, decompressed a chunk at a time; a file
    that ends inside a frame, or holds bytes that are no frame, raises :class:`CompressedUnreadable`
    once the bytes before the damage are read."""

    CHUNK = 1 << 16

    def __init__(self, handle: IO[bytes], name: str) -> None:
        self._handle, self._name = handle, name
        self._frame = zstandard.ZstdDecompressor().decompressobj()
        self._started = False  # the current frame has been fed bytes
        self._pending = b""  # compressed bytes of the next frame, read but not fed yet
        self._left = b""  # decompressed bytes not handed out yet

    def readable(self) -> bool:
        return True

    def _more(self) -> bytes:
        """The next decompressed bytes (b"" at the end of the last whole frame)."""
        while True:
            data = self._pending or self._handle.read(self.CHUNK)
            self._pending = b""
            if not data:
                if self._started and not self._frame.eof:
                    raise CompressedUnreadable(f"{self._name}: cannot decompress it (the file ends inside a frame)")
                return b""
            if self._frame.eof:  # a further frame follows the last one
                self._frame = zstandard.ZstdDecompressor().decompressobj()
            self._started = True
            try:
                out = self._frame.decompress(data)
            except zstandard.ZstdError as exc:
                raise CompressedUnreadable(f"{self._name}: cannot decompress it ({exc})") from exc
            if self._frame.eof:
                self._pending = self._frame.unused_data
            if out:
                return out

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        """Fill ``buffer`` with decompressed bytes; 0 at the end."""
        if not self._left:
            self._left = self._more()
        size = min(len(buffer), len(self._left))
        buffer[:size] = self._left[:size]
        self._left = self._left[size:]
        return size


class _Decompressed:
    """The decompressed bytes of a ``.zst`` file as a buffered stream (closed with the file)."""

    def __init__(self, path: Path, buffering: int) -> None:
        self._path = path
        self._file = open(path, "rb")  # noqa: SIM115 - closed by close()
        reader = _Frames(self._file, path.name)
        self._out = io.BufferedReader(reader, buffer_size=buffering if buffering > 0 else 1 << 16)

    def _guarded(self, read, *args: int) -> bytes:
        try:
            return read(*args)
        except zstandard.ZstdError as exc:
            raise CompressedUnreadable(f"{self._path.name}: cannot decompress it ({exc})") from exc

    def readline(self, limit: int = -1) -> bytes:
        """The next decompressed line (at most ``limit`` bytes); b"" at the end."""
        return self._guarded(self._out.readline, limit)

    def read(self, size: int = -1) -> bytes:
        """At most ``size`` decompressed bytes (all when negative); b"" at the end."""
        return self._guarded(self._out.read, size)

    def seek(self, offset: int) -> None:
        """Skip to ``offset`` bytes into the decompressed stream (read forward in bounded chunks)."""
        remaining = offset
        while remaining > 0:
            chunk = self.read(min(remaining, 1 << 20))
            if not chunk:
                break
            remaining -= len(chunk)

    def close(self) -> None:
        """Close the stream and the file under it."""
        try:
            self._out.close()
        finally:
            self._file.close()

    def __enter__(self) -> _Decompressed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_source(path: Path, buffering: int = -1) -> IO[bytes] | _Decompressed:
    """``path`` opened for reading its bytes: decompressed when it is a ``.zst`` file (raises
    :class:`CompressedUnreadable` when it is not zstd data)."""
    if is_compressed(path):
        with open(path, "rb") as handle:
            magic = handle.read(len(ZSTD_MAGIC))
        if magic != ZSTD_MAGIC:
            raise CompressedUnreadable(f"{path.name} is named .zst but is not zstd data")
        return _Decompressed(path, buffering)
    return open(path, "rb", buffering=buffering)


def read_prefix(path: Path, size: int) -> bytes:
    """The first ``size`` decompressed bytes of ``path`` (b"" when it cannot be decompressed)."""
    try:
        with open_source(path) as handle:
            return handle.read(size)
    except (OSError, ValueError):
        return b""
