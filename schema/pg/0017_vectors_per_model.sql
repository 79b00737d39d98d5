-- pg 0017: one vector per message and model. The key was the message alone, so embedding with
-- a second model (`semantic.model: bundled:bge-small-en` to try it, another home on the same
-- store) replaced every vector of the first, silently: going back meant embedding it all again.
-- Re-runnable: the key is rebuilt only while it is the message alone.
DO $$
BEGIN
    IF (SELECT count(*) FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid
            AND a.attnum = ANY (i.indkey)
        WHERE i.indrelid = 'vectors'::regclass AND i.indisprimary) = 1 THEN
        ALTER TABLE vectors DROP CONSTRAINT vectors_pkey;
        ALTER TABLE vectors ADD CONSTRAINT vectors_pkey PRIMARY KEY (message_id, model);
    END IF;
END
$$;
