-- Any JSON sender, read by the integration's own Jinja templates (core::sources::webhook): a fifth
-- integration kind, its templates kept as JSON with it.
ALTER TABLE integrations ADD COLUMN templates TEXT;
DROP TRIGGER integrations_kind_insert_check;
DROP TRIGGER integrations_kind_update_check;
CREATE TRIGGER integrations_kind_insert_check BEFORE INSERT ON integrations
WHEN NOT NEW.kind IN ('alertmanager', 'grafana', 'pagerduty', 'opsgenie', 'webhook')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
CREATE TRIGGER integrations_kind_update_check BEFORE UPDATE OF kind ON integrations
WHEN NOT NEW.kind IN ('alertmanager', 'grafana', 'pagerduty', 'opsgenie', 'webhook')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
