-- 0005: a full-text index of the built-in MEMORY.md / USER.md entries, derived from the files.
-- The .md files stay the truth: rows are rebuilt whenever a file's content hash changes.

CREATE TABLE IF NOT EXISTS builtin_index_files (
    target       TEXT PRIMARY KEY,      -- 'memory' or 'user'
    content_hash TEXT NOT NULL,         -- sha256 of the file bytes last indexed
    refreshed_at REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS builtin_index_entries (
    id          INTEGER PRIMARY KEY,
    target      TEXT NOT NULL,
    entry_index INTEGER NOT NULL,       -- 1-based position in the file, as `memory show` numbers it
    content     TEXT NOT NULL,
    cjk         TEXT,                   -- hermes_store.query.cjk_projection(content)
    UNIQUE (target, entry_index)
);

CREATE VIRTUAL TABLE IF NOT EXISTS builtin_index_fts USING fts5(
    content, cjk,
    content = 'builtin_index_entries', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS builtin_index_entries_ai AFTER INSERT ON builtin_index_entries BEGIN
    INSERT INTO builtin_index_fts(rowid, content, cjk) VALUES (new.id, new.content, new.cjk);
END;
CREATE TRIGGER IF NOT EXISTS builtin_index_entries_ad AFTER DELETE ON builtin_index_entries BEGIN
    INSERT INTO builtin_index_fts(builtin_index_fts, rowid, content, cjk)
        VALUES ('delete', old.id, old.content, old.cjk);
END;
