-- pg 0006: phrases found through the index.
--
-- A GIN index over a tsvector holds which rows contain a lexeme, not where: a phrase of two
-- frequent words ("from self") had every row holding both words as a candidate, and each
-- candidate's stored vector was read to compare positions (95,000 rechecks at 1M messages for
-- a phrase found 45 times; FTS5 reads positions from its index). This index holds, for every
-- row, one key per pair of adjacent positions of its stored vector: the two lexemes joined by
-- a space (hermes_pair_keys; no lexeme holds a space). Every row matching a phrase holds the
-- keys of the phrase's adjacent pairs (the keys come from the same stored positions the phrase
-- test reads, clamped and capped as the vector keeps them), so the rows holding those keys are
-- a superset of the matches: exactly the matches for a phrase of two words, a few more for a
-- longer one, which the phrase test drops. Keys are text, not hashes: a hash function may
-- change between server versions, and an index of old hashes would then miss matches.
-- The keys live only in the index (an expression index), not in the rows. Searches use it only
-- in the statement that reads the rest of a walk through GIN (hermes_store.sessions.storage_pg);
-- a row is never asked for its keys at query time, so the function's cost (about 90 us per
-- message, paid once when a row is indexed) is marked high for the planner.
--
-- Building it over a stored index takes about 2.5 minutes per million messages (writers wait).

SET LOCAL statement_timeout = 0;
SET LOCAL maintenance_work_mem = '256MB';

CREATE OR REPLACE FUNCTION hermes_pair_keys(v tsvector) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT COST 10000
    AS $$ SELECT coalesce(array_agg(DISTINCT a.lexeme || ' ' || b.lexeme), '{}')
          FROM (SELECT lexeme, unnest(positions) AS p FROM unnest(v)) a
          JOIN (SELECT lexeme, unnest(positions) AS p FROM unnest(v)) b ON b.p = a.p + 1 $$;

CREATE INDEX IF NOT EXISTS messages_pairs ON messages USING gin (hermes_pair_keys(tsv));
