"""SQL text lives only in ``db.py``, ``schema/`` and the storage modules (``storage*.py``).

Every string literal in ``hermes_store`` (f-string constant parts included, docstrings
excluded) is scanned for SQL statements and clauses; a hit outside the allowed places fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import hermes_store

ROOT = Path(hermes_store.__file__).resolve().parent

# Files that may hold SQL besides db.py and storage*.py, each with its reason.
ALLOWED = {
    "db.py": "the one place that opens SQLite (pragmas, migrations, transactions)",
    "pgdb.py": "the PostgreSQL counterpart of db.py (connections, migrations, transactions)",
    "dbcopy.py": "copies every table between engines for `hermes-store migrate` (table-agnostic)",
    "dbhealth.py": "doctor: compares the schema, recreates missing objects, salvages rows (table-agnostic)",
    "backup.py": "online backup/restore of the whole file (stamps store_meta in the copy)",
    "sqlite_guard.py": "db.py's guards of the store file: its triggers against the migrations' (read only)",
    "pg_guard.py": "pgdb.py's guard: the store schema's triggers and rules against the migrations' (read only)",
}
# Readers of other programs' SQLite files (Hermes state.db and memory_store.db, Cursor, opencode,
# goose, crush, ...): they may hold read-only statements, never a write.
FOREIGN_READERS = ("sessions/importers/", "facts/hermes_import.py", "foreign_db.py")
WRITE_PATTERNS = [re.compile(p) for p in (
    r"\b(?:INSERT|REPLACE)\s+(?:OR\s+[A-Z]+\s+)?INTO\b",
    r"\bUPDATE\s+\w+\s+SET\b",
    r"\bDELETE\s+FROM\b",
    r"\b(?:CREATE|DROP|ALTER)\s+(?:TEMP\s+|TEMPORARY\s+|UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b",
    r"\bPRAGMA\s+(?!table_info\b)\w+",
    r"\bBEGIN\s+(?:IMMEDIATE|EXCLUSIVE)\b",
)]

SQL_PATTERNS = [re.compile(p) for p in (
    r"\bSELECT\b[\s\S]*\bFROM\b",
    r"\bSELECT\s+(?:DISTINCT\b|count\(|\d\b|\?)",
    r"\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b",
    r"\bREPLACE\s+INTO\b",
    r"\bUPDATE\s+\w+\s+SET\b",
    r"\bDELETE\s+FROM\b",
    r"\b(?:CREATE|DROP)\s+(?:TEMP\s+|TEMPORARY\s+|UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b",
    r"\bALTER\s+TABLE\b",
    r"\bPRAGMA\s+\w+",
    r"\bBEGIN\s+(?:IMMEDIATE|EXCLUSIVE|DEFERRED|TRANSACTION)\b",
    r"\bON\s+CONFLICT\b",
    r"\bWHERE\s+[\w.]+\s*(?:=|>=|<=|<|>|!=|\bIN\b|\bMATCH\b|\bIS\b)",
    r"\b(?:AND|OR)\s+[\w.]+\s*(?:=|>=|<=|<|>|!=)\s*\?",
    r"\bORDER\s+BY\s+[\w.(]+",
    r"\bJOIN\s+\w+(?:\s+\w+)?\s+ON\b",
)]


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def sql_literals(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every string literal in ``source`` that holds SQL (not docstrings)."""
    tree = ast.parse(source)
    docstrings = _docstring_nodes(tree)
    inside_fstring: set[int] = set()
    found = []
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.JoinedStr):
            parts = [v for v in node.values if isinstance(v, ast.Constant)]
            inside_fstring.update(id(v) for v in parts)
            text = "x".join(str(v.value) for v in parts)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings and id(node) not in inside_fstring):
            text = node.value
        if text and any(p.search(text) for p in SQL_PATTERNS):
            found.append((node.lineno, text))
    return sorted(found)


def allowed(relative: str) -> bool:
    """True for the files that may hold SQL."""
    return relative in ALLOWED or Path(relative).name.startswith("storage")


def misplaced_sql(root: Path = ROOT) -> list[str]:
    """``file:line: text`` for every SQL literal outside the allowed files (and every write
    statement in a reader of foreign files)."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if allowed(relative):
            continue
        literals = sql_literals(path.read_text(encoding="utf-8"))
        if relative.startswith(FOREIGN_READERS):
            literals = [(line, text) for line, text in literals if any(p.search(text) for p in WRITE_PATTERNS)]
        for line, text in literals:
            problems.append(f"{relative}:{line}: {' '.join(text.split())[:100]}")
    return problems


def test_no_sql_outside_db_schema_and_storage_modules() -> None:
    problems = misplaced_sql()
    assert not problems, "SQL outside the storage modules:\n" + "\n".join(problems)


def test_allow_lists_name_existing_files() -> None:
    for relative in [*ALLOWED, *(r for r in FOREIGN_READERS if r.endswith(".py"))]:
        assert (ROOT / relative).is_file(), f"{relative} no longer exists: drop it from the allow-list"


# ---- the scanner can fail ---------------------------------------------------------------------

def test_scanner_finds_statements_fragments_and_fstrings() -> None:
    source = '''"""Module docstring: SELECT x FROM y is fine here."""
def f(db, marks, cat):
    """PRAGMA integrity_check in a docstring is prose."""
    db.query(f"SELECT fact_id FROM facts WHERE fact_id IN ({marks})")
    sql = " AND category = ?"
    db.execute("DELETE FROM facts WHERE fact_id = ?", (1,))
    db.scalar("PRAGMA data_version")
    return "Select what you need from the menu"
'''
    lines = [line for line, _ in sql_literals(source)]
    assert lines == [4, 5, 6, 7]


def test_scanner_flags_a_synthetic_module(tmp_path: Path) -> None:
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "bad.py").write_text('Q = "UPDATE facts SET trust_score = ?"\n', encoding="utf-8")
    (tmp_path / "facts" / "storage_sqlite.py").write_text('Q = "UPDATE facts SET a = ?"\n', encoding="utf-8")
    (tmp_path / "db.py").write_text('Q = "PRAGMA user_version"\n', encoding="utf-8")
    (tmp_path / "sessions" / "importers").mkdir(parents=True)
    (tmp_path / "sessions" / "importers" / "tool_x.py").write_text(
        'R = "SELECT id FROM chats WHERE id > ?"\nW = "DELETE FROM chats WHERE id = ?"\n', encoding="utf-8")
    assert misplaced_sql(tmp_path) == ["facts/bad.py:1: UPDATE facts SET trust_score = ?",
                                       "sessions/importers/tool_x.py:2: DELETE FROM chats WHERE id = ?"]
