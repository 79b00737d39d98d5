-- Goose sessions.db (schema version 5).
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version (version, applied_at) VALUES (5, '2026-01-05 09:00:00');
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
  user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
  accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
  schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
  timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);

INSERT INTO sessions (id, name, description, user_set_name, session_type, working_dir, created_at, updated_at, accumulated_total_tokens) VALUES ('20260105_1', 'Fix flaky upload test', '', 1, 'user', '/home/lee/api', '2026-01-05 09:10:00', '2026-01-05 09:20:00', 5400),('20260105_2', '', 'nightly dependency audit', 0, 'scheduled', '/home/lee/api', '2026-01-05 23:00:00', '2026-01-05 23:01:00', NULL);
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES ('20260105_1', 'user', '[{"type": "text", "text": "test_upload is flaky on CI"}]', 1767604200, '{"userVisible":true,"agentVisible":true}');
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES ('20260105_1', 'assistant', '[{"type": "thinking", "thinking": "Probably a race on the temp dir.", "signature": "s"}, {"type": "text", "text": "Let me look at the test."}, {"type": "toolRequest", "id": "toolu_g1", "toolCall": {"status": "success", "value": {"name": "developer__shell", "arguments": {"command": "rg -n tmpdir tests/test_upload.py"}}}}]', 1767604205, '{"userVisible":true,"agentVisible":true}');
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES ('20260105_1', 'user', '[{"type": "toolResponse", "id": "toolu_g1", "toolResult": {"status": "success", "value": [{"type": "text", "text": "12: tmp = ''/tmp/upload''", "annotations": {"audience": ["assistant"]}}]}}]', 1767604206, '{"userVisible":true,"agentVisible":true}');
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES ('20260105_2', 'user', '[{"type": "text", "text": "run pip-audit"}]', 1767654000, '{"userVisible":true,"agentVisible":true}');
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES ('20260105_1', 'assistant', '[{"type": "text", "text": "It uses a fixed /tmp path; switch to the tmp_path fixture."}]', 1767604210, '{"userVisible":true,"agentVisible":true}');
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES ('20260105_2', 'assistant', '[{"type": "toolRequest", "id": "toolu_g2", "toolCall": {"status": "success", "value": {"name": "developer__shell", "arguments": {"command": "pip-audit"}}}}]', 1767654002, '{"userVisible":true,"agentVisible":true}');
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES ('20260105_2', 'user', '[{"type": "toolResponse", "id": "toolu_g2", "toolResult": {"status": "success", "value": {"content": [{"type": "text", "text": "No known vulnerabilities found"}], "isError": false}}}]', 1767654030, '{"userVisible":true,"agentVisible":true}');
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES ('20260105_2', 'assistant', '[{"type": "contextLengthExceeded", "msg": "Context limit reached; summarizing."}, {"type": "text", "text": "Audit clean."}]', 1767654040, '{"userVisible":true,"agentVisible":true}');
