-- pg 0016: hermes_tokens() gives the same text as pg 0014's, about 4x cheaper per call.
--
-- pg 0014's body (a CASE over a FROM subquery) cannot be inlined by the planner, so every call
-- ran as a separate SQL-function execution: 11 us per message text and 22 us per tool-call
-- text of the benchmark corpus against 2-3 us and 7 us for the folding alone. Every stored row
-- calls it three times (text, CJK projection, tool calls), a search calls it for each term,
-- each counted row's tool calls and each token an excerpt looks up, so it cost about a quarter
-- of PostgreSQL's ingest time and most of the search latency pg 0014 added. PL/pgSQL evaluates
-- the same steps as cached simple expressions (the folding, hermes_fold_tokens, is still
-- inlined into them). The result is unchanged for every text (checked against pg 0014's body on
-- the benchmark corpus and by tests/search/test_pg_tokens.py), so stored vectors stay valid.

CREATE OR REPLACE FUNCTION hermes_tokens(body text, cap integer) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
DECLARE
    -- pg 0013: folded tokens, the short words the stemmer would change given a fixed tail
    t text := regexp_replace(hermes_fold_tokens(body, cap),
                             '\m([[:alnum:]][Ss]|[AEIOUaeiou][Yy])\M', '\10hs0', 'g');
BEGIN
    -- pg 0014: a token of more than 64 bytes (a run of 17 or more letters at the least) gets
    -- the long-word tail; ASCII text measures bytes as characters
    IF t !~ '[[:alnum:]]{17}' THEN
        RETURN t;
    END IF;
    IF t !~ '[^\x01-\x7f]' THEN
        RETURN regexp_replace(t, '[[:alnum:]]{65,}', '\&0hl0', 'g');
    END IF;
    RETURN coalesce((SELECT string_agg(CASE WHEN octet_length(lower(w)) > 64 THEN w || '0hl0' ELSE w END,
                                       ' ' ORDER BY n)
                       FROM regexp_split_to_table(t, ' ') WITH ORDINALITY AS s(w, n)), '');
END
$$;
