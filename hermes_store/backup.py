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

import contextlib
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from hermes_store.db import Database, DatabaseError, foreign_objects, latest_schema_version
from hermes_store.dbcopy import store_fingerprint
from hermes_store.dbhealth import schema_mismatches

if TYPE_CHECKING:
    from hermes_store.home import Home
    from hermes_store.pgdb import PgDatabase

BACKUP_STAMP_KEY = "backup_taken_at"
FINGERPRINT_KEY = "backup_fingerprint"  # a PostgreSQL store's rows per table when it was backed up


class BackupError(DatabaseError):
    """A backup or restore that cannot be done (message names the file)."""



def _fresh_copy_name(db_path: Path) -> Path:
    """A new, private, empty ``<db>.before-restore-<stamp>`` file (``-2``, ``-3`` ... when a
    restore in the same second already took the name): created with O_EXCL, never reused."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1, 1000):
        kept = db_path.with_name(f"{db_path.name}.before-restore-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            fd = os.open(kept, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            continue
        os.close(fd)
        return kept
    raise BackupError(f"{db_path}: 999 copies named before-restore-{stamp} exist already")

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


def _destination(dest: str | os.PathLike[str], stamp: float) -> Path:
    """The backup file for ``dest``: the file itself, or a time-stamped file in a directory."""
    path = Path(dest)
    if path.is_dir():
        path = path / f"hermes_store-{time.strftime('%Y%m%d-%H%M%S', time.gmtime(stamp))}.db"
    elif not path.parent.is_dir():  # on every engine alike (PostgreSQL's used to create it)
        raise BackupError(f"{path}: cannot write the backup: no directory {path.parent}")
    return path


_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.tmp(?:-journal)?$")  # .<backup>.<pid>.tmp
_STAMPED_NAME = re.compile(r"^hermes_store-\d{8}-\d{6}\.db$")  # what a backup into a directory is named


def _running(pid: int) -> bool:
    """True while a process ``pid`` exists (one we may not signal counts)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


def _sweep_killed_temps(dest: Path) -> None:
    """Delete the temp copies (and their ``-journal``) that backups killed mid-copy left beside
    ``dest``: ``.<dest name>.<pid>.tmp`` or ``.hermes_store-<stamp>.db.<pid>.tmp`` of a process
    that is gone. A SIGKILL skips the ``finally`` that removes them, and each is a whole copy of
    the store (kept through every later ``forget`` and ``redact``). A live writer's is kept."""
    with contextlib.suppress(OSError):
        for candidate in dest.parent.glob(".*.tmp*"):
            match = _TEMP_NAME.match(candidate.name)
            if (match is None or not (match["name"] == dest.name or _STAMPED_NAME.match(match["name"]))
                    or _running(int(match["pid"]))):
                continue
            with contextlib.suppress(OSError):
                candidate.unlink()


def _refuse_the_store_itself(db_path: Path, dest: Path,
                              advice: str = "back up to another file or to a directory") -> None:
    """Refuse a backup file that is the store's own file or one of its -wal / -shm / -journal
    files: the copy renamed over it would replace the live store under every process holding
    it open (their later writes land in the replaced file, their WAL on the new one: lost
    writes, a malformed store)."""
    target = dest.resolve()
    for suffix in ("", "-wal", "-shm", "-journal"):
        live = db_path.with_name(db_path.name + suffix)
        same = live.resolve() == target
        if not same and live.exists() and dest.exists():
            try:
                same = os.path.samefile(live, dest)  # a hard link
            except OSError:
                same = False
        if same:
            what = "the store itself" if not suffix else f"the store itself (its {suffix[1:]} file)"
            raise BackupError(f"{dest}: that is {what}; {advice}")


def backup(db_path: Path, dest: str | os.PathLike[str]) -> dict[str, Any]:
    """Copy the database at ``db_path`` to ``dest`` (a file, or a directory to put a stamped file
    in; never the store's own file)."""
    db_path = Path(db_path)
    if not db_path.exists():
        raise BackupError(f"{db_path}: no database to back up")
    stamp = time.time()
    dest = _destination(dest, stamp)
    _refuse_the_store_itself(db_path, dest)
    _sweep_killed_temps(dest)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    source = Database(db_path, readonly=True)
    foreign = foreign_objects(source.conn)
    if foreign:  # another program's file named as the store: its copy is no backup of ours
        source.close()
        raise BackupError(f"{db_path}: not a hermes_store database (it holds {', '.join(foreign[:3])}"
                          f"{', ...' if len(foreign) > 3 else ''} and no hermes_store schema): nothing backed up")
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
    """When the database last changed: the file's or its -wal's mtime (an empty -wal, which a
    reader opening the file creates, holds no change)."""
    wal = Path(f"{db_path}-wal")
    stamps = [os.path.getmtime(p) for p in (db_path, wal) if p.exists() and (p == db_path or p.stat().st_size)]
    return max(stamps, default=0.0)


def _not_the_backups(source: Path) -> str:
    """Why a restore is refused over a store whose rows are not those of the backup ``source``:
    one wording for both engines (they compare the same rows per table)."""
    return (f"it holds rows that are not those of the backup {source} (it changed after the backup "
            "was taken, or is another store)")


def _refusal(target: object, problems: list[str]) -> BackupError:
    """The error refusing to restore over ``target`` (a path or a database's display URL)."""
    return BackupError(f"{target}: refusing to overwrite it: {' and '.join(problems)} "
                       "(pass --force to restore anyway)")


def restore(db_path: Path, source: str | os.PathLike[str], *, force: bool = False) -> dict[str, Any]:
    """Replace the database at ``db_path`` by the backup ``source`` (see the module docstring)."""
    db_path, source = Path(db_path), Path(source)
    _refuse_the_store_itself(db_path, source, "name a backup file to restore")  # else a no-op "restored"
    backup_db = _open_backup(source)
    try:
        version = backup_db.user_version
        taken = backup_db.scalar("SELECT value FROM store_meta WHERE key=?", (BACKUP_STAMP_KEY,)) \
            if backup_db.table_exists("store_meta") else None
        taken_at = float(taken) if taken else os.path.getmtime(source)
        kept = None
        if db_path.exists():
            changed = _last_change(db_path)  # before opening: an open may create a fresh -wal file
            live = Database(db_path, migrate=False)
            try:
                problems = []
                if live.user_version > version:
                    problems.append(f"its schema (version {live.user_version}) is newer than the backup's ({version})")
                if changed > taken_at and _fingerprint(live) != _fingerprint(backup_db):
                    problems.append(_not_the_backups(source))
                if problems and not force:
                    raise _refusal(db_path, problems)
                kept = _fresh_copy_name(db_path)
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


# --------------------------------------------------------------------------- PostgreSQL
# A PostgreSQL store is backed up as a SQLite store file: the shared tables and this home's
# memory rows read in one REPEATABLE READ snapshot (``dbcopy.postgres_to_sqlite``), so the
# copy holds every transaction committed before it began and none half. The file is written
# beside its destination, checked, fsynced and renamed into place. It restores into a
# PostgreSQL store (``dbcopy.sqlite_to_postgres``, one transaction, counts verified) or, as it
# is, into a SQLite home.


def _fingerprint(db: Database | PgDatabase, home: str | None = None) -> dict[str, list[int]]:
    """Rows and highest id per copied table of a store (of ``home``'s memory rows when given),
    the backup's own stamp and fingerprint left out: a restored store holds them, copied from
    the backup (counted, they made the same backup refused the second time). A store holding
    exactly a backup's rows, e.g. just restored from it, loses nothing to it, though its SQLite
    file is newer than the backup."""
    return store_fingerprint(db, home=home, meta_keys_left_out=(BACKUP_STAMP_KEY, FINGERPRINT_KEY))


def pg_backup(db: PgDatabase, dest: str | os.PathLike[str]) -> dict[str, Any]:
    """Back up the PostgreSQL store ``db`` into the SQLite file ``dest`` (see above)."""
    from hermes_store.dbcopy import postgres_to_sqlite

    stamp = time.time()  # before the snapshot: every write acknowledged before now is in it
    dest = _destination(dest, stamp)
    _sweep_killed_temps(dest)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        target = Database(tmp, wal=False)
    except DatabaseError as exc:
        raise BackupError(f"{dest}: cannot write the backup: {exc}") from exc
    try:
        try:
            with db.snapshot():
                report = postgres_to_sqlite(db, target, exact_schema=False)
                fingerprint = _fingerprint(db, db.writer)
            with target.write():
                for key, value in ((BACKUP_STAMP_KEY, repr(stamp)), (FINGERPRINT_KEY, json.dumps(fingerprint))):
                    target.execute("INSERT OR REPLACE INTO store_meta(key, value) VALUES (?, ?)", (key, value))
            _check(target.conn, tmp)
            version = target.user_version
        finally:
            target.close()
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
        _fsync_dir(dest.parent)
    except OSError as exc:
        raise BackupError(f"{dest}: cannot write the backup: {exc.strerror or exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return {"backup": str(dest), "bytes": dest.stat().st_size, "schema_version": version, "taken_at": stamp,
            "engine": db.engine, "tables": report.tables, "rows": sum(report.tables.values())}


def _fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _open_backup(source: Path) -> Database:
    """The backup file ``source`` opened read-only, after its header, quick_check, schema
    version and exact-schema checks (for a SQLite and a PostgreSQL restore alike)."""
    if not source.is_file():
        raise BackupError(f"{source}: no such backup file")
    with open(source, "rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            raise BackupError(f"{source}: not a SQLite database")
    backup_db = Database(source, readonly=True)
    try:
        _check(backup_db.conn, source)
        if backup_db.user_version > latest_schema_version():
            raise BackupError(f"{source}: schema version {backup_db.user_version} is newer than this "
                              f"hermes_store ({latest_schema_version()}); upgrade hermes_store first")
        foreign = schema_mismatches(backup_db)  # only a store whose schema is exactly ours
        if foreign:
            raise BackupError(f"{source}: refusing to restore it: "
                              + "; ".join(m.message for m in foreign[:5])
                              + (f" (and {len(foreign) - 5} more)" if len(foreign) > 5 else ""))
    except BaseException:
        backup_db.close()
        raise
    return backup_db


def pg_restore(db: PgDatabase, source: str | os.PathLike[str], *, force: bool = False) -> dict[str, Any]:
    """Replace the PostgreSQL store ``db``'s rows by the backup ``source`` (one transaction).

    Into a store holding no rows it always goes; a store holding rows is replaced only when it
    is unchanged since that backup (same rows and ids per table as the backup recorded) or with
    ``force``. The append-only memory history keeps its rows and gains the backup's missing ones.
    """
    from hermes_store.dbcopy import sqlite_to_postgres

    source = Path(source)
    backup_db = _open_backup(source)
    try:
        taken = _meta(backup_db, BACKUP_STAMP_KEY)
        taken_at = float(taken) if taken else os.path.getmtime(source)
        recorded = _meta(backup_db, FINGERPRINT_KEY)
        current = _fingerprint(db, db.writer)
        holds_rows = any(rows for rows, _ in current.values())
        if holds_rows and not force:
            unchanged = recorded is not None and _same_rows(json.loads(recorded), current)
            if not unchanged:
                raise _refusal(db.display_url, [_not_the_backups(source)])
        report = sqlite_to_postgres(backup_db, db, replace=holds_rows)
        version = backup_db.user_version
    finally:
        backup_db.close()
    return {"restored": str(source), "database": db.display_url, "previous_kept_as": None,
            "schema_version": version, "backup_taken_at": taken_at, "engine": db.engine,
            "tables": report.tables, "rows": sum(report.tables.values())}


def _same_rows(recorded: dict[str, list[int]], current: dict[str, list[int]]) -> bool:
    """Whether a store's rows per table (:func:`_fingerprint`) are those a backup recorded; a
    table one side does not name (a backup taken before the table was copied) counts as empty."""
    empty = [0, 0]
    return all(list(recorded.get(table, empty)) == list(current.get(table, empty))
               for table in set(recorded) | set(current))


def _meta(db: Database, key: str) -> str | None:
    if not db.table_exists("store_meta"):
        return None
    value = db.scalar("SELECT value FROM store_meta WHERE key=?", (key,))
    return None if value is None else str(value)


def _sqlite_backup(home: Home, dest: str | os.PathLike[str]) -> dict[str, Any]:
    path = home.sqlite_path
    assert path is not None
    return {**backup(path, dest), "engine": "sqlite"}


def _sqlite_restore(home: Home, source: str | os.PathLike[str], force: bool) -> dict[str, Any]:
    path = home.sqlite_path
    assert path is not None
    home.prepare_store_directory()  # a URL's mistyped folder is refused, not made
    return {**restore(path, source, force=force), "engine": "sqlite"}


def _pg_backup(home: Home, dest: str | os.PathLike[str]) -> dict[str, Any]:
    db = home.open_existing_db()  # a database holding no store yet is not migrated into one here
    if db is None:
        raise BackupError(f"{home.store_location()}: no database to back up")
    with db:
        return pg_backup(db, dest)


def _pg_restore(home: Home, source: str | os.PathLike[str], force: bool) -> dict[str, Any]:
    _open_backup(Path(source)).close()  # a bad file is named before the server is touched
    with home.open_db() as db:
        return pg_restore(db, source, force=force)


# engine -> (backup, restore) of a home's store
ENGINE_BACKUPS: dict[str, tuple[Callable[..., dict[str, Any]], Callable[..., dict[str, Any]]]] = {
    "sqlite": (_sqlite_backup, _sqlite_restore),
    "postgresql": (_pg_backup, _pg_restore),
}


def _for_engine(home: Home) -> tuple[Callable[..., dict[str, Any]], Callable[..., dict[str, Any]]]:
    pair = ENGINE_BACKUPS.get(home.engine)
    if pair is None:
        raise BackupError(f"backup and restore are not available for a {home.engine} store "
                          f"({home.store_location()})")
    return pair


def backup_store(home: Home, dest: str | os.PathLike[str]) -> dict[str, Any]:
    """Back up ``home``'s store (on whichever engine :class:`Home` chose) to ``dest``."""
    return _for_engine(home)[0](home, dest)


def restore_store(home: Home, source: str | os.PathLike[str], *, force: bool = False) -> dict[str, Any]:
    """Restore ``home``'s store (on whichever engine :class:`Home` chose) from ``source``."""
    return _for_engine(home)[1](home, source, force)
