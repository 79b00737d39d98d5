-- pg 0004: what the fact store's caches need to notice other hosts' writes, and alias order.
--
-- facts_change_seq advances once per statement that changes facts (a sequence is never
-- rolled back and takes no row lock, so hosts writing at once do not queue behind it); its
-- last_value is the fact store's change token. entity_aliases.added keeps aliases in the
-- order they were recorded (SQLite uses the rowid for that).

CREATE SEQUENCE IF NOT EXISTS facts_change_seq;

CREATE OR REPLACE FUNCTION facts_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('facts_change_seq');
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS facts_changed ON facts;
CREATE TRIGGER facts_changed AFTER INSERT OR UPDATE OR DELETE ON facts
    FOR EACH STATEMENT EXECUTE FUNCTION facts_changed();

ALTER TABLE entity_aliases ADD COLUMN IF NOT EXISTS added bigint GENERATED ALWAYS AS IDENTITY;
