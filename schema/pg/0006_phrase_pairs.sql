-- pg 0006: phrases found through the index.
--
-- A GIN index over a tsvector holds which rows contain a lexeme, not where: a phrase of two
-- frequent words ("from self") had every row holding both words as a candidate, and each
-- candidate's stored vector was read to compare positions (95,000 rechecks at 1M messages for
-- a phrase found 45 times; FTS5 reads positions from its index). This index holds, for every
-- row, one key per pair of adjacent positions of its stored vector: hashtext() of the two
-- lexemes joined by a space (hermes_pair_keys; no lexeme holds a space). Every row matching a
-- phrase holds the keys of the phrase's adjacent pairs (the keys come from the same stored
-- positions the phrase test reads, clamped and capped as the vector keeps them), so the rows
-- holding those keys are a superset of the matches, about as many: a longer phrase's rows
-- with each pair somewhere else, or a pair whose hash another pair shares, are dropped by the
-- phrase test that follows. hashtext() is the text hash of hash indexes, which pg_upgrade
-- carries over unrebuilt, so it does not change between server versions; integer keys made
-- the index build 2.4 times faster than text keys (1M messages: 145 s against 345 s) for the
-- same size (371 MB against 392 MB).
-- The keys live only in the index (an expression index), not in the rows, and computing them
-- costs about 75 us per message, paid once when a row is indexed. A search must reach them
-- only through this index (hermes_store.sessions.storage_pg: each window of a phrase's walk is
-- this index ANDed with the id range), never by computing a row's keys as a filter, so the
-- function's cost is marked as what it is, about 100 times an ordinary function's; the store's
-- connections run without parallel workers, which that cost would otherwise start for
-- statements of a few milliseconds.
--
-- Building it over a stored index takes about 2.5 minutes per million messages (writers wait).

SET LOCAL statement_timeout = 0;
SET LOCAL maintenance_work_mem = '256MB';

CREATE OR REPLACE FUNCTION hermes_pair_keys(v tsvector) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT COST 10000
    AS $$ SELECT coalesce(array_agg(DISTINCT hashtext(a.lexeme || ' ' || b.lexeme)), '{}')
          FROM (SELECT lexeme, unnest(positions) AS p FROM unnest(v)) a
          JOIN (SELECT lexeme, unnest(positions) AS p FROM unnest(v)) b ON b.p = a.p + 1 $$;

CREATE INDEX IF NOT EXISTS messages_pairs ON messages USING gin (hermes_pair_keys(tsv));
