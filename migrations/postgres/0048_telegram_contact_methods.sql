-- A person's Telegram chat with the install's bot as a contact method (core::roads::telegram),
-- made verified when the person links their Telegram account there (core::chat::telegram).
ALTER TABLE contact_methods DROP CONSTRAINT contact_methods_kind_check;
ALTER TABLE contact_methods ADD CONSTRAINT contact_methods_kind_check
    CHECK (kind IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice', 'telegram'));
ALTER TABLE pages DROP CONSTRAINT pages_road_check;
ALTER TABLE pages ADD CONSTRAINT pages_road_check
    CHECK (road IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice', 'telegram'));
