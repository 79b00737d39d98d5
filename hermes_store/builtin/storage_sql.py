"""Built-in memory's statements that are the same SQL on every engine (:class:`SqlBuiltinStorage`).

Both engines hold the same tables (``schema/0002_builtin.sql`` + ``0005_builtin_search.sql``
and ``schema/pg/0002``); on PostgreSQL every row also carries the ``home`` it belongs to
(MEMORY.md / USER.md are each home's own files), so a shared statement is written once over
the storage's *scope*: :attr:`SqlBuiltinStorage.scope_columns` (none on SQLite, ``home`` on
PostgreSQL) lead every key, every ``WHERE`` and every insert, bound to
:meth:`SqlBuiltinStorage.scope_values`. The statements run through ``db.portable`` (``?``
placeholders; on PostgreSQL translated by :class:`hermes_store.pgdb.PortableSql`, every value
bound). What really differs stays in :mod:`~hermes_store.builtin.storage_sqlite` and
:mod:`~hermes_store.builtin.storage_pg`: the entry search (FTS5 vs ``tsvector``), history id
assignment (``last_insert_rowid`` vs per-home numbering under an advisory lock), the bulk
load of the index rows and the write transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_store.builtin.storage import BuiltinStorage
from hermes_store.engines import PortableDatabase
from hermes_store.tokens import cjk_projection

HISTORY_COLUMNS = "id, target, action, old_text, new_text, at, origin, session_id, restored_from"
ENTRY_COLUMNS = (
    "text, created_at, updated_at, created_origin, created_session, updated_origin, updated_session"
)
INDEX_COLUMNS = ("target", "entry_index", "content", "cjk")


class SqlBuiltinStorage(BuiltinStorage):
    """:class:`BuiltinStorage` methods written once in SQL both engines run (see the module docstring).

    A subclass names its :attr:`scope_columns` (and returns their values from
    :meth:`scope_values`), its :attr:`history_columns`, and implements ``transaction``,
    ``append_history`` and ``search_index``.
    """

    scope_columns: tuple[str, ...] = ()  # columns that lead every key of this storage's rows
    history_columns = HISTORY_COLUMNS  # the history event's SELECT list

    @property
    def sql(self) -> PortableDatabase:
        """The database behind the engine-neutral calls (``?`` placeholders, ``query_in``)."""
        return self.db.portable

    def scope_values(self) -> tuple[Any, ...]:
        """The values of :attr:`scope_columns` for this storage's rows (none by default)."""
        return ()

    # ---- statement pieces (column names are constants chosen in code, never input)

    def _where(self, *columns: str) -> str:
        """``a = ? AND b = ?`` over the scope columns and ``columns``."""
        return " AND ".join(f"{c} = ?" for c in (*self.scope_columns, *columns))

    def _columns(self, *columns: str) -> str:
        """The scope columns and ``columns`` as a column list."""
        return ", ".join((*self.scope_columns, *columns))

    def _marks(self, *columns: str) -> str:
        """One ``?`` per scope column and per column of ``columns``."""
        return ", ".join("?" * (len(self.scope_columns) + len(columns)))

    def _key(self, *values: Any) -> tuple[Any, ...]:
        """The scope values followed by ``values`` (the bindings of a scoped statement)."""
        return (*self.scope_values(), *values)

    # ---- provenance

    def synced_hash(self, target: str) -> str | None:
        return self.sql.scalar(
            f"SELECT content_hash FROM memory_sync WHERE {self._where('target')}", self._key(target)
        )

    def set_synced_hash(self, target: str, digest: str, at: float) -> None:
        columns = ("target", "content_hash", "synced_at")
        self.sql.execute(
            f"INSERT INTO memory_sync({self._columns(*columns)}) VALUES ({self._marks(*columns)})"
            f" ON CONFLICT ({self._columns('target')}) DO UPDATE SET content_hash = excluded.content_hash,"
            " synced_at = excluded.synced_at",
            self._key(target, digest, at),
        )

    def entry_texts(self, target: str) -> list[str]:
        return [
            r["text"]
            for r in self.sql.query(
                f"SELECT text FROM memory_entries WHERE {self._where('target')} ORDER BY created_at, text",
                self._key(target),
            )
        ]

    def entry_exists(self, target: str, text: str) -> bool:
        return (
            self.sql.scalar(
                f"SELECT 1 FROM memory_entries WHERE {self._where('target', 'text')}",
                self._key(target, text),
            )
            is not None
        )

    def insert_entry(self, target: str, text: str, at: float, origin: str, session_id: str) -> None:
        columns = (
            "target",
            "text",
            "created_at",
            "updated_at",
            "created_origin",
            "created_session",
            "updated_origin",
            "updated_session",
        )
        self.sql.execute(
            f"INSERT INTO memory_entries({self._columns(*columns)}) VALUES ({self._marks(*columns)})"
            f" ON CONFLICT ({self._columns('target', 'text')}) DO NOTHING",
            self._key(target, text, at, at, origin, session_id, origin, session_id),
        )

    def delete_entry(self, target: str, text: str) -> None:
        self.sql.execute(
            f"DELETE FROM memory_entries WHERE {self._where('target', 'text')}",
            self._key(target, text),
        )

    def rename_entry(self, target: str, old: str, new: str) -> None:
        self.sql.execute(
            f"UPDATE memory_entries SET text = ? WHERE {self._where('target', 'text')}",
            (new, *self._key(target, old)),
        )

    def touch_entry(self, target: str, text: str, at: float, origin: str, session_id: str) -> None:
        self.sql.execute(
            "UPDATE memory_entries SET updated_at = ?, updated_origin = ?, updated_session = ?"
            f" WHERE {self._where('target', 'text')}",
            (at, origin, session_id, *self._key(target, text)),
        )

    def entry_rows(self, target: str) -> list[dict[str, Any]]:
        return self.sql.query(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE {self._where('target')}",
            self._key(target),
        )

    def history(self, target: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        columns = ("target",) if target is not None else ()
        where = self._where(*columns)
        sql = f"SELECT {self.history_columns} FROM memory_history"
        params: list[Any] = list(self._key(*(() if target is None else (target,))))
        if where:
            sql += f" WHERE {where}"
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return self.sql.query(sql, params)

    def history_event(self, event_id: int) -> dict[str, Any] | None:
        return self.sql.query_one(
            f"SELECT {self.history_columns} FROM memory_history WHERE {self._where('id')}",
            self._key(int(event_id)),
        )

    # ---- entry search index

    def indexed_hash(self, target: str) -> str | None:
        return self.sql.scalar(
            f"SELECT content_hash FROM builtin_index_files WHERE {self._where('target')}",
            self._key(target),
        )

    def replace_index(self, target: str, digest: str, entries: Sequence[str], at: float) -> None:
        with self.transaction():
            self.hold_index(target)
            self.sql.execute(
                f"DELETE FROM builtin_index_entries WHERE {self._where('target')}",
                self._key(target),
            )
            self.insert_index_rows(
                [
                    self._key(target, i, entry, cjk_projection(entry))
                    for i, entry in enumerate(entries, start=1)
                ]
            )
            columns = ("target", "content_hash", "refreshed_at")
            self.sql.execute(
                f"INSERT INTO builtin_index_files({self._columns(*columns)}) VALUES ({self._marks(*columns)})"
                f" ON CONFLICT ({self._columns('target')}) DO UPDATE SET content_hash = excluded.content_hash,"
                " refreshed_at = excluded.refreshed_at",
                self._key(target, digest, at),
            )

    def hold_index(self, target: str) -> None:
        """Inside ``replace_index``'s transaction, before its DELETE: keep any other writer of
        this scope's ``target`` index out until the transaction ends, so two processes
        refreshing it at once replace it one after the other. SQLite's write transaction holds
        the whole database already; an engine whose writers run side by side overrides this."""

    def insert_index_rows(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Add the index rows (scope values, then :data:`INDEX_COLUMNS`) inside ``replace_index``'s
        transaction; an engine with a faster bulk load overrides this."""
        self.sql.executemany(
            f"INSERT INTO builtin_index_entries({self._columns(*INDEX_COLUMNS)})"
            f" VALUES ({self._marks(*INDEX_COLUMNS)})",
            rows,
        )
