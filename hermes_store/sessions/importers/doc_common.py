"""Helpers for importers of whole-document and foreign-database formats.

* :func:`load_text` reads a whole text file with a size bound, feeding the importer's
  content hash and reporting bad UTF-8 as a Problem; :func:`load_document` parses one JSON
  document read so (bad JSON a Problem too);
* :func:`iter_json_lines` streams a JSONL file with a per-line cap (longer lines
  are skipped and reported, never held whole in memory);
* :func:`tool_call` builds one OpenAI-shaped tool call;
* :func:`path_has_part` tells whether a path lies under a directory name
  (e.g. ``.qwen``), used by sniffs that share a structure with a sibling format;
* :func:`iter_json_array` streams the elements of a top-level JSON array;
* :class:`ReplacedWhenChanged` re-imports a changed file whole (rewinds, branches);
* :class:`NamedByDocument` names a one-document session by the id written inside it;
* :func:`safe_rows` / :func:`shape_guarded` turn a record or document of an
  unexpected shape into a Problem instead of a traceback.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from hermes_store.foreign_db import ForeignDB, ForeignDBError
from hermes_store.sessions.importers.base import Head, Importer, Problem

MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
MAX_LINE_BYTES = 64 * 1024 * 1024
_ENCODER = json.JSONEncoder(ensure_ascii=False)


def load_text(importer: Importer, problems: list[Problem], limit: int,
              what: str = "file") -> tuple[str, int] | None:
    """The importer's whole file as ``(text, bytes read)`` (the bytes fed to the content hash;
    invalid UTF-8 replaced, with a Problem naming the line; a byte order mark opening it left out);
    None, with a Problem, when it is over ``limit`` bytes (``what`` names the file in it: "file",
    "document", "snapshot")."""
    size = importer.path.stat().st_size
    if size > limit:
        problems.append(Problem(None, f"{what} too large to load ({size} bytes)"))
        return None
    raw = importer.path.read_bytes()
    importer.hasher.update(raw)
    try:
        return raw.decode("utf-8-sig"), len(raw)
    except UnicodeDecodeError as exc:
        problems.append(Problem(raw.count(b"\n", 0, exc.start) + 1, "invalid UTF-8 (replaced with U+FFFD)"))
        return raw.decode("utf-8-sig", errors="replace"), len(raw)


def load_document(importer: Importer, problems: list[Problem]) -> Any | None:
    """The importer's file parsed as one JSON document; None (with a Problem) when unusable."""
    path = importer.path
    head = importer.head
    if head is not None and head.path == path and head.document_bytes is not None:
        raw = head.document_bytes  # parsed once, by detection: reused when it was clean UTF-8
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            importer.hasher.update(raw)
            return head.document()
    loaded = load_text(importer, problems, MAX_DOCUMENT_BYTES, "document")
    if loaded is None:
        return None
    try:
        return json.loads(loaded[0], strict=False)
    except RecursionError:
        problems.append(Problem(None, "malformed JSON: nested too deeply"))
    except ValueError as exc:
        problems.append(Problem(getattr(exc, "lineno", None), f"malformed JSON: {exc}"))
    return None


def json_objects(path: Path, hasher: Any, problems: list[Problem]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_no, object)`` for every JSONL line of ``path`` that is a JSON object; every other
    line (malformed, too long, not an object) becomes a problem appended to ``problems``."""
    for line, obj, problem in iter_json_lines(path, hasher):
        if problem is not None:
            problems.append(problem)
        elif not isinstance(obj, dict):
            problems.append(Problem(line, "expected a JSON object"))
        else:
            yield line, obj


def iter_json_lines(
    path: Path, hasher: Any = None, max_line: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, Any, Problem | None]]:
    """Yield ``(line_no, object_or_None, problem_or_None)`` for every non-blank JSONL line.

    Lines longer than ``max_line`` bytes are skipped (and reported) while being
    read in bounded chunks. A final line without a newline that does not parse
    is reported as incomplete (a writer may still be appending it).
    """
    line_no = 0
    with open(path, "rb") as handle:
        while True:
            raw = handle.readline(max_line + 1)
            if not raw:
                return
            line_no += 1
            if hasher is not None:
                hasher.update(raw)
            if len(raw) > max_line and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # drain the rest of the long line
                    raw = handle.readline(1 << 20)
                    if hasher is not None:
                        hasher.update(raw)
                yield line_no, None, Problem(line_no, f"line longer than {max_line} bytes skipped")
                continue
            if raw.isspace():
                continue
            text = raw.decode("utf-8-sig" if line_no == 1 else "utf-8", errors="replace").lstrip("\x00")
            if not text.strip():  # only NUL bytes: a hole a crash left
                yield line_no, None, Problem(line_no, "a run of NUL bytes (a hole a crash left in the file); skipped")
                continue
            try:
                obj = json.loads(text, strict=False)
            except RecursionError:
                yield line_no, None, Problem(line_no, "malformed JSON: nested too deeply")
                continue
            except ValueError as exc:
                if not raw.endswith(b"\n"):
                    yield line_no, None, Problem(line_no, f"incomplete last line (no newline): {exc}")
                    return
                yield line_no, None, Problem(line_no, f"malformed JSON: {exc}")
                continue
            yield line_no, obj, None


def tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """One tool call in the OpenAI shape the store keeps (arguments as JSON text)."""
    if isinstance(arguments, str):
        args_text = arguments
    else:
        args_text = _ENCODER.encode(arguments if arguments is not None else {})
    return {
        "id": str(call_id) if call_id not in (None, "") else None,
        "type": "function",
        "function": {"name": str(name) if name is not None else "", "arguments": args_text},
    }


def dumps(value: Any) -> str:
    """Compact JSON text keeping non-ASCII characters."""
    return _ENCODER.encode(value)


def path_has_part(path: Path, *names: str) -> bool:
    """True when one of ``path``'s directory components is one of ``names``."""
    parts = _directory_parts(path)
    return any(name in parts for name in names)


@functools.lru_cache(maxsize=64)
def _directory_parts(path: Path) -> frozenset[str]:
    """The directory components of a path (cached: every importer's sniff asks about the same file)."""
    return frozenset(Path(path).parts[:-1])


MAX_ELEMENT_BYTES = 256 * 1024 * 1024
_READ = 1 << 20
_WS = " \t\r\n"


def iter_json_array(path: Path, hasher: Any = None,
                    max_element: int = MAX_ELEMENT_BYTES) -> Iterator[tuple[int, Any, Problem | None]]:
    """Stream the elements of a top-level JSON array: ``(index, element_or_None, problem_or_None)``.

    Holds one element at a time (a 1 GB export never sits in memory whole);
    an element larger than ``max_element`` bytes, or malformed JSON, ends the
    stream with a Problem naming the element's index.
    """
    decoder = json.JSONDecoder(strict=False)
    with open(path, "rb") as handle:
        raw = handle.read(_READ)
        if hasher is not None:
            hasher.update(raw)
        eof = len(raw) < _READ
        text, pending = _decode_chunk(raw, eof)
        text = text.lstrip(_WS + "\ufeff")
        if not text.startswith("["):
            yield 0, None, Problem(1, "expected a JSON array")
            return
        buffer, pos, index = text, 1, 0
        while True:
            while pos < len(buffer) and buffer[pos] in _WS + ",":
                pos += 1
            if pos < len(buffer) and buffer[pos] == "]":
                return
            try:
                if pos >= len(buffer):
                    raise ValueError("need more input")
                value, end = decoder.raw_decode(buffer, pos)
            except (ValueError, RecursionError) as exc:
                if eof:
                    yield index, None, Problem(None, f"[{index}]: malformed or cut-off JSON ({exc})")
                    return
                if len(buffer) - pos > max_element:
                    yield index, None, Problem(None, f"[{index}]: element larger than {max_element} bytes")
                    return
                more = handle.read(max(_READ, len(buffer) - pos))  # at least doubles the element's room
                if hasher is not None:
                    hasher.update(more)
                eof = not more
                decoded, pending = _decode_chunk(pending + more, eof)
                buffer = buffer[pos:] + decoded
                pos = 0
                continue
            yield index, value, None
            index += 1
            pos = end
            if pos > _READ:  # drop what was consumed
                buffer, pos = buffer[pos:], 0


def _decode_chunk(chunk: bytes, eof: bool) -> tuple[str, bytes]:
    """UTF-8 text of ``chunk`` and the bytes of a character cut at its end (kept for the next chunk)."""
    try:
        return chunk.decode("utf-8"), b""
    except UnicodeDecodeError as err:
        if not eof and err.start >= len(chunk) - 3:
            try:
                return chunk[:err.start].decode("utf-8"), chunk[err.start:]
            except UnicodeDecodeError:
                pass
        return chunk.decode("utf-8", errors="replace"), b""


class ReplacedWhenChanged:
    """Mixin: a changed file is re-imported whole, replacing what it imported before.

    For formats whose earlier messages can change or disappear (rewinds, branch
    switches, edited requests, a newer export): counting the messages already
    stored would silently skip the new ones. The whole-file hash kept by the
    loader tells an unchanged file (nothing to do) from a changed one.
    """

    path: Path
    replaced_whole: ClassVar[bool] = True  # the loader may read it again whole at any time

    def is_rewritten(self, state: Any) -> bool:
        """True when the file's bytes differ from those imported last time and it is a whole document
        (:meth:`Importer.whole`): a cut-off export never replaces what the whole one imported."""
        if not getattr(state, "content_hash", None):
            return False
        digest = hashlib.sha256()
        try:
            with open(self.path, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError:
            return False
        return digest.hexdigest() != state.content_hash and self.whole()

    def whole(self) -> bool:
        """See :meth:`Importer.whole`: True unless the format says otherwise."""
        return True


def whole_json_array(path: Path, element_ok: Any) -> bool:
    """True when ``path`` is a whole JSON array every element of which satisfies ``element_ok`` (an
    export that was not cut off or damaged: see :meth:`Importer.whole`)."""
    return all(problem is None and element_ok(value) for _index, value, problem in iter_json_array(path))


class NamedByDocument:
    """Mixin for one-document formats whose session id is written inside the document: the id
    :meth:`read` found (``doc_id``), else the file's stem."""

    path: Path
    doc_id: str | None = None

    def default_session_id(self) -> str:
        """The document's own session id once read, else the file stem."""
        return self.doc_id or self.path.stem


SHAPE_ERRORS = (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError)


def safe_rows(build: Any, problems: list[Problem], line: int | None, where: str, *args: Any) -> list[Any]:
    """``list(build(*args))``; a record of an unexpected shape becomes a Problem, not a crash."""
    try:
        return list(build(*args))
    except SHAPE_ERRORS as exc:
        problems.append(Problem(line, f"{where}: unexpected record shape ({type(exc).__name__}: {exc})"))
        return []


def shape_guarded(read: Any) -> Any:
    """Decorate an importer's ``read``: a value of an unexpected type anywhere in the source
    ends the read with a Problem (what was read before it is kept) instead of a traceback."""

    @functools.wraps(read)
    def guarded(self: Any, state: Any) -> Iterator[Any]:
        try:
            yield from read(self, state)
        except SHAPE_ERRORS as exc:
            yield Problem(None, f"unexpected document shape ({type(exc).__name__}: {exc});"
                                " the rest of the source is not imported")

    return guarded


def foreign_open(importer: Any) -> ForeignDB:
    """The importer's file opened by the one foreign-database reader; what it notices
    (invalid UTF-8, values cut) lands in the list that :func:`foreign_guarded` reports."""
    problems = getattr(importer, "foreign_problems", None)
    if problems is None:
        problems = importer.foreign_problems = []
    db = ForeignDB(importer.path)
    db.problems = problems
    return db


def foreign_guarded(read: Any) -> Any:
    """Decorate a foreign-database importer's ``read``: the rows :class:`ForeignDB` noticed
    become Problems (with their row), and a :class:`ForeignDBError` (locked, SQLite error,
    time or size bound) ends this input with a Problem while what was read is kept and the
    run goes on."""

    @functools.wraps(read)
    def guarded(self: Any, state: Any) -> Iterator[Any]:
        self.foreign_problems = []
        try:
            for event in read(self, state):
                while self.foreign_problems:
                    yield Problem(*self.foreign_problems.pop(0))
                yield event
        except ForeignDBError as exc:
            yield Problem(None, str(exc))
        while self.foreign_problems:
            yield Problem(*self.foreign_problems.pop(0))

    return guarded


def foreign_read(read_db: Any) -> Any:
    """Decorate a foreign-database importer's ``read(self, db, state)`` into the importer's
    ``read(self, state)``: its file opened by :func:`foreign_open` (a file that cannot be opened
    is one Problem), closed after, what the reader noticed reported (:func:`foreign_guarded`),
    and an unexpected value's type a Problem (:func:`shape_guarded`)."""

    @functools.wraps(read_db)
    def read(self: Any, state: Any) -> Iterator[Any]:
        try:
            db = foreign_open(self)
        except ForeignDBError as exc:
            yield Problem(None, str(exc))
            return
        try:
            yield from read_db(self, db, state)
        finally:
            db.close()

    return shape_guarded(foreign_guarded(read))


def workspace_database(head: Head) -> Path | None:
    """The ``state.vscdb`` beside a VS Code-family window's ``workspace.json`` (``{folder}`` or
    ``{workspace}``: the folder the window had open, which names its sessions' workspace), else
    None. VS Code and Cursor keep one such pair per ``workspaceStorage/<hash>/`` folder."""
    database = head.path.parent / "state.vscdb"
    if head.path.name != "workspace.json" or head.is_sqlite or not database.is_file():
        return None
    doc = head.document()
    return database if isinstance(doc, dict) and ("folder" in doc or "workspace" in doc) else None
