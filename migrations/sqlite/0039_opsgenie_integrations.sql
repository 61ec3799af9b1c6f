-- Senders configured for Opsgenie's Alert API post to /v2/alerts with the integration's key as
-- their API key (core::sources::opsgenie): a fourth integration kind.
DROP TRIGGER integrations_kind_insert_check;
DROP TRIGGER integrations_kind_update_check;
CREATE TRIGGER integrations_kind_insert_check BEFORE INSERT ON integrations
WHEN NOT NEW.kind IN ('alertmanager', 'grafana', 'pagerduty', 'opsgenie')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
CREATE TRIGGER integrations_kind_update_check BEFORE UPDATE OF kind ON integrations
WHEN NOT NEW.kind IN ('alertmanager', 'grafana', 'pagerduty', 'opsgenie')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
