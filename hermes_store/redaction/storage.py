"""The per-store redaction key, kept in ``store_meta`` (both engines: the same SQL).

The key is created on first use (32 random bytes, hex) with ``ON CONFLICT DO NOTHING`` and
read back, so two processes racing on a new store agree on one key. A store that cannot be
written (a read-only reader) gets a key for this process only: it stores nothing anyway.
"""

from __future__ import annotations

import secrets
from typing import Any

KEY_NAME = "redaction_key"


def store_key(db: Any) -> bytes:
    """This store's redaction key (created when missing)."""
    sql = db.portable
    row = sql.query_one("SELECT value FROM store_meta WHERE key = ?", (KEY_NAME,))
    if row is None and not getattr(db, "readonly", False):
        sql.execute("INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                    (KEY_NAME, secrets.token_hex(32)))
        row = sql.query_one("SELECT value FROM store_meta WHERE key = ?", (KEY_NAME,))
    if row is None:
        return secrets.token_bytes(32)
    return bytes.fromhex(row["value"])
