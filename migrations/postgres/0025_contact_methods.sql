-- A person's roads to be paged by (domain::contact), besides the push topic on the user row.
CREATE TABLE contact_methods (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('ntfy', 'webpush', 'email')),
    name TEXT NOT NULL,
    -- The topic, the address, or a Web Push subscription's endpoint.
    target TEXT NOT NULL,
    -- A subscription's keys (RFC 8291), base64url without padding.
    p256dh TEXT,
    auth TEXT,
    -- Paged only once verified. An email address is verified by a code sent to it: its hash,
    -- when it lapses, the wrong guesses at it, and when it was sent.
    verified_at BIGINT,
    code_hash TEXT,
    code_expires_at BIGINT,
    code_attempts BIGINT NOT NULL DEFAULT 0,
    code_sent_at BIGINT,
    created_at BIGINT NOT NULL,
    UNIQUE (user_id, kind, target)
);
