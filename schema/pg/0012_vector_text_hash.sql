-- pg 0012: what each vector embedded. A digest of the message text the model read, so that
-- `sessions embed` re-embeds a message edited in place (a transcript rewritten under the same
-- uid, `redact`) or a row id that now holds another message; NULL for a vector written
-- before (trusted as it is: re-embedding a whole store is hours of CPU).
ALTER TABLE vectors ADD COLUMN IF NOT EXISTS text_hash text;
