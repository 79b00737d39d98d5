-- pg 0010: a message keeps its identity across re-imports (SQLite's 0012): the uid Hermes'
-- state.db (schema 31) gives every message, NULL for every other format and for older rows.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS message_uid text;
CREATE UNIQUE INDEX IF NOT EXISTS messages_uid ON messages (session_id, message_uid)
    WHERE message_uid IS NOT NULL;
