"""The threat scan, re-exported where the built-in store has always imported it from.

The scan itself lives in the lowest layer (:mod:`hermes_store.threats`) so that the fact
store scans with the very same patterns and messages.
"""

from hermes_store.threats import (  # noqa: F401 - public names of this module
    INVISIBLE_CHARS,
    MAX_SCAN_CHARS,
    PATTERN_IDS,
    THREAT_PATTERNS,
    blocked_notice,
    invisible_id,
    sanitize_entries,
    sanitize_entry,
    sanitize_snapshot,
    scan_content,
    scan_findings,
    too_large_message,
    too_large_notice,
)
