-- 0006: lay the FTS5 tables out the way the SQLite ecosystem finds them.
-- sqlite-utils (`sqlite-utils search DB TABLE Q`, Table.detect_fts) and Datasette (`?_search=`)
-- look for a virtual table whose SQL says `content="TABLE"` (double quotes, no spaces) or
-- `content=[TABLE]`. messages_fts pointed at the view messages_fts_source and facts_fts said
-- `content = 'facts'` (builtin_index_fts likewise), so neither tool saw them. Each is rebuilt
-- here from its table.

-- ---- facts: same columns, the option spelled as the tools expect ----------------------------
DROP TABLE IF EXISTS facts_fts;
CREATE VIRTUAL TABLE facts_fts USING fts5(
    content, tags, cjk,
    content="facts", content_rowid="fact_id",
    tokenize="porter unicode61 remove_diacritics 2"
);
INSERT INTO facts_fts(facts_fts) VALUES ('rebuild');

-- ---- the built-in entry index: likewise ------------------------------------------------------
DROP TABLE IF EXISTS builtin_index_fts;
CREATE VIRTUAL TABLE builtin_index_fts USING fts5(
    content, cjk,
    content="builtin_index_entries", content_rowid="id",
    tokenize="porter unicode61 remove_diacritics 2"
);
INSERT INTO builtin_index_fts(builtin_index_fts) VALUES ('rebuild');

-- ---- messages: the 8 KiB cap on tool output moves into a generated column ------------------
-- search_content is what the index sees (computed on read, never stored), so the FTS table can
-- name `messages` itself as its content table and FTS5's strict integrity-check still holds.
ALTER TABLE messages ADD COLUMN search_content TEXT GENERATED ALWAYS AS
    (CASE WHEN role = 'tool' THEN substr(content, 1, 8192) ELSE content END) VIRTUAL;

DROP TRIGGER IF EXISTS messages_fts_ai;
DROP TRIGGER IF EXISTS messages_fts_ad;
DROP TRIGGER IF EXISTS messages_fts_au;
DROP TABLE IF EXISTS messages_fts;
DROP VIEW IF EXISTS messages_fts_source;

-- Kept for readers of the old name; the cap now lives only in messages.search_content.
CREATE VIEW messages_fts_source AS SELECT id, search_content AS content, cjk FROM messages;

CREATE VIRTUAL TABLE messages_fts USING fts5(
    search_content, cjk,
    content="messages", content_rowid="id",
    tokenize="porter unicode61 remove_diacritics 2"
);
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');

-- The bulk loader still indexes a whole batch itself while it holds its fts_deferred row.
CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE name = 'messages_fts')
BEGIN
    INSERT INTO messages_fts(rowid, search_content, cjk) VALUES (new.id, new.search_content, new.cjk);
END;

CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, search_content, cjk)
    VALUES ('delete', old.id, old.search_content, old.cjk);
END;

CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, role, cjk ON messages
WHEN old.content IS NOT new.content OR old.role IS NOT new.role OR old.cjk IS NOT new.cjk
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, search_content, cjk)
    VALUES ('delete', old.id, old.search_content, old.cjk);
    INSERT INTO messages_fts(rowid, search_content, cjk) VALUES (new.id, new.search_content, new.cjk);
END;
