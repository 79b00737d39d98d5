-- pg 0019: the text a listing orders by, or breaks a tie with, is ordered as SQLite orders it
-- (BINARY: by code point), whatever collation the database was created with. On a database
-- made with an ICU or libc locale (en_US.UTF-8, the default of many installations), `sessions
-- list` put sessions of the same time in another order than SQLite (`a-x, ax, Äz, b, B` for
-- SQLite's `B, a-x, ax, b, Äz`), and so did `sessions sources` and `facts entities`.
-- "C" compares bytes: UTF-8 bytes sort as code points. Indexes on these columns are rebuilt;
-- the rows are not rewritten.
ALTER TABLE messages ALTER COLUMN session_id TYPE text COLLATE "C";
ALTER TABLE sessions ALTER COLUMN id TYPE text COLLATE "C",
                     ALTER COLUMN source TYPE text COLLATE "C",
                     ALTER COLUMN parent_session_id TYPE text COLLATE "C";
ALTER TABLE sources ALTER COLUMN path TYPE text COLLATE "C";
ALTER TABLE entities ALTER COLUMN name TYPE text COLLATE "C";
