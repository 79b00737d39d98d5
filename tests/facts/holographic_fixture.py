"""A real-shaped Hermes holographic ``memory_store.db``, written by stdlib sqlite3 in a subprocess.

The schema follows plugins/memory/holographic/store.py: AUTOINCREMENT ids, non-unique entity
names, the external-content FTS5 table with its three triggers, one memory bank per category and
float64 HRR blobs. Deleting a fact leaves a gap in the ids, as a real store that saw removals has.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_SCRIPT = r'''
import json, sqlite3, sys
path, spec = sys.argv[1], json.loads(sys.argv[2])
c = sqlite3.connect(path)
c.executescript("""
CREATE TABLE IF NOT EXISTS facts (fact_id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL UNIQUE,
  category TEXT DEFAULT 'general', tags TEXT DEFAULT '', trust_score REAL DEFAULT 0.5,
  retrieval_count INTEGER DEFAULT 0, helpful_count INTEGER DEFAULT 0,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  hrr_vector BLOB);
CREATE TABLE IF NOT EXISTS entities (entity_id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,
  entity_type TEXT DEFAULT 'unknown', aliases TEXT DEFAULT '', created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS fact_entities (fact_id INTEGER REFERENCES facts(fact_id),
  entity_id INTEGER REFERENCES entities(entity_id), PRIMARY KEY (fact_id, entity_id));
CREATE TABLE IF NOT EXISTS memory_banks (bank_id INTEGER PRIMARY KEY AUTOINCREMENT, bank_name TEXT NOT NULL UNIQUE,
  vector BLOB NOT NULL, dim INTEGER NOT NULL, fact_count INTEGER DEFAULT 0,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE INDEX IF NOT EXISTS idx_facts_trust ON facts(trust_score DESC);
CREATE INDEX IF NOT EXISTS idx_facts_category ON facts(category);
CREATE INDEX IF NOT EXISTS idx_entities_name ON entities(name);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(content, tags, content=facts, content_rowid=fact_id);
CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
  INSERT INTO facts_fts(rowid, content, tags) VALUES (new.fact_id, new.content, new.tags); END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
  INSERT INTO facts_fts(facts_fts, rowid, content, tags) VALUES ('delete', old.fact_id, old.content, old.tags); END;
CREATE TRIGGER IF NOT EXISTS facts_au AFTER UPDATE ON facts BEGIN
  INSERT INTO facts_fts(facts_fts, rowid, content, tags) VALUES ('delete', old.fact_id, old.content, old.tags);
  INSERT INTO facts_fts(rowid, content, tags) VALUES (new.fact_id, new.content, new.tags); END;
""")
ids = {}
for f in spec["facts"]:
    cur = c.execute("INSERT INTO facts (content, category, tags, trust_score, retrieval_count, helpful_count,"
                    " hrr_vector) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (f["content"], f.get("category", "general"), f.get("tags", ""), f.get("trust", 0.5),
                     f.get("retrievals", 0), f.get("helpful", 0), b"\x00" * 8192))
    ids[f["content"]] = cur.lastrowid
for name in spec.get("entities", []):
    c.execute("INSERT INTO entities (name) VALUES (?)", (name,))
for content, entity_id in spec.get("links", []):
    c.execute("INSERT INTO fact_entities VALUES (?, ?)", (ids[content], entity_id))
for content in spec.get("delete", []):
    c.execute("DELETE FROM fact_entities WHERE fact_id = ?", (ids[content],))
    c.execute("DELETE FROM facts WHERE fact_id = ?", (ids[content],))
c.execute("INSERT OR REPLACE INTO memory_banks (bank_name, vector, dim, fact_count) VALUES ('cat:general', ?, 1024, 1)",
          (b"\x00" * 8192,))
c.commit()
'''


def make_holographic_db(path: Path, *, facts: list[dict], entities: list[str] = (),
                        links: list[tuple[str, int]] = (), delete: list[str] = ()) -> Path:
    """Write a holographic store at ``path``; ``links`` are ``(fact content, entity id)``."""
    spec = {"facts": facts, "entities": list(entities), "links": list(links), "delete": list(delete)}
    subprocess.run([sys.executable, "-c", _SCRIPT, str(path), json.dumps(spec)], check=True)
    return path
