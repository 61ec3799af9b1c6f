-- Senders configured for PagerDuty's Events API v2 post to /v2/enqueue with the integration's key
-- as their routing key (core::sources::pagerduty): a third integration kind.
DROP TRIGGER integrations_kind_insert_check;
DROP TRIGGER integrations_kind_update_check;
CREATE TRIGGER integrations_kind_insert_check BEFORE INSERT ON integrations
WHEN NOT NEW.kind IN ('alertmanager', 'grafana', 'pagerduty')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
CREATE TRIGGER integrations_kind_update_check BEFORE UPDATE OF kind ON integrations
WHEN NOT NEW.kind IN ('alertmanager', 'grafana', 'pagerduty')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
