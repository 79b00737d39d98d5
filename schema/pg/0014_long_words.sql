-- pg 0014: long words are indexed as written, and the CJK projection is folded like the text,
-- as FTS5's porter tokenizer indexes them.
--
-- FTS5's porter tokenizer passes a token of more than 64 bytes (after unicode61's folding)
-- through unstemmed; the Porter stemmer of `hermes_search` stemmed it, so on PostgreSQL a long
-- identifier ending in `ing`, `ings` or `ed` was one lexeme with its other endings (a search
-- for one found all three) while SQLite found only the word searched. hermes_tokens() now
-- gives every token of more than 64 bytes (lower-cased, as the lexeme is) a fixed tail of
-- digits the stemmer leaves alone (`<word>` -> `<word>0hl0`), in stored text and queries
-- alike, after pg 0013's tail for short words. A prefix query (`word*`) is matched by
-- hermes_prefix_query(): its token is stemmed only where FTS5 stems it (3..64 bytes), and
-- never gets a tail, so `<long prefix>*` finds the long words it begins as in SQLite.
--
-- The CJK projection column (Latin glued to CJK, `東京as`, emoji words) was indexed without
-- hermes_tokens(): no diacritics folding and no short- or long-word tail, while the query side
-- passed it through hermes_tokens(), so `東京as` found nothing on PostgreSQL (`as` stored as
-- `a`, searched as `as0hs0`). The stored vectors now read it through hermes_tokens() too:
-- the generated columns of messages, facts and builtin_index_entries are replaced (one
-- rewrite of each table, inside the migration's transaction: a crash leaves the old schema).

SET LOCAL statement_timeout = 0;
SET LOCAL maintenance_work_mem = '256MB';

-- Text as unicode61 + porter tokenize it: pg 0013's folded tokens with the short-word tail,
-- and the long-word tail. A token can exceed 64 bytes only in a run of 17 or more letters
-- (4 bytes a letter at most); ASCII text measures bytes as characters.
CREATE OR REPLACE FUNCTION hermes_tokens(body text, cap integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE
        WHEN t !~ '[[:alnum:]]{17}' THEN t
        WHEN t !~ '[^\x01-\x7f]' THEN regexp_replace(t, '[[:alnum:]]{65,}', '\&0hl0', 'g')
        ELSE coalesce((SELECT string_agg(CASE WHEN octet_length(lower(w)) > 64 THEN w || '0hl0' ELSE w END,
                                         ' ' ORDER BY n)
                         FROM regexp_split_to_table(t, ' ') WITH ORDINALITY AS s(w, n)), '')
        END
        FROM (SELECT regexp_replace(hermes_fold_tokens(body, cap),
                                    '\m([[:alnum:]][Ss]|[AEIOUaeiou][Yy])\M', '\10hs0', 'g') AS t) AS folded $$;

-- `term*`: the folded token, stemmed as FTS5's porter stems a prefix (3 to 64 bytes), else as
-- it is, matched as a prefix of the stored lexemes.
CREATE OR REPLACE FUNCTION hermes_prefix_query(term text) RETURNS tsquery
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN octet_length(lower(w)) BETWEEN 3 AND 64
                      THEN to_tsquery('hermes_search', quote_literal(w) || ':*')
                      ELSE to_tsquery('simple', quote_literal(w) || ':*') END
          FROM (SELECT btrim(hermes_fold_tokens(term, 4096)) AS w) AS folded $$;

DROP INDEX IF EXISTS messages_pairs;
DROP INDEX IF EXISTS messages_tsv;
ALTER TABLE messages DROP COLUMN tsv;
ALTER TABLE messages ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('hermes_search'::regconfig,
                hermes_tokens(coalesce(search_text, content),
                              CASE WHEN role = 'tool' THEN 8192 ELSE 262144 END))
    || to_tsvector('hermes_search'::regconfig, hermes_tokens(cjk, 262144))
    || to_tsvector('hermes_search'::regconfig, hermes_tokens(calls, 16384))
) STORED;
ALTER TABLE messages ALTER COLUMN tsv SET STORAGE MAIN;
CREATE INDEX IF NOT EXISTS messages_tsv ON messages USING gin (tsv);
CREATE INDEX IF NOT EXISTS messages_pairs ON messages USING gin (hermes_pair_keys(tsv));

DROP INDEX IF EXISTS facts_tsv;
ALTER TABLE facts DROP COLUMN tsv;
ALTER TABLE facts ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('hermes_search'::regconfig, hermes_tokens(content, 262144))
    || to_tsvector('hermes_search'::regconfig, hermes_tokens(tags, 65536))
    || to_tsvector('hermes_search'::regconfig, hermes_tokens(cjk, 262144))
) STORED;
CREATE INDEX IF NOT EXISTS facts_tsv ON facts USING gin (tsv);

DROP INDEX IF EXISTS builtin_index_entries_tsv;
ALTER TABLE builtin_index_entries DROP COLUMN tsv;
ALTER TABLE builtin_index_entries ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('hermes_search'::regconfig, hermes_tokens(content, 262144))
    || to_tsvector('hermes_search'::regconfig, hermes_tokens(cjk, 262144))
) STORED;
CREATE INDEX IF NOT EXISTS builtin_index_entries_tsv ON builtin_index_entries USING gin (tsv);
