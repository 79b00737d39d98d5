"""The per-store redaction key, kept in ``store_meta`` (both engines: the same SQL).

The key is created on first use (32 random bytes, hex) with ``ON CONFLICT DO NOTHING`` and
read back, so two processes racing on a new store agree on one key. A store that cannot be
written (a read-only reader) gets a key for this process only: it stores nothing anyway.
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Callable
from typing import Any

from hermes_store.tokens import cjk_projection, fact_projection, message_projection

KEY_NAME = "redaction_key"


def store_key(db: Any) -> tuple[bytes, bool]:
    """This store's redaction key (created when missing) and whether it is the stored one.

    A store that refuses the write (read-only file or directory, read-only reader) gets a
    key for this call only (False): whatever it would redact it cannot store either, and the
    next call tries again.
    """
    sql = db.portable
    row = sql.query_one("SELECT value FROM store_meta WHERE key = ?", (KEY_NAME,))
    if row is None and not getattr(db, "readonly", False):
        try:
            sql.execute("INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                        (KEY_NAME, secrets.token_hex(32)))
        except Exception:  # the engine's read-only / busy error: nothing can be stored now
            return secrets.token_bytes(32), False
        row = sql.query_one("SELECT value FROM store_meta WHERE key = ?", (KEY_NAME,))
    if row is None:
        return secrets.token_bytes(32), False
    return bytes.fromhex(row["value"]), True


# Every stored text column a secret could sit in: (table, key columns, text columns). FTS/GIN
# indexes are rebuilt from these rows; the CJK projection columns are made again (PROJECTIONS).
TEXT_COLUMNS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("sessions", ("id",), ("title", "workspace", "model", "source", "meta")),
    ("messages", ("id",), ("content", "tool_calls", "calls", "search_text")),
    ("facts", ("fact_id",), ("content", "category", "tags")),
    ("memory_history", ("id",), ("old_text", "new_text")),
    ("memory_entries", ("target", "text"), ("text",)),
    ("builtin_index_entries", ("id",), ("content",)),
)
CHUNK = 2000
# columns the session index derives from content and tool_calls when a message is written (the
# calls' words, the text without agent boilerplate): rewritten with them, secrets not counted twice
DERIVED = frozenset({"calls", "search_text"})
# How a rewritten row's derived columns are made again: table -> (the columns they are made of,
# a function of those (new values) giving ``{column: value}``). The ``cjk`` projection keeps the
# Latin part glued to CJK text (``密钥sk-proj-…``), so it is made again from the new text; a caller
# may add more (``hermes-store redact``: a message's call text, from its redacted tool calls).
Deriver = tuple[tuple[str, ...], Callable[[dict[str, Any]], dict[str, Any]]]
PROJECTIONS: dict[str, Deriver] = {
    "messages": (("role", "content"), lambda row: {"cjk": message_projection(str(row["role"]), row["content"] or "")}),
    "facts": (("content", "tags"), lambda row: {"cjk": fact_projection(row["content"] or "", row["tags"] or "")}),
    "builtin_index_entries": (("content",), lambda row: {"cjk": cjk_projection(row["content"])}),
}
# columns holding a JSON document: each string in it is redacted, so the document stays valid
JSON_COLUMNS = frozenset({"meta"})


def _redact_json_text(text: str | None, redact_counted: Any) -> tuple[str | None, Counter[str]]:
    """A JSON column's text with every string value redacted (``redact_counted`` of the store)."""
    total: Counter[str] = Counter()
    if not text:
        return text, total
    try:
        document = json.loads(text)
    except ValueError:  # not JSON after all: redacted as text
        return redact_counted(text)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            new, found = redact_counted(value)
            total.update(found)
            return new
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    try:
        cleaned = walk(document)
    except RecursionError:  # nested beyond Python's stack: redacted as text
        return redact_counted(text)
    return (text, total) if not total else (json.dumps(cleaned, ensure_ascii=False), total)


def _has_column(db: Any, table: str, column: str) -> bool:
    """True when ``table`` has ``column`` (a store migrated before the column existed has not)."""
    try:
        db.portable.query(f"SELECT {column} FROM {table} LIMIT 0")
    except Exception:  # noqa: BLE001 - the engine's "no such column" error, whichever engine
        return False
    return True


def _rows(sql: Any, table: str, keys: tuple[str, ...], columns: tuple[str, ...]) -> Any:
    """The table's rows in key order, read ``CHUNK`` at a time (single-key tables) or at once."""
    wanted = ", ".join(dict.fromkeys((*keys, *columns)))
    if len(keys) > 1:
        yield from sql.query(f"SELECT {wanted} FROM {table}")
        return
    key = keys[0]
    last: Any = None
    while True:
        if last is None:
            chunk = sql.query(f"SELECT {wanted} FROM {table} ORDER BY {key} LIMIT {CHUNK}")
        else:
            chunk = sql.query(f"SELECT {wanted} FROM {table} WHERE {key} > ? ORDER BY {key} LIMIT {CHUNK}",
                              (last,))
        if not chunk:
            return
        yield from chunk
        last = chunk[-1][key]


def rewrite_texts(db: Any, redact_counted: Any, *, dry_run: bool,
                  changed_keys: dict[str, list[tuple[Any, ...]]] | None = None,
                  derive: dict[str, Deriver] | None = None) -> dict[str, dict[str, int]]:
    """Redact every stored text column in place (in one transaction per table).

    ``redact_counted(text) -> (text, Counter)`` is the store's redactor. Returns, per table,
    the rows changed and the secrets found per kind; ``changed_keys``, when given, receives per
    table the keys of the rows changed (what was derived from them elsewhere, such as a
    message's embedding, must go too). ``dry_run`` changes nothing. On SQLite the
    connection deletes with ``secure_delete`` on, so the old text is overwritten with zeros in
    the pages it leaves (see :func:`purge_free_space` for the WAL and the free pages).
    A changed row's derived columns are made again from its new values (:data:`PROJECTIONS`,
    and ``derive`` per table, which replaces the table's entry there).
    """
    report: dict[str, dict[str, int]] = {}
    sql = db.portable
    if not dry_run:
        secure_deletes(db)
    for table, keys, columns in TEXT_COLUMNS:
        if not db.table_exists(table):
            continue
        counts: dict[str, int] = {}
        changes: list[tuple[Any, ...]] = []
        present = [c for c in columns if c not in DERIVED or _has_column(db, table, c)]
        columns = tuple(present)
        projection = (derive or {}).get(table) or (PROJECTIONS.get(table) if _has_column(db, table, "cjk") else None)
        inputs = projection[0] if projection else ()
        made_columns: tuple[str, ...] = ()
        for row in _rows(sql, table, keys, (*columns, *inputs)):
            new_values = []
            changed = False
            for column in columns:
                new, found = (_redact_json_text(row[column], redact_counted) if column in JSON_COLUMNS
                              else redact_counted(row[column]))
                if column not in DERIVED:  # a derived copy holds the same secrets: counted once
                    for kind, n in found.items():
                        counts[kind] = counts.get(kind, 0) + n
                changed = changed or new != row[column]
                new_values.append(new)
            if changed:
                if projection is not None:  # derived again from the new values, overriding theirs
                    values = dict(zip(columns, new_values, strict=True))
                    made = projection[1]({c: row[c] for c in inputs} | values)
                    made_columns = tuple(c for c in made if c not in columns)
                    values.update(made)
                    new_values = [values[c] for c in (*columns, *made_columns)]
                changes.append((*new_values, *(row[k] for k in keys)))
        columns = (*columns, *made_columns)
        report[table] = {"rows": len(changes), **counts}
        if changed_keys is not None and changes:
            changed_keys[table] = [change[len(columns):] for change in changes]
        if dry_run or not changes:
            continue
        assignments = ", ".join(f"{c} = ?" for c in columns)
        where = " AND ".join(f"{k} = ?" for k in keys)
        with _transaction(db):
            for start in range(0, len(changes), CHUNK):
                sql.executemany(f"UPDATE {table} SET {assignments} WHERE {where}", changes[start:start + CHUNK])
    return report


def _sqlite_secure_deletes(db: Any) -> None:
    db.execute("PRAGMA secure_delete=ON")


def _sqlite_purge(db: Any, tables: list[str]) -> None:
    db.execute("PRAGMA secure_delete=ON")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _pg_purge(db: Any, tables: list[str]) -> None:
    for table in tables:
        db.execute(f"VACUUM (FULL, ANALYZE) {table}")


# engine name -> (turn secure deletes on, purge the free space); an engine without an entry
# needs neither
_SCRUBBERS: dict[str, tuple[Any, Any]] = {
    "sqlite": (_sqlite_secure_deletes, _sqlite_purge),
    "postgresql": (lambda db: None, _pg_purge),
}


def secure_deletes(db: Any) -> None:
    """From now on this SQLite connection overwrites deleted content with zeros (PostgreSQL:
    nothing to set; its dead rows go with VACUUM FULL in :func:`purge_free_space`)."""
    _SCRUBBERS.get(db.engine, (lambda db: None, None))[0](db)


def _transaction(db: Any) -> Any:
    return db.write()


def purge_free_space(db: Any, tables: list[str]) -> None:
    """Leave no copy of rewritten text behind: SQLite checkpoints and truncates the WAL, then
    VACUUMs (free pages dropped); PostgreSQL rewrites the changed ``tables`` (VACUUM FULL)."""
    purge = _SCRUBBERS.get(db.engine, (None, None))[1]
    if purge is not None:
        purge(db, tables)
