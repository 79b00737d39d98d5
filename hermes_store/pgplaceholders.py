"""SQL written with SQLite's ``?`` placeholders, in psycopg's ``%s`` style (lowest layer).

Storage code shared by both engines is written once, with ``?`` placeholders; on PostgreSQL
:class:`hermes_store.pgdb.PortableSql` runs it through :func:`qmark_to_pyformat`. Only the
placeholders and literal ``%`` signs change: no value ever enters the text.
"""

from __future__ import annotations

import re
from functools import lru_cache

_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$")


def _quoted_end(sql: str, start: int, quote_char: str, backslash: bool) -> int:
    """Index just past the literal/identifier opened at ``start`` (doubled quotes stay inside)."""
    i = start + 1
    while i < len(sql):
        char = sql[i]
        if backslash and char == "\\":
            i += 2
            continue
        if char == quote_char:
            if i + 1 < len(sql) and sql[i + 1] == quote_char:
                i += 2
                continue
            return i + 1
        i += 1
    return len(sql)  # unterminated: the server names the error; nothing here is a placeholder


@lru_cache(maxsize=1024)
def qmark_to_pyformat(sql: str) -> str:
    """``sql`` written with ``?`` placeholders (SQLite's style) in psycopg's ``%s`` style.

    Every ``?`` outside string literals, quoted identifiers, dollar-quoted strings and
    comments becomes ``%s``; every literal ``%`` (a LIKE pattern, a format string, a
    modulo) becomes ``%%`` wherever it stands, as psycopg reads ``%`` everywhere once
    parameters are bound. A ``?`` inside a literal or comment is left as it is.
    """
    out: list[str] = []
    i, length = 0, len(sql)
    while i < length:
        char = sql[i]
        end = i + 1
        if char == "'":
            escaped = i > 0 and sql[i - 1] in "eE" and (i < 2 or not (sql[i - 2].isalnum() or sql[i - 2] == "_"))
            end = _quoted_end(sql, i, "'", escaped)
        elif char == '"':
            end = _quoted_end(sql, i, '"', False)
        elif char == "-" and sql.startswith("--", i):
            newline = sql.find("\n", i)
            end = length if newline < 0 else newline
        elif char == "/" and sql.startswith("/*", i):
            close = sql.find("*/", i + 2)
            end = length if close < 0 else close + 2
        elif char == "$" and (tag := _DOLLAR_TAG.match(sql, i)) and not (i > 0 and (sql[i - 1].isalnum()
                                                                                 or sql[i - 1] == "_")):
            close = sql.find(tag.group(0), tag.end())
            end = length if close < 0 else close + len(tag.group(0))
        elif char == "?":
            out.append("%s")
            i += 1
            continue
        out.append(sql[i:end].replace("%", "%%"))
        i = end
    return "".join(out)
