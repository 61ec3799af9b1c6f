-- Two more roads (core::roads::sms, core::roads::voice): a phone number texted or rung through
-- a provider (core::roads::phone), which a method may name. SQLite cannot widen a CHECK in
-- place, so contact_methods (with its child notification_steps, as in 0028) and pages are
-- rebuilt; their road checks become triggers, which the next road replaces without a rebuild.
-- AUTOINCREMENT counters are carried over, so no id is handed out twice.
ALTER TABLE contact_methods RENAME TO contact_methods_old;
CREATE TABLE contact_methods (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    -- The topic, the address, a Web Push subscription's endpoint, the Matrix user id, the
    -- webhook's URL or the phone number (E.164).
    target TEXT NOT NULL,
    -- A subscription's keys (RFC 8291), base64url without padding.
    p256dh TEXT,
    auth TEXT,
    -- Paged only once verified: an address, an account, a webhook or a number by a code sent
    -- by that road: its hash, when it lapses, the wrong guesses at it, and when it was sent.
    verified_at BIGINT,
    code_hash TEXT,
    code_expires_at BIGINT,
    code_attempts BIGINT NOT NULL DEFAULT 0,
    code_sent_at BIGINT,
    created_at BIGINT NOT NULL,
    -- A webhook's signing secret; the direct room the Matrix bot opened with the account.
    signing_secret TEXT,
    room TEXT,
    -- The phone provider a number's method names; the install's default when NULL.
    provider TEXT,
    UNIQUE (user_id, kind, target)
);
INSERT INTO contact_methods (id, user_id, kind, name, target, p256dh, auth, verified_at,
    code_hash, code_expires_at, code_attempts, code_sent_at, created_at, signing_secret, room)
SELECT id, user_id, kind, name, target, p256dh, auth, verified_at, code_hash, code_expires_at,
    code_attempts, code_sent_at, created_at, signing_secret, room FROM contact_methods_old;
DELETE FROM sqlite_sequence WHERE name = 'contact_methods';
INSERT INTO sqlite_sequence (name, seq) SELECT 'contact_methods', seq FROM sqlite_sequence WHERE name = 'contact_methods_old';
CREATE TRIGGER contact_methods_kind_insert_check BEFORE INSERT ON contact_methods
WHEN NOT NEW.kind IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: contact_methods_kind_check'); END;
CREATE TRIGGER contact_methods_kind_update_check BEFORE UPDATE OF kind ON contact_methods
WHEN NOT NEW.kind IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: contact_methods_kind_check'); END;

CREATE TABLE notification_steps_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    urgency TEXT NOT NULL CHECK (urgency IN ('high', 'low')),
    position BIGINT NOT NULL,
    after_minutes BIGINT NOT NULL CHECK (after_minutes BETWEEN 0 AND 1440),
    method_id BIGINT REFERENCES contact_methods(id) ON DELETE CASCADE
);
INSERT INTO notification_steps_new (id, user_id, urgency, position, after_minutes, method_id)
SELECT id, user_id, urgency, position, after_minutes, method_id FROM notification_steps;
DELETE FROM sqlite_sequence WHERE name = 'notification_steps_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'notification_steps_new', seq FROM sqlite_sequence WHERE name = 'notification_steps';
DROP TABLE notification_steps;
DROP TABLE contact_methods_old;
ALTER TABLE notification_steps_new RENAME TO notification_steps;
CREATE INDEX notification_steps_user ON notification_steps(user_id, urgency, position);

ALTER TABLE pages RENAME TO pages_old;
CREATE TABLE pages (
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
    outage BIGINT NOT NULL DEFAULT 0 CHECK (outage IN (0, 1)),
    first_due_at BIGINT,
    bundle_id BIGINT,
    bundled BIGINT NOT NULL DEFAULT 0 CHECK (bundled IN (0, 1)),
    failed_over BIGINT NOT NULL DEFAULT 0,
    road TEXT NOT NULL DEFAULT 'ntfy',
    method_id BIGINT
);
INSERT INTO pages (id, incident_id, team_id, kind, topic, user_id, detail, state, attempts, due_at,
    claimed_by, claimed_until, last_error, created_at, sent_at, outage, first_due_at, bundle_id,
    bundled, failed_over, road, method_id)
SELECT id, incident_id, team_id, kind, topic, user_id, detail, state, attempts, due_at,
    claimed_by, claimed_until, last_error, created_at, sent_at, outage, first_due_at, bundle_id,
    bundled, failed_over, road, method_id FROM pages_old;
DELETE FROM sqlite_sequence WHERE name = 'pages';
INSERT INTO sqlite_sequence (name, seq) SELECT 'pages', seq FROM sqlite_sequence WHERE name = 'pages_old';
DROP TABLE pages_old;
CREATE INDEX pages_due ON pages(due_at) WHERE state = 'pending';
CREATE INDEX pages_incident ON pages(incident_id);
CREATE INDEX pages_first_due ON pages(first_due_at) WHERE state = 'pending' AND first_due_at IS NOT NULL;
CREATE INDEX pages_bundle ON pages(bundle_id) WHERE bundle_id IS NOT NULL;
CREATE INDEX pages_pending_topic ON pages(topic, id) WHERE state = 'pending';
CREATE INDEX pages_sent ON pages(sent_at) WHERE sent_at IS NOT NULL;
CREATE INDEX pages_incident_user ON pages(incident_id, user_id) WHERE user_id IS NOT NULL;
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
CREATE TRIGGER pages_road_insert_check BEFORE INSERT ON pages
WHEN NOT NEW.road IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_road_check'); END;
CREATE TRIGGER pages_road_update_check BEFORE UPDATE OF road ON pages
WHEN NOT NEW.road IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_road_check'); END;

-- A text's reply code ("4 a7") names the page's acknowledge token among the texts to that number.
CREATE TABLE phone_replies (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    number TEXT NOT NULL,
    code TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    UNIQUE (number, code)
);
CREATE INDEX phone_replies_expiry ON phone_replies(expires_at);
-- Every text and call sent, for the per-method and per-install ceilings (an hour is kept).
CREATE TABLE phone_sends (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    method_id BIGINT,
    road TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX phone_sends_method ON phone_sends(method_id, road, at);
CREATE INDEX phone_sends_at ON phone_sends(at);
-- Numbers that texted STOP: no text goes to them until they text START.
CREATE TABLE phone_stops (
    number TEXT PRIMARY KEY,
    at BIGINT NOT NULL
);
-- Callbacks already acted on (a provider's message or event id), so a replay acts once.
CREATE TABLE phone_seen (
    provider TEXT NOT NULL,
    event_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (provider, event_id)
);
CREATE INDEX phone_seen_at ON phone_seen(at);
-- A provider's report that a page's text or call did not reach its person, kept until the page is
-- recorded as sent (a report can come before the send's own answer is written) and acted on then.
CREATE TABLE phone_reports (
    page_id BIGINT PRIMARY KEY,
    reason TEXT NOT NULL,
    at BIGINT NOT NULL
);
