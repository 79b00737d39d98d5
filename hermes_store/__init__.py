"""hermes_store: a local, SQLite-backed knowledge store for AI agents.

Three kinds of past behind one query layer: the built-in MEMORY.md / USER.md
store, indexed past sessions, and a holographic-style fact store.

Layers (imports only run downwards; ``tests/test_layering.py`` checks them):

* front ends: ``cli/``, ``tools`` (the tool registry), ``hermes_plugin`` (the Hermes adapter),
  ``mcp_server/`` and ``browse/``;
* ``recall`` (one query over every kind) and ``providers/`` (MemoryProvider implementations);
* the kinds of past, which never import each other: ``builtin/``, ``sessions/``, ``facts/`` —
  each keeps its SQL in its own ``storage*.py`` modules behind a storage ABC;
* the lowest layer: ``db`` / ``pgdb`` (the only places that open a database), ``home``,
  ``query`` / ``pgquery``, ``tooling`` (Tool, ToolContext, argument readers), ``fsutil``,
  ``timeutil``, ``config_edit``, ``threats`` (the threat scan), ``dbcopy``.

This package ``__init__`` imports nothing.
"""

__version__ = "0.1.0"
