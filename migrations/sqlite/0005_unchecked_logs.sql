-- The outbox, the timeline and the acknowledge tokens lose their foreign keys, as on PostgreSQL
-- (see its 0005): deleting a team or a user removes or detaches their rows in code. SQLite cannot
-- drop a constraint, so each table is rebuilt with the same columns, ids and indexes.
CREATE TABLE timeline_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id BIGINT NOT NULL,
    at BIGINT NOT NULL,
    kind TEXT NOT NULL,
    actor_id BIGINT,
    text TEXT NOT NULL
);
INSERT INTO timeline_new (id, incident_id, at, kind, actor_id, text)
    SELECT id, incident_id, at, kind, actor_id, text FROM timeline;
DROP TABLE timeline;
ALTER TABLE timeline_new RENAME TO timeline;
CREATE INDEX timeline_incident ON timeline(incident_id);

CREATE TABLE pages_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id BIGINT NOT NULL,
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
    sent_at BIGINT
);
INSERT INTO pages_new (id, incident_id, kind, topic, user_id, detail, state, attempts, due_at,
        claimed_by, claimed_until, last_error, created_at, sent_at)
    SELECT id, incident_id, kind, topic, user_id, detail, state, attempts, due_at,
        claimed_by, claimed_until, last_error, created_at, sent_at FROM pages;
DROP TABLE pages;
ALTER TABLE pages_new RENAME TO pages;
CREATE INDEX pages_due ON pages(due_at) WHERE state = 'pending';
CREATE INDEX pages_incident ON pages(incident_id);

CREATE TABLE ack_tokens_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash TEXT NOT NULL UNIQUE,
    incident_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);
INSERT INTO ack_tokens_new (id, token_hash, incident_id, user_id, expires_at, used_at)
    SELECT id, token_hash, incident_id, user_id, expires_at, used_at FROM ack_tokens;
DROP TABLE ack_tokens;
ALTER TABLE ack_tokens_new RENAME TO ack_tokens;
CREATE INDEX ack_tokens_expiry ON ack_tokens(expires_at);
