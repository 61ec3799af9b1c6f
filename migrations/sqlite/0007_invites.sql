-- Invite links (their token stored as SHA-256), the sign-up limiter's attempts, and each team's
-- single sign-on group mapping (JSON arrays of group names).
CREATE TABLE invites (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('member', 'owner')),
    max_uses BIGINT NOT NULL CHECK (max_uses BETWEEN 1 AND 100),
    uses BIGINT NOT NULL DEFAULT 0 CHECK (uses BETWEEN 0 AND max_uses),
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT,
    created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX invites_team ON invites(team_id);

CREATE TABLE signup_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    address TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX signup_attempts_address ON signup_attempts(address, at);

ALTER TABLE teams ADD COLUMN oidc_member_groups TEXT NOT NULL DEFAULT '[]';
ALTER TABLE teams ADD COLUMN oidc_owner_groups TEXT NOT NULL DEFAULT '[]';
