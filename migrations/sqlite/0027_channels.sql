-- Team channels (domain::channel): where a team's incidents are announced. `target` is the
-- room or the webhook URL (a secret, never shown back); `events` and `severities` are word
-- lists joined by commas (no severity named is every severity).
CREATE TABLE channels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('matrix', 'slack', 'teams', 'webhook')),
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
    retry_at BIGINT
);
CREATE INDEX channels_team ON channels(team_id);
-- The channels' outbox: one row per channel and event, written in the event's transaction,
-- delivered in order per channel by every replica's announcer under the same lapsing claims
-- as pages (core::channels::deliver).
CREATE TABLE channel_posts (
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
CREATE INDEX channel_posts_due ON channel_posts(due_at, id) WHERE state = 'pending';
CREATE INDEX channel_posts_channel ON channel_posts(channel_id, id);
