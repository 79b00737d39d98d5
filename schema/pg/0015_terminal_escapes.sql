-- pg 0015: the text index reads messages without terminal escape sequences (as SQLite 0013).
-- messages.search_text (0008) now also holds the content without CSI/OSC escapes when it has
-- any; messages stored before are refreshed once by the loader's backfill, narrowed by the
-- marker's value 'escapes' to the messages holding an ESC (a pending 'calls' backfill covers
-- them already).
INSERT INTO store_meta(key, value)
    SELECT 'sessions_calls_backfill', 'escapes' WHERE EXISTS (SELECT 1 FROM messages)
    ON CONFLICT (key) DO NOTHING;
