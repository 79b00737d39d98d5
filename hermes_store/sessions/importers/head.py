"""``Head``: the cheap probe of a file that every importer's ``sniff`` reads.

Reading is bounded: the first 256 KiB (a longer first line is read whole up to
128 MiB so a huge first message still shows its shape), whole JSON documents up
to 64 MiB, SQLite table names through :mod:`hermes_store.foreign_db`. Every
accessor is cached and never raises, except that a SQLite file its writer keeps
locked raises ``ForeignDBError`` (kind ``locked``) so it is reported as locked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_store.foreign_db import ForeignDBError, foreign_tables
from hermes_store.sessions.importers.compressed import is_compressed, read_prefix

SQLITE_MAGIC = b"SQLite format 3\x00"
UTF8_BOM = b"\xef\xbb\xbf"  # Windows tools (PowerShell 5's Out-File, Notepad) start UTF-8 text with it
PROBE_BYTES = 256 * 1024
PROBE_LINES = 8
MAX_LINE_BYTES = 64 * 1024 * 1024  # the longest JSONL line ever held in memory (longer: skipped, reported)
LONG_LINE_BYTES = MAX_LINE_BYTES  # the longest first line read to recognise a format
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
_UNSET: Any = object()
_BAD: Any = object()  # "not JSON" (None is the JSON value null)
_DECODER = json.JSONDecoder(strict=False)
_NOT_JSON_SPACE = re.compile(rb"[^ \t\r\n]")  # after a whole value, any of these is "extra data"


@dataclass
class Head:
    """The first bytes of ``path`` (decompressed, for a ``.zst`` file) and lazily parsed views of them."""

    path: Path
    data: bytes  # the probed bytes, a leading UTF-8 byte order mark left out (see ``bom``)
    is_sqlite: bool
    # indexing options the user gave (e.g. ``{"column_map": {...}}`` from ``--map``)
    options: dict[str, Any] = field(default_factory=dict)
    _objects: list[dict[str, Any]] | None = field(default=None, repr=False)
    # set by objects(): line 1 is one whole JSON value and more text follows it -- the file is
    # a sequence of values (JSONL), so it cannot parse as one document
    _several_values: bool = field(default=False, repr=False)
    _document: Any = field(default=_UNSET, repr=False)
    # the bytes :meth:`document` parsed (whole file), so a reader can hash them without reading again
    document_bytes: bytes | None = field(default=None, repr=False)
    _tables: frozenset[str] | None = field(default=None, repr=False)
    # the file starts with a UTF-8 byte order mark, which ``data`` leaves out
    bom: bool = False

    @classmethod
    def read(cls, path: Path, options: dict[str, Any] | None = None) -> Head:
        """Probe ``path`` (a directory or an unreadable file gives empty data)."""
        data = b""
        try:
            if path.is_file() and is_compressed(path):
                data = read_prefix(path, PROBE_BYTES)  # what it decompresses to (b"" when it cannot be)
            elif path.is_file():
                with open(path, "rb") as handle:
                    data = handle.read(PROBE_BYTES)
        except OSError:
            data = b""
        bom = data.startswith(UTF8_BOM)
        return cls(path=path, data=data[len(UTF8_BOM):] if bom else data, is_sqlite=data.startswith(SQLITE_MAGIC),
                   options=dict(options or {}), bom=bom)

    @property
    def probed(self) -> int:
        """How many bytes of the file were read (the byte order mark included)."""
        return len(self.data) + (len(UTF8_BOM) if self.bom else 0)

    @property
    def suffix(self) -> str:
        """The lower-case file suffix (``".jsonl"``)."""
        return self.path.suffix.lower()

    def text(self) -> str:
        """``data`` decoded as UTF-8 (bad bytes replaced)."""
        return self.data.decode("utf-8", errors="replace")

    def objects(self) -> list[dict[str, Any]]:
        """The first <= 8 JSON objects of the JSONL lines (lines that are not objects skipped)."""
        if self._objects is None:
            self._objects = [] if self.is_sqlite else self._parse_objects()
        return self._objects

    def _parse_objects(self) -> list[dict[str, Any]]:
        data = self.data
        if self.probed == PROBE_BYTES and b"\n" not in data and not is_compressed(self.path):
            data = _long_first_line(self.path)
        found: list[dict[str, Any]] = []
        cut = self.probed >= PROBE_BYTES and not data.endswith(b"\n")  # the last line may be cut
        first = True
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            if end < 0:
                if cut:
                    break
                end = len(data)
            raw = data[start:end]
            start = end + 1
            if not raw.strip():
                continue
            obj = _loads(raw, _BAD)
            if first:
                first = False
                self._several_values = obj is not _BAD and _NOT_JSON_SPACE.search(data, start) is not None
            if obj.__class__ is dict:
                found.append(obj)
                if len(found) >= PROBE_LINES:
                    break
        return found

    def document(self) -> Any | None:
        """The whole file parsed as one JSON document (files <= 64 MiB); None otherwise.

        A file whose first line is a whole JSON value followed by more text (JSONL) is
        known not to be one document from :meth:`objects` alone, without parsing it again.
        """
        if self._document is _UNSET:
            self._document = None
            stripped = self.data.lstrip()
            whole = self.probed < PROBE_BYTES or not is_compressed(self.path)  # a longer .zst: not parsed here
            if stripped[:1] in (b"{", b"[") and not self.is_sqlite and not self._jsonl() and whole:
                try:
                    if self.path.stat().st_size <= MAX_DOCUMENT_BYTES:
                        raw = (UTF8_BOM * self.bom + self.data if self.probed < PROBE_BYTES
                               else self.path.read_bytes())
                        self._document = _loads(raw)
                        if self._document is not None:
                            self.document_bytes = raw
                except OSError:
                    self._document = None
        return self._document

    def _jsonl(self) -> bool:
        self.objects()
        return self._several_values

    def sqlite_tables(self) -> frozenset[str]:
        """Table names of a SQLite file (opened read-only); empty when not SQLite."""
        if self._tables is None:
            self._tables = frozenset()
            if self.is_sqlite:
                self._tables = _tables(self.path)
        return self._tables


def _loads(raw: bytes, bad: Any = None) -> Any:
    """``raw`` parsed as one JSON value (control characters in strings allowed, a leading byte
    order mark or run of NUL bytes skipped); ``bad`` if not."""
    try:
        return _DECODER.decode(raw.decode("utf-8-sig", errors="replace").lstrip("\x00"))
    except (ValueError, RecursionError):
        return bad


def _long_first_line(path: Path) -> bytes:
    """The first line when it is longer than the probe (bounded read); b"" when too long."""
    try:
        with open(path, "rb") as handle:
            line = handle.readline(LONG_LINE_BYTES)
    except OSError:
        return b""
    if not line.endswith(b"\n") and len(line) >= LONG_LINE_BYTES:
        return b""
    line = line.removeprefix(UTF8_BOM)
    return line + (b"" if line.endswith(b"\n") else b"\n")


def first_line_too_long(path: Path, limit: int = MAX_LINE_BYTES) -> bool:
    """True when the first line of ``path`` is longer than ``limit`` bytes (scanned in 1 MiB chunks)."""
    seen = 0
    try:
        with open(path, "rb") as handle:
            while seen <= limit:
                chunk = handle.read(1 << 20)
                if not chunk or b"\n" in chunk:
                    return seen + (chunk.find(b"\n") if chunk else 0) > limit
                seen += len(chunk)
    except OSError:
        return False
    return True


def _tables(path: Path) -> frozenset[str]:
    """Real table names (views and virtual tables left out); a lock held past the retries
    raises :class:`ForeignDBError` of kind ``locked`` (reported as such, not "unknown format")."""
    try:
        return foreign_tables(path)
    except ForeignDBError:
        raise
    except OSError:
        return frozenset()
