-- 0008: let messages_fts gather a whole bulk-load batch in memory before writing it out.
-- FTS5 writes its pending terms as a new index segment whenever they pass 'hashsize' bytes
-- (default 1 MiB), and merges segments as they pile up. One `sessions index` batch (20k
-- messages, ~15 MiB of indexed text) flushed at 1 MiB made dozens of small segments and their
-- merges per batch; at 16 MiB it is one or two. Indexing the same rows costs ~18 % less
-- (200k-message corpus), the index holds the same entries, and a live append (one message per
-- transaction) never reaches either limit. Stored in messages_fts_config like FTS5's other
-- options; SQLite versions without the option ignore the row.
INSERT INTO messages_fts(messages_fts, rank) VALUES ('hashsize', 16777216);
