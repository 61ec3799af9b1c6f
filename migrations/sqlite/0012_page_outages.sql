-- A page whose last attempt failed because the push service was down, erroring or rate
-- limiting (not because of the page itself): it is retried as soon as any publish succeeds,
-- and later pages of its incident wait for it, so they arrive in order after an outage.
ALTER TABLE pages ADD COLUMN outage BIGINT NOT NULL DEFAULT 0 CHECK (outage IN (0, 1));
