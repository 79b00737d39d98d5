-- 0003: the session index (past transcripts) and its FTS5 index.
-- Readable by any SQLite >= 3.40 (stock unicode61 tokenizer, external content over a view).

CREATE TABLE IF NOT EXISTS sources (
    id           INTEGER PRIMARY KEY,
    path         TEXT NOT NULL UNIQUE,          -- absolute path of the imported file/database
    format       TEXT NOT NULL,                 -- importer name (hermes-jsonl, claude-code, ...)
    size         INTEGER NOT NULL DEFAULT 0,    -- bytes when last imported
    mtime        REAL NOT NULL DEFAULT 0,
    content_hash TEXT,                          -- hash of the imported prefix (detects rewrites)
    resume_at    TEXT,                          -- byte offset or last native id (importer-defined)
    imported_at  REAL NOT NULL,
    meta         TEXT NOT NULL DEFAULT '{}'     -- JSON: lines, messages, complete, importer state
);

CREATE TABLE IF NOT EXISTS sessions (
    id                TEXT PRIMARY KEY,         -- native id where the source has one
    origin_format     TEXT NOT NULL,            -- importer name, or 'live'
    source            TEXT NOT NULL DEFAULT 'cli', -- platform: cli, telegram, cron, subagent, ...
    title             TEXT,
    model             TEXT,
    workspace         TEXT,                     -- cwd
    started_at        REAL,
    ended_at          REAL,
    parent_session_id TEXT,                     -- lineage (not a FK: parents may arrive later)
    message_count     INTEGER NOT NULL DEFAULT 0,
    source_id         INTEGER REFERENCES sources(id) ON DELETE SET NULL,
    meta              TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS sessions_started ON sessions(started_at);
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS sessions_source_id ON sessions(source_id);

CREATE TABLE IF NOT EXISTS messages (
    id           INTEGER PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,              -- 0-based position within its session
    role         TEXT NOT NULL,
    content      TEXT NOT NULL DEFAULT '',      -- multimodal parts flattened to text
    tool_name    TEXT,
    tool_calls   TEXT,                          -- JSON
    tool_call_id TEXT,
    timestamp    REAL,                          -- epoch seconds
    cjk          TEXT,                          -- bigram projection of CJK text (NULL when none)
    UNIQUE (session_id, seq)
);

-- What the FTS index sees: tool output capped at 8 KiB so JSON dumps do not bloat it.
-- The triggers below use the very same per-row expression, so FTS5's strict
-- integrity-check holds.
CREATE VIEW IF NOT EXISTS messages_fts_source AS
    SELECT id,
           CASE WHEN role = 'tool' THEN substr(content, 1, 8192) ELSE content END AS content,
           cjk
    FROM messages;

CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content, cjk,
    content = 'messages_fts_source', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

-- A writer that indexes a whole batch itself (the bulk loader) holds a row here for the length
-- of its own transaction; the insert trigger stands aside while it exists. The row never
-- outlives that transaction, so every other connection always sees the trigger active, and no
-- DDL ever runs at ingest time.
CREATE TABLE IF NOT EXISTS fts_deferred (
    name TEXT PRIMARY KEY                          -- the FTS table whose indexing is deferred
);

-- Keep the index in step with every writer (ours, sqlite-utils, the stdlib sqlite3 module).
CREATE TRIGGER IF NOT EXISTS messages_fts_ai AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE name = 'messages_fts')
BEGIN
    INSERT INTO messages_fts(rowid, content, cjk)
    VALUES (new.id,
            CASE WHEN new.role = 'tool' THEN substr(new.content, 1, 8192) ELSE new.content END,
            new.cjk);
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, cjk)
    VALUES ('delete', old.id,
            CASE WHEN old.role = 'tool' THEN substr(old.content, 1, 8192) ELSE old.content END,
            old.cjk);
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_au AFTER UPDATE OF content, role, cjk ON messages
WHEN old.content IS NOT new.content OR old.role IS NOT new.role OR old.cjk IS NOT new.cjk
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, cjk)
    VALUES ('delete', old.id,
            CASE WHEN old.role = 'tool' THEN substr(old.content, 1, 8192) ELSE old.content END,
            old.cjk);
    INSERT INTO messages_fts(rowid, content, cjk)
    VALUES (new.id,
            CASE WHEN new.role = 'tool' THEN substr(new.content, 1, 8192) ELSE new.content END,
            new.cjk);
END;
