-- Limited attempts (sign-in failures per username and per address, sign-ups, device sign-ins,
-- unknown device codes, single sign-ons) as one counter row per (kind, subject) and window. A
-- conditional upsert on that row both counts an attempt and decides it, so a burst of concurrent
-- attempts cannot all pass a check made before any of them was counted.
CREATE TABLE attempt_counts (
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    attempts BIGINT NOT NULL,
    PRIMARY KEY (kind, subject)
);
CREATE INDEX attempt_counts_window ON attempt_counts(window_start);
DROP TABLE login_failures;
DROP TABLE signup_attempts;
DROP TABLE address_attempts;
