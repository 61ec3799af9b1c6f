-- Attempts counted per client address by kind (device sign-ins started, device codes not found),
-- each kind with its own limit, apart from the sign-in failures and the sign-ups.
CREATE TABLE address_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    address TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX address_attempts_address ON address_attempts(kind, address, at);
