-- 0007: emoji are searchable through the projection column of messages_fts (query.emoji_tokens:
-- one word per emoji, e.g. emoji1f680). Messages indexed before this version carry no emoji
-- words; this marker makes the next `sessions index` recompute the projection of every
-- message with non-ASCII text (sessions.maintenance.backfill_projection), then it is removed.
-- A new store (no messages yet) needs no marker.
INSERT OR REPLACE INTO store_meta(key, value)
    SELECT 'sessions_projection_backfill', 'emoji' WHERE EXISTS (SELECT 1 FROM messages);
