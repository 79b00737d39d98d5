"""Built-in memory: MEMORY.md / USER.md, behaviour-compatible with Hermes Agent.

Public API: :class:`MemoryStore`, the threat scan (:func:`scan_content`,
:func:`sanitize_entry`, :func:`sanitize_entries`, :func:`sanitize_snapshot`)
and the file-format helpers. The ``memory`` tool lives in
:mod:`hermes_store.builtin.memory_tool` (``MEMORY_TOOL``).
"""

from hermes_store.builtin.entries import (
    ENTRY_DELIMITER,
    char_count,
    file_name,
    join_entries,
    parse_entries,
)
from hermes_store.builtin.render import MEMORY_BLOCK_HEADERS, block_cost, render_block
from hermes_store.builtin.store import MemoryStore, check_content
from hermes_store.builtin.threats import (
    INVISIBLE_CHARS,
    MAX_SCAN_CHARS,
    PATTERN_IDS,
    sanitize_entries,
    sanitize_entry,
    sanitize_snapshot,
    scan_content,
    scan_findings,
)

__all__ = [
    "ENTRY_DELIMITER",
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "MEMORY_BLOCK_HEADERS",
    "PATTERN_IDS",
    "MemoryStore",
    "block_cost",
    "char_count",
    "check_content",
    "file_name",
    "join_entries",
    "parse_entries",
    "render_block",
    "sanitize_entries",
    "sanitize_entry",
    "sanitize_snapshot",
    "scan_content",
    "scan_findings",
]
