"""What a store file's neighbours, schema and mount may do to it: a stray ``-wal``, foreign triggers.

Two hostile states of a SQLite store that SQLite itself acts on without asking (lowest layer;
imports nothing of hermes_store, so :mod:`hermes_store.db` can use it):

- **A write-ahead log of another database** beside the store (a ``hermes_store.db`` copied over
  an older one whose ``-wal`` stayed, or a planted file). SQLite replays any well-formed WAL
  into the file it finds it next to: the store then reads as the other database, and the
  checkpoint that closing a connection runs writes that into the store file for good (a
  258 KB store became the other program's 106 KB file). :func:`stray_wal` tells that case
  apart by the schema version in the main file's own header.
- **Triggers that are not ours** (another program's, or a hostile edit): every write of
  hermes_store fires them, so an ``AFTER INSERT ON messages`` trigger deleting the facts lost
  them on the next ``sessions index``. :func:`foreign_triggers` names them, against the
  triggers the migrations create.

Also the file-level reads :mod:`hermes_store.db` re-exports: :func:`foreign_objects` (another
program's file named as the store) and :func:`read_only_connection` (``immutable=1`` on a
read-only mount, where a WAL-mode file cannot be opened ``mode=ro``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

import apsw

_HEADER = b"SQLite format 3\x00"
_USER_VERSION_AT = 60  # the 4-byte big-endian "user version" of the database header


def header_user_version(path: str | os.PathLike[str]) -> int | None:
    """The schema version (``PRAGMA user_version``) written in the main file's own header,
    whatever its ``-wal`` says; None when the file is not a SQLite database."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_USER_VERSION_AT + 4)
    except OSError:
        return None
    if len(head) < _USER_VERSION_AT + 4 or not head.startswith(_HEADER):
        return None
    return int.from_bytes(head[_USER_VERSION_AT:_USER_VERSION_AT + 4], "big")


def stray_wal(path: str | os.PathLike[str], seen_version: int) -> str | None:
    """A sentence naming ``path``'s ``-wal`` file when it is another database's: the main file's
    header says it is a store (schema version > 0) while SQLite, reading it with that log,
    saw ``seen_version`` (0: another program's tables). None otherwise."""
    wal = Path(f"{path}-wal")
    own = header_user_version(path)
    if not own or seen_version == own or not wal.exists():
        return None
    return (f"its write-ahead log {wal} belongs to another database (with it the file reads as that "
            f"database; without it, a hermes_store store of schema version {own}): move {wal} and "
            f"{path}-shm away, then run the command again")


def close_unchanged(conn: apsw.Connection) -> None:
    """Close ``conn`` without the checkpoint SQLite runs when the last connection to a WAL
    database closes: a refused file (another program's, or a store read through another
    database's ``-wal``) keeps its main file exactly as it was."""
    try:
        conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    except apsw.Error:
        pass
    conn.close()


@functools.lru_cache(maxsize=8)
def reference_triggers(scripts: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    """``(name, normalised SQL)`` of every trigger the migration ``scripts`` create, applied in
    order to a fresh in-memory database."""
    conn = apsw.Connection(":memory:")
    try:
        for script in scripts:
            conn.execute(script)
        rows = conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger'").fetchall()
    finally:
        conn.close()
    return frozenset((str(name), " ".join(str(sql).split())) for name, sql in rows)


def foreign_triggers(conn: apsw.Connection, scripts: Sequence[str]) -> list[str]:
    """The triggers of ``conn``'s database that the migration ``scripts`` (those up to its
    schema version) do not create as they are: another program's, or one of ours redefined."""
    ours = reference_triggers(tuple(scripts))
    rows = conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name").fetchall()
    return [str(name) for name, sql in rows if (str(name), " ".join(str(sql or "").split())) not in ours]


def foreign_objects(conn: apsw.Connection) -> list[str]:
    """Up to four table or view names of a database that has no hermes_store schema version
    (``PRAGMA user_version`` 0) but tables of its own: another program's file. Empty for a
    hermes_store database and for an empty file."""
    # one statement, so one snapshot: read apart, a store another process was creating could
    # show version 0 and then its new tables (committed in between), and look foreign
    rows = list(conn.execute(
        "SELECT v.user_version, m.name FROM pragma_user_version AS v LEFT JOIN (SELECT name FROM sqlite_master"
        " WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 4) AS m"))
    if not rows or int(rows[0][0] or 0):
        return []
    return [str(row[1]) for row in rows if row[1] is not None]


def on_read_only_filesystem(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` lies on a filesystem mounted read-only (nothing can write it there)."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def read_only_connection(path: str | os.PathLike[str], vfs: str | None = None, *,
                         traceless: bool = False) -> apsw.Connection:
    """An APSW connection that reads the existing file ``path`` and never writes to it. On a
    read-only mount the file is opened ``immutable=1``: no process can change it there, and a
    WAL-mode store cannot be opened ``mode=ro`` without a ``-shm`` file it could create
    ("unable to open database file": every read of a store on a read-only mount failed).
    ``traceless``: a WAL-mode file without its ``-wal`` (no writer has it open) is read
    ``immutable=1`` too, so the read leaves no ``-wal``/``-shm`` beside it (for a short read: a
    writer starting meanwhile is seen by the next connection; see ``db.Database``)."""
    immutable = on_read_only_filesystem(path) or (
        traceless and wal_mode_header(path) and not os.path.exists(f"{path}-wal"))
    mode = "mode=ro&immutable=1" if immutable else "mode=ro"
    uri = "file:" + uri_path(Path(path)) + "?" + mode
    return apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI, vfs=vfs)


def wal_mode_header(path: str | os.PathLike[str]) -> bool:
    """True when the SQLite file's header says WAL mode (bytes 18 and 19 are 2)."""
    try:
        with open(path, "rb", buffering=0) as handle:
            head = handle.read(20)
    except OSError:
        return False
    return len(head) == 20 and head[18] == 2 and head[19] == 2


def uri_path(path: Path) -> str:
    """``path`` (made absolute, symlinks resolved) for a ``file:`` URI: the characters a SQLite URI
    path cannot hold literally percent-encoded. Every URI opener of a SQLite file uses it."""
    text = str(path.resolve())
    for char, code in (("%", "%25"), ("?", "%3f"), ("#", "%23")):
        text = text.replace(char, code)
    return text
