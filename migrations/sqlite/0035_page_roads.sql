-- A page names its road and, for a person's contact method, the method, in typed columns
-- (core::roads): the outbox's `topic` stays the destination's key (the ntfy topic, or
-- `road:method_id`), which orders a destination's pages and holds its backoff. Rows queued before
-- are converted in place, pending and claimed ones alike, so none is lost or sent twice.
ALTER TABLE pages ADD COLUMN road TEXT NOT NULL DEFAULT 'ntfy'
    CHECK (road IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook'));
ALTER TABLE pages ADD COLUMN method_id BIGINT;
UPDATE pages SET road = substr(topic, 1, instr(topic, ':') - 1),
    method_id = CAST(substr(topic, instr(topic, ':') + 1) AS INTEGER)
WHERE (topic LIKE 'webpush:%' OR topic LIKE 'email:%' OR topic LIKE 'matrix:%' OR topic LIKE 'webhook:%')
    AND substr(topic, instr(topic, ':') + 1) <> ''
    AND substr(topic, instr(topic, ':') + 1) NOT GLOB '*[^0-9]*';
