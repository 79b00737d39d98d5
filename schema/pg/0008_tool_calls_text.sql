-- pg 0008: tool calls are searchable text; agent boilerplate is kept but not indexed as the
-- user's words (the same three derived columns as SQLite's 0010, computed at ingest by
-- hermes_store.sessions.calltext):
--   calls       the tool calls as text (tool name, then every argument value);
--   tools       the tool names a message calls or answers for, newline-delimited (--tool filter);
--   search_text the content without agent-injected blocks, only where it differs.
-- The stored vector now reads search_text (else content), the CJK projection and calls, in
-- that order (tsvector || keeps their positions apart, so no phrase spans two of them).
-- Rows stored before this version get their values from the next `sessions index` (the
-- marker below); recomputing the vector rewrites the table once.

SET LOCAL statement_timeout = 0;
SET LOCAL maintenance_work_mem = '256MB';

ALTER TABLE messages ADD COLUMN IF NOT EXISTS calls text;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS tools text;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS search_text text;

DROP INDEX IF EXISTS messages_pairs;
DROP INDEX IF EXISTS messages_tsv;
ALTER TABLE messages DROP COLUMN tsv;
ALTER TABLE messages ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('hermes_search'::regconfig,
                hermes_tokens(coalesce(search_text, content),
                              CASE WHEN role = 'tool' THEN 8192 ELSE 262144 END))
    || to_tsvector('hermes_search'::regconfig, left(coalesce(cjk, ''), 262144))
    || to_tsvector('hermes_search'::regconfig, hermes_tokens(calls, 16384))
) STORED;
ALTER TABLE messages ALTER COLUMN tsv SET STORAGE MAIN;
CREATE INDEX IF NOT EXISTS messages_tsv ON messages USING gin (tsv);
CREATE INDEX IF NOT EXISTS messages_pairs ON messages USING gin (hermes_pair_keys(tsv));

INSERT INTO store_meta(key, value)
    SELECT 'sessions_calls_backfill', 'calls' WHERE EXISTS (SELECT 1 FROM messages)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value;
