-- 0004: the fact store (holographic-style provider with trust scores).
-- Column names follow the Hermes holographic plugin so its tool shapes carry over.
-- hrr_vector holds a tagged blob (b"HRR1" + float32 phase angles); the dimension and
-- encoding version in use are recorded in store_meta (fact_hrr_dim, fact_hrr_encoding).

CREATE TABLE IF NOT EXISTS facts (
    fact_id         INTEGER PRIMARY KEY AUTOINCREMENT,
    content         TEXT NOT NULL UNIQUE,
    category        TEXT NOT NULL DEFAULT 'general',
    tags            TEXT NOT NULL DEFAULT '',
    trust_score     REAL NOT NULL DEFAULT 0.5,
    retrieval_count INTEGER NOT NULL DEFAULT 0,
    helpful_count   INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at      TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    hrr_vector      BLOB,
    cjk             TEXT              -- CJK bigram projection of content + tags (NULL when none)
);
CREATE INDEX IF NOT EXISTS idx_facts_trust ON facts(trust_score DESC);
CREATE INDEX IF NOT EXISTS idx_facts_category ON facts(category);

-- name_key is the case-folded name: the case-insensitive uniqueness works for every script.
CREATE TABLE IF NOT EXISTS entities (
    entity_id   INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL,
    name_key    TEXT NOT NULL UNIQUE,
    entity_type TEXT NOT NULL DEFAULT 'unknown',
    aliases     TEXT NOT NULL DEFAULT '',   -- comma-separated display copy of entity_aliases
    created_at  TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE IF NOT EXISTS entity_aliases (
    alias_key TEXT PRIMARY KEY,             -- case-folded alias
    alias     TEXT NOT NULL,
    entity_id INTEGER NOT NULL REFERENCES entities(entity_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_entity_aliases_entity ON entity_aliases(entity_id);

CREATE TABLE IF NOT EXISTS fact_entities (
    fact_id   INTEGER NOT NULL REFERENCES facts(fact_id) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL REFERENCES entities(entity_id) ON DELETE CASCADE,
    position  INTEGER NOT NULL DEFAULT 0,   -- order of first mention in the content (0 = subject)
    PRIMARY KEY (fact_id, entity_id)
);
CREATE INDEX IF NOT EXISTS idx_fact_entities_entity ON fact_entities(entity_id);

CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    content, tags, cjk,
    content = 'facts', content_rowid = 'fact_id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, content, tags, cjk) VALUES (new.fact_id, new.content, new.tags, new.cjk);
END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content, tags, cjk)
        VALUES ('delete', old.fact_id, old.content, old.tags, old.cjk);
END;
-- Only text changes touch the index: trust, counters and vectors never rewrite FTS rows.
CREATE TRIGGER IF NOT EXISTS facts_au AFTER UPDATE OF content, tags, cjk ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content, tags, cjk)
        VALUES ('delete', old.fact_id, old.content, old.tags, old.cjk);
    INSERT INTO facts_fts(rowid, content, tags, cjk) VALUES (new.fact_id, new.content, new.tags, new.cjk);
END;
