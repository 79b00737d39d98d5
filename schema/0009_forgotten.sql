-- 0009: what `hermes-store forget` removed for good, so indexing the same source again does
-- not bring it back. One row per forgotten session (message_hash NULL: every message of it)
-- or per forgotten message (message_hash: sha256 of its stored, redacted content). Only the
-- identity is kept, never the text: source_path names the transcript file it came from.
CREATE TABLE IF NOT EXISTS forgotten (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL,
    message_hash  TEXT,
    seq           INTEGER,
    source_path   TEXT,
    forgotten_at  REAL NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS forgotten_identity ON forgotten (session_id, COALESCE(message_hash, ''));
