-- A person's Telegram chat with the install's bot as a contact method (core::roads::telegram),
-- made verified when the person links their Telegram account there (core::chat::telegram).
-- The road checks are triggers since 0036, replaced here without a rebuild.
DROP TRIGGER contact_methods_kind_insert_check;
DROP TRIGGER contact_methods_kind_update_check;
CREATE TRIGGER contact_methods_kind_insert_check BEFORE INSERT ON contact_methods
WHEN NOT NEW.kind IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice', 'telegram')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: contact_methods_kind_check'); END;
CREATE TRIGGER contact_methods_kind_update_check BEFORE UPDATE OF kind ON contact_methods
WHEN NOT NEW.kind IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice', 'telegram')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: contact_methods_kind_check'); END;
DROP TRIGGER pages_road_insert_check;
DROP TRIGGER pages_road_update_check;
CREATE TRIGGER pages_road_insert_check BEFORE INSERT ON pages
WHEN NOT NEW.road IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice', 'telegram')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_road_check'); END;
CREATE TRIGGER pages_road_update_check BEFORE UPDATE OF road ON pages
WHEN NOT NEW.road IN ('ntfy', 'webpush', 'email', 'matrix', 'webhook', 'sms', 'voice', 'telegram')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_road_check'); END;
