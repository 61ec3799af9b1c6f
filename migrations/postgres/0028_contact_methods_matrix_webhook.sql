-- Two more roads (domain::contact): a Matrix account and a signed webhook, with a webhook's
-- signing secret and the direct room the Matrix bot opened with the account.
ALTER TABLE contact_methods DROP CONSTRAINT contact_methods_kind_check;
ALTER TABLE contact_methods ADD CONSTRAINT contact_methods_kind_check
    CHECK (kind IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook'));
ALTER TABLE contact_methods ADD COLUMN signing_secret TEXT;
ALTER TABLE contact_methods ADD COLUMN room TEXT;
