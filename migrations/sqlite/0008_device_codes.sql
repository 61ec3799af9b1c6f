-- Klaxon's device flow: a terminal's request for a session, approved from a signed-in browser.
-- Both codes are stored as SHA-256; the user code is short, so it is found only through its hash
-- and only while pending and unexpired.
CREATE TABLE device_codes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    device_code_hash TEXT NOT NULL UNIQUE,
    user_code_hash TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'denied', 'redeemed')),
    user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
    session_ceiling BIGINT,
    last_polled_at BIGINT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX device_codes_expiry ON device_codes(expires_at);
