-- 0001: bookkeeping shared by every part of the store.
-- store_meta holds small named settings (e.g. the fact vector dimension).
CREATE TABLE IF NOT EXISTS store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
