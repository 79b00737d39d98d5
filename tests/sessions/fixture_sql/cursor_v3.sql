-- Cursor 3 globalStorage/state.vscdb: the composer index moved to ItemTable composer.composerHeaders,
-- composerData keeps only the bubble headers (no name, no times).
CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);

INSERT INTO ItemTable VALUES ('cursorAuth/refreshToken', 'FAKE-REFRESH-TOKEN-NEVER-READ');
INSERT INTO ItemTable VALUES ('composer.composerHeaders', '{"allComposers": [{"type": "head", "composerId": "4c3b2a19-0f8e-4d7c-b6a5-948372615a0b", "name": "Flaky upload retry", "createdAt": 1776141470160, "lastUpdatedAt": 1776141590000, "unifiedMode": "agent", "forceMode": "edit", "subtitle": "Read upload.ts", "isArchived": false, "isDraft": false, "contextUsagePercent": 12.5}]}');
INSERT INTO cursorDiskKV VALUES ('composerData:4c3b2a19-0f8e-4d7c-b6a5-948372615a0b', '{"_v": 14, "composerId": "4c3b2a19-0f8e-4d7c-b6a5-948372615a0b", "text": "", "richText": "", "fullConversationHeadersOnly": [{"bubbleId": "u1", "type": 1}, {"bubbleId": "a1", "type": 2}], "hasLoaded": true}');
INSERT INTO cursorDiskKV VALUES ('bubbleId:4c3b2a19-0f8e-4d7c-b6a5-948372615a0b:u1', '{"_v": 3, "type": 1, "bubbleId": "u1", "text": "the upload retry gives up after one attempt, why?", "richText": "{\"root\":{\"children\":[]}}", "createdAt": "2026-04-14T04:37:51.000Z", "unifiedMode": 2, "checkpointId": "cp-1", "modelInfo": {"modelName": "gpt-5.4"}}');
INSERT INTO cursorDiskKV VALUES ('bubbleId:4c3b2a19-0f8e-4d7c-b6a5-948372615a0b:a1', '{"_v": 3, "type": 2, "bubbleId": "a1", "text": "maxAttempts is read from the wrong option key, so it is always 1.", "createdAt": "2026-04-14T04:39:50.000Z", "unifiedMode": 2, "turnDurationMs": 4217, "tokenCount": {"inputTokens": 0, "outputTokens": 0}}');
