-- pg 0007: what `hermes-store forget` removed for good (see schema/0009_forgotten.sql): one row
-- per forgotten session (message_hash NULL) or message (sha256 of its stored content), never
-- the text, so indexing the same source again does not bring it back.
CREATE TABLE IF NOT EXISTS forgotten (
    id            bigserial PRIMARY KEY,
    session_id    text NOT NULL,
    message_hash  text,
    seq           integer,
    source_path   text,
    forgotten_at  double precision NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS forgotten_identity ON forgotten (session_id, COALESCE(message_hash, ''));
