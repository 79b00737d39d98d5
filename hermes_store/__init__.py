"""hermes_store: a local, SQLite-backed knowledge store for AI agents.

Three kinds of past behind one query layer: the built-in MEMORY.md / USER.md
store, indexed past sessions, and a holographic-style fact store.
"""

__version__ = "0.1.0"
