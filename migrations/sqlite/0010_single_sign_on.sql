-- Single sign-on. A person signed in through the identity provider is found by (issuer, subject),
-- never by email or username; the email is kept only to link a hand-made account on first sign-in.
ALTER TABLE users ADD COLUMN email TEXT;
CREATE INDEX users_email ON users(email);

CREATE TABLE user_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    last_sign_in_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities(user_id);

-- A browser sign-in on its way through the provider: found once by the hash of its `state`
-- (also held in the browser's cookie), then deleted.
CREATE TABLE oidc_logins (
    state_hash TEXT PRIMARY KEY,
    nonce TEXT NOT NULL,
    pkce_verifier TEXT NOT NULL,
    next TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX oidc_logins_created ON oidc_logins(created_at);

-- The CHECK constraints PostgreSQL gets, as triggers (see 0006).
CREATE TRIGGER users_source_insert_check BEFORE INSERT ON users
WHEN NOT (NEW.source IN ('manual', 'oidc'))
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: users_source_check'); END;
CREATE TRIGGER users_source_update_check BEFORE UPDATE OF source ON users
WHEN NOT (NEW.source IN ('manual', 'oidc'))
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: users_source_check'); END;
CREATE TRIGGER team_members_source_insert_check BEFORE INSERT ON team_members
WHEN NOT (NEW.source IN ('manual', 'oidc'))
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: team_members_source_check'); END;
CREATE TRIGGER team_members_source_update_check BEFORE UPDATE OF source ON team_members
WHEN NOT (NEW.source IN ('manual', 'oidc'))
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: team_members_source_check'); END;
