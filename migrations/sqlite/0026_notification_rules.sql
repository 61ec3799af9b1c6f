-- A person's notification rules (domain::rules): for each urgency, ordered steps "after N
-- minutes, notify by method M"; no method is the person's push topic.
CREATE TABLE notification_steps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    urgency TEXT NOT NULL CHECK (urgency IN ('high', 'low')),
    position BIGINT NOT NULL,
    after_minutes BIGINT NOT NULL CHECK (after_minutes BETWEEN 0 AND 1440),
    method_id BIGINT REFERENCES contact_methods(id) ON DELETE CASCADE
);
CREATE INDEX notification_steps_user ON notification_steps(user_id, urgency, position);
-- Where the person lives (an IANA zone name) and when low-urgency pages wait (local HH:MM).
ALTER TABLE users ADD COLUMN time_zone TEXT;
ALTER TABLE users ADD COLUMN quiet_start TEXT;
ALTER TABLE users ADD COLUMN quiet_end TEXT;
-- The install's VAPID key pair (RFC 8292), made at first start; one row, shared by replicas.
CREATE TABLE vapid_keys (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    private_key TEXT NOT NULL,
    public_key TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
-- A person's pages of one incident, as failing over and the incident page read them.
CREATE INDEX pages_incident_user ON pages(incident_id, user_id) WHERE user_id IS NOT NULL;
-- A page whose road failed has brought its person's next step forward (once).
ALTER TABLE pages ADD COLUMN failed_over BIGINT NOT NULL DEFAULT 0;
