-- Two more roads (core::roads::sms, core::roads::voice): a phone number texted or rung through
-- a provider (core::roads::phone), which a method may name.
ALTER TABLE contact_methods DROP CONSTRAINT contact_methods_kind_check;
ALTER TABLE contact_methods ADD CONSTRAINT contact_methods_kind_check
    CHECK (kind IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice'));
-- The phone provider a number's method names; the install's default when NULL.
ALTER TABLE contact_methods ADD COLUMN provider TEXT;
ALTER TABLE pages DROP CONSTRAINT pages_road_check;
ALTER TABLE pages ADD CONSTRAINT pages_road_check
    CHECK (road IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice'));

-- A text's reply code ("4 a7") names the page's acknowledge token among the texts to that number.
CREATE TABLE phone_replies (
    id BIGSERIAL PRIMARY KEY,
    number TEXT NOT NULL,
    code TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    UNIQUE (number, code)
);
CREATE INDEX phone_replies_expiry ON phone_replies(expires_at);
-- Every text and call sent, for the per-method and per-install ceilings (an hour is kept).
CREATE TABLE phone_sends (
    id BIGSERIAL PRIMARY KEY,
    method_id BIGINT,
    road TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX phone_sends_method ON phone_sends(method_id, road, at);
CREATE INDEX phone_sends_at ON phone_sends(at);
-- Numbers that texted STOP: no text goes to them until they text START.
CREATE TABLE phone_stops (
    number TEXT PRIMARY KEY,
    at BIGINT NOT NULL
);
-- Callbacks already acted on (a provider's message or event id), so a replay acts once.
CREATE TABLE phone_seen (
    provider TEXT NOT NULL,
    event_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (provider, event_id)
);
CREATE INDEX phone_seen_at ON phone_seen(at);
-- A provider's report that a page's text or call did not reach its person, kept until the page is
-- recorded as sent (a report can come before the send's own answer is written) and acted on then.
CREATE TABLE phone_reports (
    page_id BIGINT PRIMARY KEY,
    reason TEXT NOT NULL,
    at BIGINT NOT NULL
);
