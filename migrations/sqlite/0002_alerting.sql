-- Integrations, alerts, incidents with notes and timeline, the on-call schedule, loop leases.
CREATE TABLE integrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    last_webhook_at BIGINT,
    last_alert_at BIGINT
);
CREATE INDEX integrations_team ON integrations(team_id);

CREATE TABLE incidents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    state TEXT NOT NULL,
    severity TEXT NOT NULL,
    group_key TEXT NOT NULL,
    signature TEXT NOT NULL,
    assignee_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    acknowledged_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
    acknowledged_at BIGINT,
    snoozed_until BIGINT,
    resolved_at BIGINT,
    archived_at BIGINT,
    created_at BIGINT NOT NULL
);
-- At most one open incident per (team, group key): concurrent intake correlates instead of duplicating.
CREATE UNIQUE INDEX incidents_open_group ON incidents(team_id, group_key) WHERE state <> 'resolved';
CREATE INDEX incidents_team_state ON incidents(team_id, state);
CREATE INDEX incidents_signature ON incidents(team_id, signature);

CREATE TABLE alerts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    labels TEXT NOT NULL,
    annotations TEXT NOT NULL,
    starts_at BIGINT NOT NULL,
    ends_at BIGINT,
    received_at BIGINT NOT NULL,
    resolution_source TEXT,
    archived_at BIGINT,
    incident_id BIGINT REFERENCES incidents(id) ON DELETE SET NULL,
    integration_id BIGINT REFERENCES integrations(id) ON DELETE SET NULL,
    alertname TEXT NOT NULL,
    UNIQUE (team_id, fingerprint)
);
CREATE INDEX alerts_incident ON alerts(incident_id);
CREATE INDEX alerts_firing ON alerts(status, received_at);
CREATE INDEX alerts_integration ON alerts(integration_id, received_at);

CREATE TABLE incident_notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    author_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    text TEXT NOT NULL,
    resolution BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
CREATE INDEX incident_notes_incident ON incident_notes(incident_id);

CREATE TABLE timeline (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    at BIGINT NOT NULL,
    kind TEXT NOT NULL,
    actor_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    text TEXT NOT NULL
);
CREATE INDEX timeline_incident ON timeline(incident_id);

CREATE TABLE schedule (
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    date TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, date)
);

-- Which replica runs each loop: taken by a conditional update, expiring on its own.
CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
INSERT INTO leases (name, holder, expires_at) VALUES ('sweeper', '', 0);
