"""Triggers and rules a PostgreSQL store may hold: only those its migrations create.

Every write of hermes_store fires the triggers and rules of the tables it writes, so a trigger or
rule that another program (or a hostile edit) added to the store's schema, or a trigger function
of ours whose body was replaced, runs with each write: an ``AFTER INSERT ON messages`` trigger
whose function deletes the facts emptied them on the next ``sessions index``. The opener calls
:func:`foreign_triggers` inside its migration transaction; the expected set is read from the
migration scripts themselves (trigger name, table and function; the function's body exactly as
written between its dollar quotes, which is what ``pg_proc.prosrc`` keeps), so the check costs
two catalogue reads and no scratch schema (``doctor`` compares everything else).

Lowest layer; imports nothing of hermes_store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_TRIGGER = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?TRIGGER\s+(\w+)\s.*?\sON\s+(\w+)\s.*?"
                      r"EXECUTE\s+(?:FUNCTION|PROCEDURE)\s+(\w+)\s*\(", re.IGNORECASE | re.DOTALL)
_DROP = re.compile(r"DROP\s+TRIGGER\s+(?:IF\s+EXISTS\s+)?(\w+)\s+ON\s+(\w+)", re.IGNORECASE)
_FUNCTION = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(\w+)\s*\([^)]*\)[^$]*?AS\s+(\$\w*\$)(.*?)\2",
                       re.IGNORECASE | re.DOTALL)
_ACTUAL = ("SELECT t.tgname AS name, c.relname AS tbl, p.proname AS fn, p.prosrc AS body FROM pg_trigger t"
           " JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid"
           " WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace ORDER BY t.tgname")
_RULES = ("SELECT rulename AS name, tablename AS tbl FROM pg_rules WHERE schemaname = current_schema()"
          " ORDER BY rulename")


def expected_triggers(scripts: Sequence[str]) -> dict[tuple[str, str], tuple[str, str | None]]:
    """``(trigger, table) -> (function, its body)`` as the migration ``scripts``, applied in
    order, leave them."""
    triggers: dict[tuple[str, str], str] = {}
    bodies: dict[str, str] = {}
    for script in scripts:
        events = [(m.start(), "create", m) for m in _TRIGGER.finditer(script)]
        events += [(m.start(), "drop", m) for m in _DROP.finditer(script)]
        events += [(m.start(), "function", m) for m in _FUNCTION.finditer(script)]
        for _, kind, match in sorted(events, key=lambda item: item[0]):
            if kind == "create":
                triggers[(match.group(1).lower(), match.group(2).lower())] = match.group(3).lower()
            elif kind == "drop":
                triggers.pop((match.group(1).lower(), match.group(2).lower()), None)
            else:
                bodies[match.group(1).lower()] = match.group(3)
    return {key: (function, bodies.get(function)) for key, function in triggers.items()}


def _same_body(actual: str | None, expected: str | None) -> bool:
    return " ".join((actual or "").split()) == " ".join((expected or "").split())


def foreign_triggers(conn: Any, scripts: Sequence[str]) -> list[str]:
    """What in the current schema of ``conn`` (a psycopg connection with dict rows) the
    migration ``scripts`` do not create: triggers (or ours with another function or body) and
    rules, each in words naming it."""
    expected = expected_triggers(scripts)
    found: list[str] = []
    for row in conn.execute(_ACTUAL).fetchall():
        want = expected.get((str(row["name"]).lower(), str(row["tbl"]).lower()))
        if want is None:
            found.append(f"trigger {row['name']} on {row['tbl']} is not part of the hermes_store schema")
        elif want[0] != str(row["fn"]).lower() or not _same_body(row["body"], want[1]):
            found.append(f"trigger {row['name']} on {row['tbl']} differs from the hermes_store schema "
                         f"(function {row['fn']}() was changed)")
    found += [f"rule {row['name']} on {row['tbl']} is not part of the hermes_store schema"
              for row in conn.execute(_RULES).fetchall()]
    return found


_SCHEMA_HINT = "(create it first: CREATE SCHEMA name; or name an existing one)"


def missing_schema(conn: Any) -> str | None:
    """Why the store cannot be created on ``conn`` (a psycopg connection with dict rows): no
    schema of its ``search_path`` exists (``options=-csearch_path=NAME`` mistyped, or the schema
    not created yet), so the server has nowhere to put the tables; None when one does."""
    row = conn.execute("SELECT current_schema() AS s, current_setting('search_path') AS p").fetchone()
    if row["s"] is not None:
        return None
    return f"no schema of its search_path ({row['p']}) exists, so the store has nowhere to go " + _SCHEMA_HINT
