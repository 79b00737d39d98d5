"""Built-in memory: MEMORY.md / USER.md, behaviour-compatible with Hermes Agent.

Holds: :class:`MemoryStore` (the files are the truth), the threat scan
(:func:`scan_content`, :func:`sanitize_entry`, :func:`sanitize_entries`,
:func:`sanitize_snapshot`), the file-format helpers, write approval, provenance and
history (:mod:`.provenance`), the entry search index (:mod:`.search`), the storage seam
for what the database derives from the files (:mod:`.storage`, the APSW implementation
in :mod:`.storage_sqlite`) and the ``memory`` tool (:mod:`.memory_tool`, ``MEMORY_TOOL``).

May import: the lowest layer only (``db``, ``home``, ``query``, ``tooling``, ``fsutil``,
``timeutil``, ``config_edit``). Never ``facts``, ``sessions``, ``providers``, ``recall``
or ``tools``.
"""

from hermes_store.builtin.entries import (
    ENTRY_DELIMITER,
    char_count,
    file_name,
    join_entries,
    parse_entries,
)
from hermes_store.builtin.operations import check_content
from hermes_store.builtin.render import MEMORY_BLOCK_HEADERS, block_cost, render_block
from hermes_store.builtin.store import MemoryStore
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
