-- Hand-off notices: at a time of day a team chooses (UTC), tomorrow's on-call person is told, and
-- when a day ends its outgoing person is. They go through the pages outbox with its retries, so
-- a page no longer always belongs to an incident: incident_id may be NULL, and team_id names the
-- team of a notice. SQLite cannot drop a NOT NULL: the outbox is rebuilt (as in 0005).
CREATE TABLE handoffs (
    team_id BIGINT PRIMARY KEY REFERENCES teams(id) ON DELETE CASCADE,
    enabled BIGINT NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
    -- Minutes after 00:00 UTC.
    at_minute BIGINT NOT NULL DEFAULT 540 CHECK (at_minute >= 0 AND at_minute < 1440),
    -- The last UTC date whose "on call tomorrow" notice was queued, and whose day-ended notice was.
    notified_on TEXT,
    ended_on TEXT
);

CREATE TABLE pages_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id BIGINT,
    team_id BIGINT,
    kind TEXT NOT NULL,
    topic TEXT NOT NULL,
    user_id BIGINT,
    detail TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'pending',
    attempts BIGINT NOT NULL DEFAULT 0,
    due_at BIGINT NOT NULL,
    claimed_by TEXT,
    claimed_until BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    sent_at BIGINT,
    outage BIGINT NOT NULL DEFAULT 0 CHECK (outage IN (0, 1))
);
INSERT INTO pages_new (id, incident_id, kind, topic, user_id, detail, state, attempts, due_at,
        claimed_by, claimed_until, last_error, created_at, sent_at, outage)
    SELECT id, incident_id, kind, topic, user_id, detail, state, attempts, due_at,
        claimed_by, claimed_until, last_error, created_at, sent_at, outage FROM pages;
DROP TABLE pages;
ALTER TABLE pages_new RENAME TO pages;
CREATE INDEX pages_due ON pages(due_at) WHERE state = 'pending';
CREATE INDEX pages_incident ON pages(incident_id);
CREATE TRIGGER pages_kind_insert_check BEFORE INSERT ON pages
WHEN NOT NEW.kind IN ('opening', 'reminder', 'escalation', 'fallback', 'all_clear', 'handoff')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_kind_check'); END;
CREATE TRIGGER pages_kind_update_check BEFORE UPDATE OF kind ON pages
WHEN NOT NEW.kind IN ('opening', 'reminder', 'escalation', 'fallback', 'all_clear', 'handoff')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_kind_check'); END;
CREATE TRIGGER pages_state_insert_check BEFORE INSERT ON pages
WHEN NOT NEW.state IN ('pending', 'sent', 'failed', 'cancelled')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_state_check'); END;
CREATE TRIGGER pages_state_update_check BEFORE UPDATE OF state ON pages
WHEN NOT NEW.state IN ('pending', 'sent', 'failed', 'cancelled')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_state_check'); END;
