-- pg 0009: who wrote the turn a fact was stored in (the same three nullable columns as
-- SQLite's 0011: on_turn_start's author_id/author_name/author_is_bot). NULL when no author.
ALTER TABLE facts ADD COLUMN IF NOT EXISTS author_id text;
ALTER TABLE facts ADD COLUMN IF NOT EXISTS author_name text;
ALTER TABLE facts ADD COLUMN IF NOT EXISTS author_is_bot boolean;
