-- 0011: who wrote the turn a fact was stored in (on_turn_start's author_id/author_name/
-- author_is_bot, the trio the built-in memory already records). NULL when no author was
-- named (CLI, imports, extraction, a turn without an author). author_is_bot is 0/1.
ALTER TABLE facts ADD COLUMN author_id TEXT;
ALTER TABLE facts ADD COLUMN author_name TEXT;
ALTER TABLE facts ADD COLUMN author_is_bot INTEGER;
