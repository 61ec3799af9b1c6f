-- Accounts, teams and settings. Timestamps are Unix seconds.
CREATE TABLE teams (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE users (
    id BIGSERIAL PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    is_admin BIGINT NOT NULL DEFAULT 0, -- flags are 0/1 integers: one SQL text serves both backends
    disabled BIGINT NOT NULL DEFAULT 0,
    kind TEXT NOT NULL DEFAULT 'human',
    team_id BIGINT REFERENCES teams(id) ON DELETE CASCADE,
    source TEXT NOT NULL DEFAULT 'manual',
    push_topic TEXT,
    onboarding_dismissed_at BIGINT,
    created_at BIGINT NOT NULL
);

CREATE TABLE team_members (
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'manual',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members(user_id);

CREATE TABLE sessions (
    id BIGSERIAL PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    max_expires_at BIGINT
);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE api_keys (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT
);
CREATE INDEX api_keys_user ON api_keys(user_id);

CREATE TABLE login_failures (
    id BIGSERIAL PRIMARY KEY,
    username TEXT NOT NULL,
    address TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX login_failures_username ON login_failures(username, at);
CREATE INDEX login_failures_address ON login_failures(address, at);

CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- One row per guarded count ("the last administrator"): transactions that check such a count
-- update the row first, which serializes them on PostgreSQL as SQLite's single writer does.
CREATE TABLE guard_locks (
    name TEXT PRIMARY KEY
);
INSERT INTO guard_locks (name) VALUES ('admins');
