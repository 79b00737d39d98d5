-- 0002: provenance and history of the built-in MEMORY.md / USER.md entries.
-- The .md files stay the truth and byte-compatible with Hermes; this is side data keyed by
-- (target, entry text). Losing it never loses memory.

CREATE TABLE IF NOT EXISTS memory_entries (
    target          TEXT NOT NULL CHECK (target IN ('memory', 'user')),
    text            TEXT NOT NULL,               -- the entry exactly as stored in the file
    created_at      REAL NOT NULL,               -- unix seconds of the first write of this entry
    updated_at      REAL NOT NULL,               -- unix seconds of its last change
    created_origin  TEXT NOT NULL DEFAULT '',    -- writer of the first version (tool, cli, hand_edit, import, ...)
    created_session TEXT NOT NULL DEFAULT '',
    updated_origin  TEXT NOT NULL DEFAULT '',    -- writer of the last change
    updated_session TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (target, text)
) WITHOUT ROWID;

-- What the provenance rows were last reconciled against (hash of the file's entries).
CREATE TABLE IF NOT EXISTS memory_sync (
    target       TEXT PRIMARY KEY CHECK (target IN ('memory', 'user')),
    content_hash TEXT NOT NULL,
    synced_at    REAL NOT NULL
);

-- Append-only audit trail of every add / replace / remove, including detected hand edits.
CREATE TABLE IF NOT EXISTS memory_history (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    target        TEXT NOT NULL CHECK (target IN ('memory', 'user')),
    action        TEXT NOT NULL CHECK (action IN ('add', 'replace', 'remove')),
    old_text      TEXT,                          -- entry before (replace, remove)
    new_text      TEXT,                          -- entry after (add, replace)
    at            REAL NOT NULL,
    origin        TEXT NOT NULL DEFAULT '',
    session_id    TEXT NOT NULL DEFAULT '',
    restored_from INTEGER                        -- the history id this event undid, if any
);
CREATE INDEX IF NOT EXISTS memory_history_target ON memory_history(target, id);

CREATE TRIGGER IF NOT EXISTS memory_history_no_update BEFORE UPDATE ON memory_history
BEGIN
    SELECT RAISE(ABORT, 'memory_history is append-only');
END;
CREATE TRIGGER IF NOT EXISTS memory_history_no_delete BEFORE DELETE ON memory_history
BEGIN
    SELECT RAISE(ABORT, 'memory_history is append-only');
END;
