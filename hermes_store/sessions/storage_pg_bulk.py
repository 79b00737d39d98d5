"""Bulk loading into the PostgreSQL session index (:class:`PgBulkWriter`).

One transaction per loader batch: sources, sessions, then messages by ``COPY`` (rows already
stored are skipped through a temporary table). After a large load the GIN indexes' pending
lists are merged and the planner's statistics refreshed (:meth:`PgBulkWriter.settle`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from hermes_store.sessions.rows import decode_meta
from hermes_store.sessions.storage import (
    MESSAGE_ROW_FIELDS,
    MESSAGE_UPDATE_FIELDS,
    Batch,
    BulkWriter,
    full_rows,
)

if TYPE_CHECKING:
    from hermes_store.pgdb import PgDatabase

logger = logging.getLogger(__name__)

SETTLE_AFTER = 20_000  # messages of one bulk load after which the index is settled (see settle)
MESSAGE_TEXT_INDEXES = ("messages_tsv", "messages_pairs")  # GIN: words (pg 0001), phrase pairs (pg 0006)
_COPY_MESSAGES = f"COPY {{table}} ({', '.join(MESSAGE_ROW_FIELDS)}) FROM STDIN"
_UPDATE_BY_UID = (f"UPDATE messages SET {', '.join(f'{n} = %s' for n in MESSAGE_UPDATE_FIELDS)}"
                  " WHERE session_id = %s AND message_uid = %s")


class PgBulkWriter(BulkWriter):
    """Bulk-loader batches in one transaction each: sources, sessions, then messages by COPY."""

    def __init__(self, db: PgDatabase, *, pipeline: bool, on_commit: Callable[[int, int], None]) -> None:
        self.db = db
        self.on_commit = on_commit
        self.cpu_seconds = 0.0
        self.inserted = 0  # messages this writer committed
        self._pool = ThreadPoolExecutor(max_workers=1) if pipeline else None
        self._future: Future[None] | None = None

    def write(self, batch: Batch, *, wait: bool) -> None:
        self.wait()
        if self._pool is None:
            self._timed(self._write, batch)
            return
        self._future = self._pool.submit(self._timed, self._write, batch)
        if wait:
            self.wait()

    def forget_source(self, source_id: int) -> None:
        self.wait()
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE source_id = %s", (source_id,))
            conn.execute("UPDATE sources SET resume_at = NULL, content_hash = NULL, meta = '{}'"
                         " WHERE id = %s", (source_id,))

    def wait(self) -> None:
        future, self._future = self._future, None
        if future is not None:
            future.result()

    def close(self) -> None:
        failed = False
        try:
            if self._future is not None:
                try:
                    self._future.result()
                except BaseException:  # the caller already propagates the first error
                    failed = True
                self._future = None
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
        if not failed:
            self.settle()

    def settle(self) -> None:
        """After a bulk load of at least :data:`SETTLE_AFTER` messages (or a tenth of the
        table): merge the GIN index's pending list into the index and refresh the planner's
        statistics, so the next search neither scans a long unsorted pending list nor plans
        with the counts of an emptier table. A failure here loses nothing (the rows are
        committed; autovacuum does the same later) and is only logged."""
        if self.inserted < SETTLE_AFTER:
            estimate = float(self.db.scalar(
                "SELECT reltuples FROM pg_class WHERE oid = to_regclass('messages')") or -1)
            if self.inserted == 0 or self.inserted * 10 < estimate:
                return
        try:
            with self.db.connection() as conn:
                for name in MESSAGE_TEXT_INDEXES:
                    conn.execute("SELECT gin_clean_pending_list(to_regclass(%s))", (name,))
                conn.execute("ANALYZE messages, sessions")
        except Exception as exc:  # noqa: BLE001 - maintenance only, see the docstring
            logger.warning("after the bulk load: refreshing the search index statistics failed: %s", exc)

    def _timed(self, work: Callable[[Batch], None], batch: Batch) -> None:
        started = time.thread_time()
        try:
            work(batch)
        finally:
            self.cpu_seconds += time.thread_time() - started

    def _write(self, batch: Batch) -> None:
        with self.db.transaction() as conn:
            # a whole batch is one COPY: bounded by its own, longer limit (10 minutes)
            conn.execute("SET LOCAL statement_timeout = '600s'")
            for handle, _ in batch.sources:
                handle.source_id = int(conn.execute(
                    "INSERT INTO sources(path, format, imported_at) VALUES (%s, %s, %s)"
                    " ON CONFLICT (path) DO UPDATE SET format = excluded.format RETURNING id",
                    (handle.key, handle.format, time.time())).fetchone()["id"])
            for delta in batch.sessions:
                self._write_session(conn, delta)
            inserted = self._copy_messages(conn, full_rows(batch.rows)) if batch.rows else 0
            if batch.updates:  # edited in place under the same uid
                with conn.cursor() as cursor:
                    cursor.executemany(_UPDATE_BY_UID, batch.updates)
            for delta in batch.sessions:
                if delta.added:
                    conn.execute(
                        "UPDATE sessions SET message_count = message_count + %s,"
                        " started_at = coalesce(started_at, %s),"
                        " ended_at = CASE WHEN %s AND %s::float8 IS NOT NULL"
                        "   THEN greatest(coalesce(ended_at, %s), %s) ELSE ended_at END WHERE id = %s",
                        (delta.added, delta.min_ts, bool(delta.derive_end), delta.max_ts,
                         delta.max_ts, delta.max_ts, delta.session_id))
            for handle, progress in batch.sources:
                conn.execute(
                    "UPDATE sources SET size = %s, mtime = %s, content_hash = %s, resume_at = %s,"
                    " imported_at = %s, meta = %s WHERE id = %s",
                    (progress["size"], progress["mtime"], progress["content_hash"],
                     progress["resume_at"], time.time(), progress["meta"], handle.source_id))
        self.inserted += inserted
        self.on_commit(inserted, sum(1 for delta in batch.sessions if delta.is_new))

    @staticmethod
    def _write_session(conn: Any, delta: Any) -> None:
        fields = dict(delta.fields)
        meta = fields.pop("meta", None)
        owner = delta.owner
        if delta.is_new:
            conn.execute(
                "INSERT INTO sessions(id, origin_format, source, title, model, workspace, started_at,"
                " ended_at, parent_session_id, source_id, meta)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                (delta.session_id, owner.format, fields.get("source") or "cli", fields.get("title"),
                 fields.get("model"), fields.get("workspace"), fields.get("started_at"),
                 fields.get("ended_at"), fields.get("parent_session_id"), owner.source_id,
                 json.dumps(meta or {}, ensure_ascii=False)))
            return
        if delta.adopted:
            conn.execute("UPDATE sessions SET source_id = %s, origin_format = %s WHERE id = %s",
                         (owner.source_id, owner.format, delta.session_id))
        if fields:
            from psycopg import sql

            names = sorted(fields)
            statement = sql.SQL("UPDATE sessions SET {} WHERE id = %s").format(
                sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(n)) for n in names))
            conn.execute(statement, [fields[n] for n in names] + [delta.session_id])
        if meta:
            row = conn.execute("SELECT meta FROM sessions WHERE id = %s FOR UPDATE",
                               (delta.session_id,)).fetchone()
            stored = decode_meta(row["meta"] if row else None)
            stored.update(meta)
            conn.execute("UPDATE sessions SET meta = %s WHERE id = %s",
                         (json.dumps(stored, ensure_ascii=False), delta.session_id))

    @staticmethod
    def _copy_messages(conn: Any, rows: list[tuple[Any, ...]]) -> int:
        """COPY the rows straight in; rows already stored (same session and seq, or same session
        and message uid) are skipped."""
        import psycopg

        try:
            with conn.transaction(), conn.cursor() as cursor:  # a savepoint
                with cursor.copy(_COPY_MESSAGES.format(table="messages")) as copy:
                    for row in rows:
                        copy.write_row(row)
            return len(rows)
        except psycopg.errors.UniqueViolation:
            pass
        with conn.cursor() as cursor:
            cursor.execute(
                "CREATE TEMP TABLE IF NOT EXISTS hs_message_batch (ord bigserial, session_id text,"
                " seq integer, role text, content text, tool_name text, tool_calls text,"
                " tool_call_id text, timestamp double precision, cjk text, calls text, tools text,"
                " search_text text, message_uid text) ON COMMIT DELETE ROWS")
            with cursor.copy(_COPY_MESSAGES.format(table="hs_message_batch")) as copy:
                for row in rows:
                    copy.write_row(row)
            fields = ", ".join(MESSAGE_ROW_FIELDS)
            cursor.execute(f"INSERT INTO messages ({fields}) SELECT {fields} FROM hs_message_batch"
                           " ORDER BY ord ON CONFLICT DO NOTHING")
            return cursor.rowcount
