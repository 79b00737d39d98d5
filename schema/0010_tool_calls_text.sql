-- 0010: tool calls are searchable text; agent boilerplate is kept but not indexed as the user's words.
-- Three derived columns, computed at ingest (hermes_store.sessions.calltext):
--   calls       the tool calls as text (tool name, then every argument value), indexed as the
--               third column of messages_fts;
--   tools       the tool names a message calls or answers for, newline-delimited (--tool filter);
--   search_text the content without agent-injected blocks (<environment_context>,
--               <system-reminder>, ...), only where it differs; search_content prefers it.
-- Rows stored before this version get their values from the next `sessions index` (or
-- `sessions watch`): the marker below makes it run sessions.maintenance.backfill_calls once.
ALTER TABLE messages ADD COLUMN calls TEXT;
ALTER TABLE messages ADD COLUMN tools TEXT;
ALTER TABLE messages ADD COLUMN search_text TEXT;

DROP TRIGGER IF EXISTS messages_fts_ai;
DROP TRIGGER IF EXISTS messages_fts_ad;
DROP TRIGGER IF EXISTS messages_fts_au;
DROP TABLE IF EXISTS messages_fts;
DROP VIEW IF EXISTS messages_fts_source;
ALTER TABLE messages DROP COLUMN search_content;
ALTER TABLE messages ADD COLUMN search_content TEXT GENERATED ALWAYS AS
    (CASE WHEN role = 'tool' THEN substr(COALESCE(search_text, content), 1, 8192)
          ELSE COALESCE(search_text, content) END) VIRTUAL;

CREATE VIEW messages_fts_source AS SELECT id, search_content AS content, cjk, calls FROM messages;

CREATE VIRTUAL TABLE messages_fts USING fts5(
    search_content, cjk, calls,
    content="messages", content_rowid="id",
    tokenize="porter unicode61 remove_diacritics 2"
);
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
INSERT INTO messages_fts(messages_fts, rank) VALUES ('hashsize', 16777216);

CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE name = 'messages_fts')
BEGIN
    INSERT INTO messages_fts(rowid, search_content, cjk, calls)
    VALUES (new.id, new.search_content, new.cjk, new.calls);
END;

CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, search_content, cjk, calls)
    VALUES ('delete', old.id, old.search_content, old.cjk, old.calls);
END;

CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, role, cjk, calls, search_text ON messages
WHEN old.content IS NOT new.content OR old.role IS NOT new.role OR old.cjk IS NOT new.cjk
     OR old.calls IS NOT new.calls OR old.search_text IS NOT new.search_text
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, search_content, cjk, calls)
    VALUES ('delete', old.id, old.search_content, old.cjk, old.calls);
    INSERT INTO messages_fts(rowid, search_content, cjk, calls)
    VALUES (new.id, new.search_content, new.cjk, new.calls);
END;

INSERT OR REPLACE INTO store_meta(key, value)
    SELECT 'sessions_calls_backfill', 'calls' WHERE EXISTS (SELECT 1 FROM messages);
