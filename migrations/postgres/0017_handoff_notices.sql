-- Hand-off notices: at a time of day a team chooses (UTC), tomorrow's on-call person is told, and
-- when a day ends its outgoing person is. They go through the pages outbox with its retries, so
-- a page no longer always belongs to an incident: incident_id may be NULL, and team_id names the
-- team of a notice.
CREATE TABLE handoffs (
    team_id BIGINT PRIMARY KEY REFERENCES teams(id) ON DELETE CASCADE,
    enabled BIGINT NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
    -- Minutes after 00:00 UTC.
    at_minute BIGINT NOT NULL DEFAULT 540 CHECK (at_minute >= 0 AND at_minute < 1440),
    -- The last UTC date whose "on call tomorrow" notice was queued, and whose day-ended notice was.
    notified_on TEXT,
    ended_on TEXT
);

ALTER TABLE pages ALTER COLUMN incident_id DROP NOT NULL;
ALTER TABLE pages ADD COLUMN team_id BIGINT;
ALTER TABLE pages DROP CONSTRAINT pages_kind_check;
ALTER TABLE pages ADD CONSTRAINT pages_kind_check
    CHECK (kind IN ('opening', 'reminder', 'escalation', 'fallback', 'all_clear', 'handoff'));
