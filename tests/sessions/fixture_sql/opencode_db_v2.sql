-- A newer opencode.db: sessions recorded as v2 session messages (table session_message, content inline)
-- beside one session still in the older message/part tables (structure only, invented content).
CREATE TABLE `__drizzle_migrations` (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric);
CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `sandboxes` text NOT NULL DEFAULT '[]');
CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text,
  `slug` text NOT NULL, `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `share_url` text,
  `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text,
  `revert` text, `permission` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_compacting` integer, `time_archived` integer,
  FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE cascade);
CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL,
  FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE cascade);
CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE cascade);
CREATE TABLE `todo` (`session_id` text NOT NULL, `content` text NOT NULL, `status` text NOT NULL,
  `priority` text NOT NULL, `position` integer NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  PRIMARY KEY(`session_id`, `position`));
CREATE INDEX `message_session_idx` ON `message` (`session_id`);
CREATE INDEX `part_message_idx` ON `part` (`message_id`);

CREATE TABLE `session_message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `type` text NOT NULL,
  `seq` integer NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE cascade);
CREATE INDEX `session_message_session_idx` ON `session_message` (`session_id`);

INSERT INTO project VALUES ('5e2f1a', '/srv/billing', 'git', NULL, 1780000000000, 1780000000000, '[]');
INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_7b8c9d0e1ffeV2Sess', '5e2f1a', NULL, 'quiet-owl', '/srv/billing', 'Retry failed invoices', '2.0.3', 1780000100000, 1780000400000),('ses_7b8c9d0e0ffeV1Sess', '5e2f1a', NULL, 'old-elk', '/srv/billing', 'Old session', '1.2.4', 1780000000000, 1780000050000);
INSERT INTO session_message VALUES ('evt_01', 'ses_7b8c9d0e1ffeV2Sess', 'agent-switched', 1, 1780000100000, 1780000100000, '{"agent": "build", "time": {"created": 1780000100000}}');
INSERT INTO session_message VALUES ('evt_02', 'ses_7b8c9d0e1ffeV2Sess', 'user', 2, 1780000100100, 1780000100100, '{"text": "retry invoices that failed with a 503", "files": [{"mime": "image/png", "filename": "dashboard.png", "url": "data:image/png;base64,AAAA"}], "time": {"created": 1780000100100}}');
INSERT INTO session_message VALUES ('evt_03', 'ses_7b8c9d0e1ffeV2Sess', 'assistant', 3, 1780000100900, 1780000100900, '{"agent": "build", "model": {"id": "claude-sonnet-5", "providerID": "anthropic"}, "content": [{"type": "reasoning", "id": "r1", "text": "Find where invoices are charged."}, {"type": "text", "text": "Looking at the charge loop."}, {"type": "tool", "id": "call_g1", "name": "grep", "state": {"status": "completed", "input": {"pattern": "charge("}, "content": [{"type": "text", "text": "billing/run.py:42: charge(invoice)"}], "structured": {}}, "time": {"created": 1780000101000, "completed": 1780000101500}}, {"type": "text", "text": "The loop gives up after the first 503."}], "finish": "stop", "time": {"created": 1780000100900, "completed": 1780000102000}}');
INSERT INTO session_message VALUES ('evt_04', 'ses_7b8c9d0e1ffeV2Sess', 'shell', 4, 1780000200000, 1780000200000, '{"callID": "sh_1", "command": "pytest -q billing", "output": "4 passed", "time": {"created": 1780000200000, "completed": 1780000201000}}');
INSERT INTO session_message VALUES ('evt_05', 'ses_7b8c9d0e1ffeV2Sess', 'synthetic', 5, 1780000202000, 1780000202000, '{"sessionID": "ses_7b8c9d0e1ffeV2Sess", "text": "The user interrupted the previous step.", "time": {"created": 1780000202000}}');
INSERT INTO session_message VALUES ('evt_06', 'ses_7b8c9d0e1ffeV2Sess', 'assistant', 6, 1780000300000, 1780000300000, '{"agent": "build", "model": {"id": "claude-sonnet-5", "providerID": "anthropic"}, "content": [{"type": "tool", "id": "call_e1", "name": "edit", "state": {"status": "error", "input": {"path": "billing/run.py"}, "content": [], "structured": {}, "error": {"type": "unknown", "message": "file changed on disk"}}, "time": {"created": 1780000300000}}, {"type": "text", "text": "hidden", "ignored": true}], "error": {"name": "MessageAbortedError", "message": "aborted by the user"}, "time": {"created": 1780000300000, "completed": 1780000300500}}');
INSERT INTO session_message VALUES ('evt_07', 'ses_7b8c9d0e1ffeV2Sess', 'compaction', 7, 1780000400000, 1780000400000, '{"reason": "auto", "summary": "Invoices now retry 503s with backoff.", "time": {"created": 1780000400000}}');
INSERT INTO message VALUES ('msg_d1000001', 'ses_7b8c9d0e0ffeV1Sess', 1780000000100, 1780000000100, '{"role": "user", "time": {"created": 1780000000100}, "agent": "build"}');
INSERT INTO part VALUES ('prt_d0000', 'msg_d1000001', 'ses_7b8c9d0e0ffeV1Sess', 1780000000100, 1780000000100, '{"type": "text", "text": "list the billing jobs"}');
