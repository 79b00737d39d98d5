-- 0013: the text index reads messages without terminal escape sequences.
-- messages.search_text (0010) now also holds the content without CSI/OSC escapes when it has
-- any (a command's coloured output: "\x1b[31mERROR" was the one token "31merror"). Messages
-- stored before are refreshed once by the loader's backfill: the marker's value 'escapes'
-- narrows it to the messages holding an ESC (a pending 'calls' backfill covers them already).
INSERT OR IGNORE INTO store_meta(key, value)
    SELECT 'sessions_calls_backfill', 'escapes' WHERE EXISTS (SELECT 1 FROM messages);
