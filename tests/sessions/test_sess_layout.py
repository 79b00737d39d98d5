"""The sessions package's modules form a top-down chain and import nothing above their layer."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_store

ROOT = Path(hermes_store.__file__).parent
PACKAGE = ROOT / "sessions"
FORBIDDEN = ("hermes_store.builtin", "hermes_store.facts", "hermes_store.recall",
             "hermes_store.providers", "hermes_store.tools", "hermes_store.cli",
             "hermes_store.hermes_plugin")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every hermes_store module ``path`` imports (function-level imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("hermes_store"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hermes_store"):
            found.add(node.module)
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {t for t in _imports(path) if t in modules and t != name}
    return graph


def test_sessions_imports_nothing_above_it():
    bad = [f"{_module_name(p)} imports {target}" for p in PACKAGE.rglob("*.py")
           for target in _imports(p) if target.startswith(FORBIDDEN)]
    assert not bad, "\n".join(bad)


def test_sessions_modules_have_no_import_cycle():
    graph = _graph()
    # a module importing the package itself closes a loop through __init__ (which re-exports)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if state.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if state.get(start) is None:
            cycle = visit(start)
            assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_only_the_storage_module_touches_sqlite():
    """apsw and the rank function are the SQLite storage's business (importers, readers of
    foreign files such as a Hermes state.db, keep their own read-only connections)."""
    users = sorted(_module_name(p) for p in PACKAGE.rglob("*.py")
                   if "importers" not in p.relative_to(PACKAGE).parts
                   and "import apsw" in p.read_text(encoding="utf-8")
                   or "hermes_store.sessions.rank" in _imports(p))
    assert users == ["hermes_store.sessions.rank", "hermes_store.sessions.storage_sqlite",
                     "hermes_store.sessions.storage_vectors_sql"]
