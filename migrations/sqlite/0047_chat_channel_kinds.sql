-- Three more channel kinds (domain::channel): a Mattermost incoming webhook whose messages carry
-- buttons that act in Klaxon, and a Telegram chat and a Discord channel the install's bots post
-- to. SQLite cannot widen a CHECK in place, and this runs in the migrator's transaction with
-- foreign keys on, where a dropped parent table takes its children's rows with it. So the table
-- and its one child, channel_posts, are both rebuilt: the old parent is renamed first (its child
-- follows the name), the new tables are filled, then the old ones are dropped child first.
ALTER TABLE channels RENAME TO channels_old;
CREATE TABLE channels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('matrix', 'slack', 'teams', 'webhook', 'mattermost', 'telegram', 'discord')),
    target TEXT NOT NULL,
    signing_secret TEXT,
    events TEXT NOT NULL,
    severities TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    last_sent_at BIGINT,
    -- The first failure of the current run of failures, and the last one's sentence.
    failing_since BIGINT,
    last_error TEXT,
    -- A 429's Retry-After (or Matrix's retry_after_ms): nothing goes to the channel before it.
    retry_at BIGINT,
    proof_code TEXT,
    room_id TEXT,
    proven_at BIGINT
);
INSERT INTO channels (id, team_id, name, kind, target, signing_secret, events, severities,
    created_at, last_sent_at, failing_since, last_error, retry_at, proof_code, room_id, proven_at)
SELECT id, team_id, name, kind, target, signing_secret, events, severities, created_at,
    last_sent_at, failing_since, last_error, retry_at, proof_code, room_id, proven_at
FROM channels_old;

CREATE TABLE channel_posts_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id BIGINT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    event TEXT NOT NULL CHECK (event IN ('opened', 'acknowledged', 'escalated', 'resolved', 'reassigned', 'resolution_note')),
    at BIGINT NOT NULL,
    actor_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    text TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
    due_at BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    -- It waited for a storm summary: it goes in the next one, never alone.
    waited BIGINT NOT NULL DEFAULT 0 CHECK (waited IN (0, 1)),
    claimed_by TEXT,
    claimed_until BIGINT,
    sent_at BIGINT,
    -- The post whose message carried this one (a storm summary); none for its own message.
    carried_by BIGINT,
    error TEXT
);
INSERT INTO channel_posts_new (id, channel_id, incident_id, event, at, actor_id, text, state,
    due_at, attempts, waited, claimed_by, claimed_until, sent_at, carried_by, error)
SELECT id, channel_id, incident_id, event, at, actor_id, text, state, due_at, attempts, waited,
    claimed_by, claimed_until, sent_at, carried_by, error
FROM channel_posts;
DROP TABLE channel_posts;
DROP TABLE channels_old;
ALTER TABLE channel_posts_new RENAME TO channel_posts;
CREATE INDEX channels_team ON channels(team_id);
CREATE UNIQUE INDEX channels_room ON channels(room_id) WHERE room_id IS NOT NULL;
CREATE INDEX channel_posts_due ON channel_posts(due_at, id) WHERE state = 'pending';
CREATE INDEX channel_posts_channel ON channel_posts(channel_id, id);
