-- A Hermes state.db at schema 31, as the newest Hermes writes it (hermes_state_common.SCHEMA_SQL
-- and DEFERRED_INDEX_SQL of zons-zhaozhy/hermes-agent 03d70b32: the sessions/messages tables in
-- full, the message_uid trigger, the v23 external-content FTS), with a few rows: a compression
-- chain, a legacy reset child (same session_key, parent ended 'session_reset', no marker), an
-- auto-archived session, a compaction archive, a rewound row, a busy-queue accept row the drain
-- deactivated and one still marked, and a row written by a build without message_uid.
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS system_prompts (
    hash TEXT PRIMARY KEY,
    prompt TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    created_source TEXT,
    user_id TEXT,
    session_key TEXT,
    chat_id TEXT,
    chat_type TEXT,
    thread_id TEXT,
    display_name TEXT,
    origin_json TEXT,
    expiry_finalized INTEGER DEFAULT 0,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    system_prompt_hash TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    cwd TEXT,
    git_branch TEXT,
    git_repo_root TEXT,
    git_metadata_generation INTEGER NOT NULL DEFAULT 0,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    title_source TEXT,
    last_activity_at REAL,
    last_activity_description TEXT,
    last_activity_provenance TEXT,
    api_call_count INTEGER DEFAULT 0,
    handoff_state TEXT,
    handoff_platform TEXT,
    handoff_error TEXT,
    compression_failure_cooldown_until REAL,
    compression_failure_error TEXT,
    compression_fallback_streak INTEGER NOT NULL DEFAULT 0,
    compression_ineffective_count INTEGER NOT NULL DEFAULT 0,
    compression_recovery_deadline REAL,
    compression_overload_streak INTEGER NOT NULL DEFAULT 0,
    profile_name TEXT,
    transport_profile TEXT,
    rewind_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    auto_archived INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    hidden INTEGER NOT NULL DEFAULT 0,
    last_read_at REAL,
    tool_names TEXT,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id),
    FOREIGN KEY (system_prompt_hash) REFERENCES system_prompts(hash)
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    effect_disposition TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT,
    platform_message_id TEXT,
    observed INTEGER DEFAULT 0,
    _compressed_summary INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0,
    api_content TEXT,
    display_kind TEXT,
    display_metadata TEXT,
    display_identity BLOB,
    display_order INTEGER,
    message_uid TEXT,
    absorbed_message_uids TEXT,
    tool_call_uids TEXT,
    tool_call_uid TEXT
);
CREATE TABLE IF NOT EXISTS state_meta (
    key TEXT PRIMARY KEY,
    value TEXT
);
CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX IF NOT EXISTS idx_messages_session_id ON messages(session_id, id);
CREATE INDEX IF NOT EXISTS idx_messages_session_uid
    ON messages(session_id, message_uid) WHERE active = 1;
CREATE TRIGGER IF NOT EXISTS messages_message_uid_insert
AFTER INSERT ON messages WHEN new.message_uid IS NULL
BEGIN
    UPDATE messages SET message_uid = lower(hex(randomblob(16))) WHERE id = new.id;
END;
CREATE VIEW IF NOT EXISTS messages_fts_src AS
    SELECT id,
           CASE WHEN role = 'tool'
                THEN substr(COALESCE(content, ''), 1, 8192)
                ELSE content END AS content,
           tool_name, tool_calls
    FROM messages;
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content,
    tool_name,
    tool_calls,
    content='messages_fts_src',
    content_rowid='id'
);
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
    VALUES (new.id, CASE WHEN new.role = 'tool' THEN substr(COALESCE(new.content, ''), 1, 8192)
                         ELSE new.content END, new.tool_name, new.tool_calls);
END;
INSERT INTO schema_version(version) VALUES (31);

INSERT INTO sessions(id, source, session_key, model, model_config, parent_session_id, started_at, ended_at,
                     end_reason, title, title_source, archived, auto_archived)
VALUES
 ('20270301_080000_root01', 'cli', NULL, 'nous/hermes-5', NULL, NULL, 1803888000, 1803891600,
  'compression', 'helm chart rollout', 'llm', 0, 0),
 ('20270301_090000_cont01', 'cli', NULL, 'nous/hermes-5', NULL, '20270301_080000_root01', 1803891600, NULL,
  NULL, 'helm chart rollout #2', 'derived', 0, 0),
 ('20270302_080000_tgold1', 'telegram', 'agent:main:telegram:dm:42', 'nous/hermes-5', NULL, NULL,
  1803974400, 1803978000, 'session_reset', 'grocery list', 'user', 0, 0),
 ('20270302_090000_tgnew1', 'telegram', 'agent:main:telegram:dm:42', 'nous/hermes-5', NULL,
  '20270302_080000_tgold1', 1803978000, NULL, NULL, NULL, NULL, 0, 0),
 ('20270303_080000_arch01', 'cli', NULL, 'nous/hermes-5', NULL, NULL, 1804060800, 1804064400,
  'agent_close', 'old experiment', 'llm', 0, 1);

INSERT INTO messages(session_id, role, content, timestamp, active, compacted, display_metadata, message_uid)
VALUES
 ('20270301_080000_root01', 'user', 'roll out the helm chart to staging', 1803888010, 1, 0, NULL,
  'a1b2c3d4e5f60718293a4b5c6d7e8f90'),
 ('20270301_080000_root01', 'assistant', 'helm upgrade --install done on staging', 1803888020, 0, 1, NULL,
  'b1b2c3d4e5f60718293a4b5c6d7e8f90'),
 ('20270301_080000_root01', 'assistant', 'a rewound draft answer', 1803888030, 0, 0, NULL,
  'c1b2c3d4e5f60718293a4b5c6d7e8f90'),
 ('20270301_090000_cont01', 'user', 'now production please', 1803891610, 1, 0, NULL,
  'd1b2c3d4e5f60718293a4b5c6d7e8f90'),
 ('20270302_080000_tgold1', 'user', 'add oat milk to the grocery list', 1803974410, 1, 0, NULL,
  'e1b2c3d4e5f60718293a4b5c6d7e8f90'),
 ('20270302_090000_tgnew1', 'user', 'queued while busy: also buy coffee', 1803978010, 0, 0,
  '{"_queued_prompt": true}', 'f1b2c3d4e5f60718293a4b5c6d7e8f90'),
 ('20270302_090000_tgnew1', 'user', 'queued while busy: also buy coffee', 1803978020, 1, 0, NULL,
  '01b2c3d4e5f60718293a4b5c6d7e8f90'),
 ('20270302_090000_tgnew1', 'user', 'never drained: and tea', 1803978030, 1, 0,
  '{"_queued_prompt": true}', '11b2c3d4e5f60718293a4b5c6d7e8f90'),
 ('20270303_080000_arch01', 'user', 'an archived experiment about flamegraphs', 1804060810, 1, 0, NULL,
  '21b2c3d4e5f60718293a4b5c6d7e8f90');
-- a build that predates message_uid binds NULL: the trigger mints one
INSERT INTO messages(session_id, role, content, timestamp) VALUES
 ('20270303_080000_arch01', 'assistant', 'flamegraph shows the allocator', 1804060820);
