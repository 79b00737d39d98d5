"""Record the SQL text of every statement a PostgreSQL store runs (tests of which plans run)."""

from __future__ import annotations

from typing import Any


def spy_statements(db: Any, monkeypatch: Any) -> list[str]:
    """Make ``db.connection()`` hand out connections whose ``execute`` records its SQL text in
    the returned list (every other attribute is the real connection's)."""
    statements: list[str] = []
    real = db.connection

    class Recording:
        def __init__(self, conn: Any) -> None:
            self._conn = conn

        def execute(self, sql: Any, args: Any = None, **kw: Any) -> Any:
            statements.append(str(sql))
            return self._conn.execute(sql, args, **kw)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._conn, name)

    class Spy:
        def __enter__(self) -> Recording:
            self._manager = real()
            return Recording(self._manager.__enter__())

        def __exit__(self, *exc: Any) -> Any:
            return self._manager.__exit__(*exc)

    monkeypatch.setattr(db, "connection", lambda: Spy())
    return statements
