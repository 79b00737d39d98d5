-- pg 0011: message embeddings (the semantic extra) in the shared store, so every gateway and
-- home on the server searches what any of them embedded (SQLite keeps them in session_vectors.db
-- beside the store's file). One float32 vector per message as bytea; the log orders what each
-- write added (a search's cache file reads the rows after the last it saw); the epoch is bumped
-- by every removal (cache files built before it are rebuilt).
CREATE TABLE IF NOT EXISTS vectors (
    message_id bigint PRIMARY KEY,
    session_id text NOT NULL,
    seq integer NOT NULL,
    model text NOT NULL,
    vec bytea NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors_by_session ON vectors (session_id, model);
CREATE TABLE IF NOT EXISTS vector_log (
    n bigserial PRIMARY KEY,
    model text NOT NULL,
    message_id bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS vector_meta (
    name text PRIMARY KEY,
    value bigint NOT NULL
);
