-- Grafana's webhook contact point posts the Alertmanager payload: a second integration kind.
DROP TRIGGER integrations_kind_insert_check;
DROP TRIGGER integrations_kind_update_check;
CREATE TRIGGER integrations_kind_insert_check BEFORE INSERT ON integrations
WHEN NOT NEW.kind IN ('alertmanager', 'grafana')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
CREATE TRIGGER integrations_kind_update_check BEFORE UPDATE OF kind ON integrations
WHEN NOT NEW.kind IN ('alertmanager', 'grafana')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
