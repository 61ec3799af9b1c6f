-- Paging: the escalation policy, the outbox of pages, push acknowledge tokens, and each
-- incident's paging state.

-- The topic and user the opening page went to; reminders and the all-clear reuse them.
ALTER TABLE incidents ADD COLUMN page_topic TEXT;
ALTER TABLE incidents ADD COLUMN page_user_id BIGINT REFERENCES users(id) ON DELETE SET NULL;
ALTER TABLE incidents ADD COLUMN opening_sent BIGINT NOT NULL DEFAULT 0;
-- Teams without a ladder: when the opening topic was last paged (NULL: no reminders).
ALTER TABLE incidents ADD COLUMN reminded_at BIGINT;
-- Teams with a ladder: the next step to enter and when (esc_due_at NULL once exhausted).
ALTER TABLE incidents ADD COLUMN esc_step BIGINT;
ALTER TABLE incidents ADD COLUMN esc_due_at BIGINT;
-- The notifier's due scans read only incidents that can still be paged.
CREATE INDEX incidents_remind_due ON incidents(reminded_at) WHERE state = 'triggered' AND archived_at IS NULL;
CREATE INDEX incidents_escalation_due ON incidents(esc_due_at) WHERE state = 'triggered' AND archived_at IS NULL;
CREATE INDEX incidents_snoozed ON incidents(snoozed_until) WHERE snoozed_until IS NOT NULL;
-- A page carries the last fix of a similar incident: resolution notes are read newest first.
CREATE INDEX incident_notes_resolution ON incident_notes(id) WHERE resolution = 1;

-- One per team, replaced wholesale: the policy as its JSON wire shape.
CREATE TABLE escalation_policies (
    team_id BIGINT PRIMARY KEY REFERENCES teams(id) ON DELETE CASCADE,
    policy TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- The outbox: a page is written in the transaction of the event that caused it.
CREATE TABLE pages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    topic TEXT NOT NULL,
    user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    detail TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'pending',
    attempts BIGINT NOT NULL DEFAULT 0,
    due_at BIGINT NOT NULL,
    claimed_by TEXT,
    claimed_until BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    sent_at BIGINT
);
CREATE INDEX pages_due ON pages(due_at) WHERE state = 'pending';
CREATE INDEX pages_incident ON pages(incident_id);

CREATE TABLE ack_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash TEXT NOT NULL UNIQUE,
    incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);
CREATE INDEX ack_tokens_expiry ON ack_tokens(expires_at);

-- The sweeper finds alerts past ends_at by index, as it finds stale ones by alerts_firing.
CREATE INDEX alerts_firing_ends ON alerts(status, ends_at);
