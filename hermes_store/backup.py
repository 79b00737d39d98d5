"""Consistent copies of the store while it is in use: ``backup`` and ``restore`` (lowest layer).

``backup`` uses SQLite's online backup API from a read transaction, so the copy is one
consistent snapshot even while other processes write (WAL readers never block writers);
the copy is checked (``quick_check``), switched to a single-file DELETE journal, stamped with
the time it was taken, fsynced and moved into place atomically, mode 0600.

``restore`` checks the backup the same way, refuses a backup whose schema is not exactly the
one the migrations build (an extra trigger or view, a view in place of a table:
:func:`hermes_store.dbhealth.schema_mismatches`), refuses a store that changed after the backup
was taken (or has a newer schema) unless forced, keeps the current database beside it
(``hermes_store.db.before-restore-<stamp>``) and copies the backup into the live database
with the backup API (other connections see the restored content; nothing is half-written).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import apsw

from hermes_store.db import Database, DatabaseError, latest_schema_version
from hermes_store.dbhealth import schema_mismatches

BACKUP_STAMP_KEY = "backup_taken_at"


class BackupError(DatabaseError):
    """A backup or restore that cannot be done (message names the file)."""


def _copy(source: apsw.Connection, target: apsw.Connection) -> None:
    with target.backup("main", source, "main") as job:
        job.step(-1)  # all pages in one step: one read transaction, one consistent snapshot


def _check(conn: apsw.Connection, path: Path) -> None:
    try:
        result = [row[0] for row in conn.execute("PRAGMA quick_check")]
    except apsw.Error as exc:
        raise BackupError(f"{path}: not a readable SQLite database: {exc}") from exc
    if result != ["ok"]:
        raise BackupError(f"{path}: damaged ({'; '.join(map(str, result[:3]))})")


def backup(db_path: Path, dest: str | os.PathLike[str]) -> dict[str, Any]:
    """Copy the database at ``db_path`` to ``dest`` (a file, or a directory to put a stamped file in)."""
    db_path = Path(db_path)
    if not db_path.exists():
        raise BackupError(f"{db_path}: no database to back up")
    dest = Path(dest)
    stamp = time.time()
    if dest.is_dir():
        dest = dest / f"hermes_store-{time.strftime('%Y%m%d-%H%M%S', time.gmtime(stamp))}.db"
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    source = Database(db_path, readonly=True)
    try:
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        target = apsw.Connection(str(tmp))
        try:
            _copy(source.conn, target)
            target.execute("PRAGMA journal_mode=DELETE")
            _check(target, tmp)
            if target.execute("SELECT 1 FROM sqlite_schema WHERE name='store_meta'").fetchone():
                target.execute("INSERT OR REPLACE INTO store_meta(key, value) VALUES (?, ?)",
                               (BACKUP_STAMP_KEY, repr(stamp)))
            version = target.execute("PRAGMA user_version").fetchone()[0]
            pages = target.execute("PRAGMA page_count").fetchone()[0]
        finally:
            target.close()
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
    except OSError as exc:
        raise BackupError(f"{dest}: cannot write the backup: {exc.strerror or exc}") from exc
    finally:
        source.close()
        tmp.unlink(missing_ok=True)
    return {"backup": str(dest), "bytes": dest.stat().st_size, "pages": pages, "schema_version": version,
            "taken_at": stamp}


def _last_change(db_path: Path) -> float:
    stamps = [os.path.getmtime(p) for p in (db_path, Path(f"{db_path}-wal")) if p.exists()]
    return max(stamps, default=0.0)


def restore(db_path: Path, source: str | os.PathLike[str], *, force: bool = False) -> dict[str, Any]:
    """Replace the database at ``db_path`` by the backup ``source`` (see the module docstring)."""
    db_path, source = Path(db_path), Path(source)
    if not source.is_file():
        raise BackupError(f"{source}: no such backup file")
    with open(source, "rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            raise BackupError(f"{source}: not a SQLite database")
    backup_db = Database(source, readonly=True)
    try:
        _check(backup_db.conn, source)
        version = backup_db.user_version
        if version > latest_schema_version():
            raise BackupError(f"{source}: schema version {version} is newer than this hermes_store "
                              f"({latest_schema_version()}); upgrade hermes_store first")
        foreign = schema_mismatches(backup_db)  # only a store whose schema is exactly ours
        if foreign:
            raise BackupError(f"{source}: refusing to restore it: "
                              + "; ".join(m.message for m in foreign[:5])
                              + (f" (and {len(foreign) - 5} more)" if len(foreign) > 5 else ""))
        taken = backup_db.scalar("SELECT value FROM store_meta WHERE key=?", (BACKUP_STAMP_KEY,)) \
            if backup_db.table_exists("store_meta") else None
        taken_at = float(taken) if taken else os.path.getmtime(source)
        kept = None
        if db_path.exists():
            live = Database(db_path, migrate=False)
            try:
                problems = []
                if live.user_version > version:
                    problems.append(f"its schema (version {live.user_version}) is newer than the backup's ({version})")
                if _last_change(db_path) > taken_at:
                    problems.append("it changed after the backup was taken")
                if problems and not force:
                    raise BackupError(f"{db_path}: refusing to overwrite it: {' and '.join(problems)} "
                                      "(pass --force to restore anyway)")
                kept = db_path.with_name(f"{db_path.name}.before-restore-{time.strftime('%Y%m%d-%H%M%S')}")
                fd = os.open(kept, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
                os.close(fd)
                side = apsw.Connection(str(kept))
                try:
                    _copy(live.conn, side)
                    side.execute("PRAGMA journal_mode=DELETE")
                finally:
                    side.close()
                _copy(backup_db.conn, live.conn)
            finally:
                live.close()
        else:
            db_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(db_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
            target = apsw.Connection(str(db_path))
            try:
                _copy(backup_db.conn, target)
            finally:
                target.close()
    finally:
        backup_db.close()
    Database(db_path).close()  # re-applies pragmas and migrates an older backup forward
    return {"restored": str(source), "database": str(db_path), "previous_kept_as": str(kept) if kept else None,
            "schema_version": version, "backup_taken_at": taken_at}
