-- A summary push that carried several pages of one topic when it was flooded (paging::bundle).
CREATE TABLE page_bundles (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    user_id BIGINT,
    created_at BIGINT NOT NULL
);
-- The summary a page went (or is going) out in, and whether it waits for its topic's next one.
ALTER TABLE pages ADD COLUMN bundle_id BIGINT;
ALTER TABLE pages ADD COLUMN bundled BIGINT NOT NULL DEFAULT 0 CHECK (bundled IN (0, 1));
CREATE INDEX pages_bundle ON pages(bundle_id) WHERE bundle_id IS NOT NULL;
-- A page waits behind an earlier page to its topic that waits for the push service.
CREATE INDEX pages_pending_topic ON pages(topic, id) WHERE state = 'pending';
-- The pushes of the last minute, counted per topic for every delivery batch.
CREATE INDEX pages_sent ON pages(sent_at) WHERE sent_at IS NOT NULL;
-- An Acknowledge-all token acts on its bundle's incidents.
ALTER TABLE ack_tokens ADD COLUMN bundle_id BIGINT;
-- A topic the push service refused with 429 waits until then; other topics go on.
CREATE TABLE topic_backoff (
    topic TEXT PRIMARY KEY,
    retry_at BIGINT NOT NULL
);
