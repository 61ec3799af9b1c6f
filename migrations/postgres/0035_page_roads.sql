-- A page names its road and, for a person's contact method, the method, in typed columns
-- (core::roads): the outbox's `topic` stays the destination's key (the ntfy topic, or
-- `road:method_id`), which orders a destination's pages and holds its backoff. Rows queued before
-- are converted in place, pending and claimed ones alike, so none is lost or sent twice.
ALTER TABLE pages ADD COLUMN road TEXT NOT NULL DEFAULT 'ntfy'
    CHECK (road IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook'));
ALTER TABLE pages ADD COLUMN method_id BIGINT;
UPDATE pages SET road = split_part(topic, ':', 1), method_id = split_part(topic, ':', 2)::BIGINT
WHERE topic ~ '^(webpush|email|matrix|webhook):[0-9]+$';
