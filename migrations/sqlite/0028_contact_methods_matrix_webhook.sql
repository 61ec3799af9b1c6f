-- Two more roads (domain::contact): a Matrix account and a signed webhook. SQLite cannot widen a
-- CHECK in place, and this runs in the migrator's transaction with foreign keys on, where a
-- dropped parent table takes its children's rows with it. So the table and its one child,
-- notification_steps, are both rebuilt: the old parent is renamed first (its child follows the
-- name), the new tables are filled, then the old ones are dropped child first.
ALTER TABLE contact_methods RENAME TO contact_methods_old;
CREATE TABLE contact_methods (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook')),
    name TEXT NOT NULL,
    -- The topic, the address, a Web Push subscription's endpoint, the Matrix user id or the
    -- webhook's URL.
    target TEXT NOT NULL,
    -- A subscription's keys (RFC 8291), base64url without padding.
    p256dh TEXT,
    auth TEXT,
    -- Paged only once verified. An address, an account or a webhook is verified by a code
    -- sent by that road: its hash, when it lapses, the wrong guesses at it, and when it was sent.
    verified_at BIGINT,
    code_hash TEXT,
    code_expires_at BIGINT,
    code_attempts BIGINT NOT NULL DEFAULT 0,
    code_sent_at BIGINT,
    created_at BIGINT NOT NULL,
    -- A webhook's signing secret; the direct room the Matrix bot opened with the account.
    signing_secret TEXT,
    room TEXT,
    UNIQUE (user_id, kind, target)
);
INSERT INTO contact_methods (id, user_id, kind, name, target, p256dh, auth, verified_at,
    code_hash, code_expires_at, code_attempts, code_sent_at, created_at)
SELECT id, user_id, kind, name, target, p256dh, auth, verified_at, code_hash, code_expires_at,
    code_attempts, code_sent_at, created_at FROM contact_methods_old;

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
DROP TABLE notification_steps;
DROP TABLE contact_methods_old;
ALTER TABLE notification_steps_new RENAME TO notification_steps;
CREATE INDEX notification_steps_user ON notification_steps(user_id, urgency, position);
