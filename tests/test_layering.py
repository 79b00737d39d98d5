"""The package's layering, checked on the source: imports run one way, never in a circle.

Layers, highest first (a module may import its own layer or lower ones):

4. front ends: ``cli``, ``tools``, ``hermes_plugin`` (and any new top-level module not listed
   below — add a lower module to ``LOWEST``/``SERVICE`` when you create one);
3. ``recall`` and ``providers``;
2. the kinds of past: ``builtin``, ``sessions``, ``facts`` (never importing each other);
1. the lowest layer: ``db`` (and ``budget``, the search time budgets), ``home``, ``query``, ``tooling``, ``fsutil``, ``timeutil``,
   ``config_edit``, ``config_check`` (config.yaml's unknown and twice-given keys), ``threats`` (the threat scan) and ``threat_patterns`` (its patterns), ``redaction`` (secrets replaced before storing), ``foreign_db`` (the one reader of other programs' SQLite files), the PostgreSQL counterparts ``pgdb`` (and ``pgreach``, the servers that did not answer, and ``pgplaceholders``, its placeholder translation) / ``pgquery`` / ``pghighlight`` / ``storage_pg_marks``, ``excerpts`` (hit marks), ``dbcopy`` (engine to
   engine copy), ``storage_base`` (what the areas' storage seams share) and the package ``__init__``.

Every ``import`` counts, including those inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import hermes_store

PACKAGE = "hermes_store"
ROOT = Path(hermes_store.__file__).resolve().parent
FRONT, SERVICE, KINDS, LOWEST = 4, 3, 2, 1
LOWEST_MODULES = frozenset({"db", "home", "query", "tooling", "fsutil", "timeutil", "threads", "config_edit", "redaction",
                            "pgdb", "pgquery", "dbcopy", "threats", "threat_patterns", "dbhealth", "backup", "storage_base",
                            "foreign_db", "engines", "tokens", "pghighlight", "storage_pg_marks", "excerpts",
                            "pgreach", "pgplaceholders", "sqlite_guard", "pg_guard", "budget", "config_check"})
SERVICE_MODULES = frozenset({"recall", "providers"})
KIND_PACKAGES = frozenset({"builtin", "sessions", "facts"})
# (importer area, imported area) pairs forbidden although the layers would allow them.
FORBIDDEN_PAIRS = frozenset({("providers", "recall"), ("recall", "providers")})
LAYER_NAMES = {FRONT: "front end", SERVICE: "recall/providers", KINDS: "kind of past", LOWEST: "lowest"}

# ---- the checker (pure functions over source text and an import graph) ----------------------

def module_name(path: Path, root: Path = ROOT, package: str = PACKAGE) -> str:
    """The dotted name of the module at ``path`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def imported_names(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every dotted name ``source`` imports (function-level imports included; relative resolved).

    ``from a.b import c`` yields ``a.b.c``; :func:`resolve` maps it to the module ``a.b.c``
    when that exists, else to ``a.b``.
    """
    names: set[str] = set()
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)]
                target = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names.update(target if alias.name == "*" else f"{target}.{alias.name}"
                         for alias in node.names)
    return {n for n in names if n == PACKAGE or n.startswith(PACKAGE + ".")}


def resolve(names: Iterable[str], modules: Iterable[str]) -> set[str]:
    """Map imported names to known modules: ``a.b.c`` -> itself if a module, else ``a.b``."""
    known = set(modules)
    out: set[str] = set()
    for name in names:
        parts = name.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        if parts:
            out.add(".".join(parts))
    return out


def area(module: str) -> str:
    """The first component under the package (``hermes_store.facts.store`` -> ``facts``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer(module: str) -> int:
    """The layer number of a module (see the module docstring)."""
    top = area(module)
    if top == "" or top in LOWEST_MODULES:
        return LOWEST
    if top in KIND_PACKAGES:
        return KINDS
    if top in SERVICE_MODULES:
        return SERVICE
    return FRONT


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Upward imports, kinds-of-past cross imports and forbidden pairs, one message each."""
    problems = []
    for source, targets in sorted(graph.items()):
        for target in sorted(targets):
            if target == source:
                continue
            src_layer, dst_layer = layer(source), layer(target)
            src_area, dst_area = area(source), area(target)
            if dst_layer > src_layer:
                problems.append(f"upward import: {source} ({LAYER_NAMES[src_layer]}) imports "
                                f"{target} ({LAYER_NAMES[dst_layer]})")
            elif src_layer == dst_layer == KINDS and src_area != dst_area:
                problems.append(f"kinds-of-past cross import: {source} imports {target}")
            elif (src_area, dst_area) in FORBIDDEN_PAIRS:
                problems.append(f"forbidden import: {source} imports {target}")
    return problems


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt == node:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def package_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """``module -> {modules it imports}`` for every ``.py`` file under ``root``."""
    files = {module_name(p, root, package): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        names = imported_names(path.read_text(encoding="utf-8"), name,
                               is_package=path.name == "__init__.py")
        graph[name] = resolve(names, files) - {name}
    return graph


# ---- the package ------------------------------------------------------------------------------

def test_the_graph_covers_the_package() -> None:
    graph = package_graph()
    assert {"hermes_store.db", "hermes_store.recall", "hermes_store.facts.store",
            "hermes_store.cli.recall"} <= set(graph)
    assert "hermes_store.db" in graph["hermes_store.facts.rows"]


def test_no_upward_or_cross_imports() -> None:
    problems = violations(package_graph())
    assert not problems, "\n".join(problems)


def test_no_import_cycles() -> None:
    found = cycles(package_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


# ---- the checker can fail ---------------------------------------------------------------------

def _graph_of(sources: dict[str, str]) -> dict[str, set[str]]:
    graph = {}
    for name, source in sources.items():
        graph[name] = resolve(imported_names(source, name), sources) - {name}
    return graph


def test_checker_flags_an_upward_import_inside_a_function() -> None:
    graph = _graph_of({
        "hermes_store.db": "def f():\n    from hermes_store.recall import recall\n    return recall\n",
        "hermes_store.recall": "",
    })
    assert violations(graph) == ["upward import: hermes_store.db (lowest) imports hermes_store.recall "
                                 "(recall/providers)"]


def test_checker_flags_type_checking_and_relative_imports() -> None:
    graph = _graph_of({
        "hermes_store.facts.store": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                     "    from hermes_store.providers.base import MemoryProvider\n"),
        "hermes_store.facts.retrieval": "from .. import tools\n",
        "hermes_store.providers.base": "",
        "hermes_store.tools": "",
    })
    problems = violations(graph)
    assert any("hermes_store.facts.store" in p and "providers.base" in p for p in problems)
    assert any("hermes_store.facts.retrieval" in p and "hermes_store.tools" in p for p in problems)


def test_checker_flags_kinds_cross_imports_and_cycles() -> None:
    graph = _graph_of({
        "hermes_store.facts.a": "import hermes_store.sessions.b\n",
        "hermes_store.sessions.b": "from hermes_store.sessions import c\n",
        "hermes_store.sessions.c": "from hermes_store.sessions.b import thing\n",
    })
    assert violations(graph) == ["kinds-of-past cross import: hermes_store.facts.a imports "
                                 "hermes_store.sessions.b"]
    assert cycles(graph) == [["hermes_store.sessions.b", "hermes_store.sessions.c"]]


def test_checker_accepts_downward_imports() -> None:
    graph = _graph_of({
        "hermes_store.cli.x": "from hermes_store.recall import recall\nimport hermes_store.db\n",
        "hermes_store.recall": "from hermes_store.facts.store import FactStore\n",
        "hermes_store.facts.store": "from hermes_store import db\n",
        "hermes_store.db": "import apsw\n",
    })
    assert violations(graph) == []
    assert cycles(graph) == []
