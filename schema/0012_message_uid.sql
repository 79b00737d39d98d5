-- 0012: a message keeps its identity across re-imports. Hermes' state.db (schema 31) gives every
-- message a `message_uid`; the hermes-db importer stores it here, so a re-read after Hermes
-- renumbered its ids finds each message by uid (same seq, same SESSION_ID#N ref), adds only new
-- uids and updates a row edited in place. NULL for every other format and for older rows.
ALTER TABLE messages ADD COLUMN message_uid TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS messages_uid ON messages(session_id, message_uid)
    WHERE message_uid IS NOT NULL;
