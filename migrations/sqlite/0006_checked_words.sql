-- The columns that hold one of a few words (or a 0/1 flag) refuse anything else, as PostgreSQL's
-- CHECK constraints do (see its 0006). SQLite cannot add a constraint to an existing table, and
-- rebuilding tables that others reference would run their cascades, so triggers refuse the
-- write instead: the same rule, checked on every insert and on every update of the column.

CREATE TRIGGER users_kind_insert_check BEFORE INSERT ON users
WHEN NOT NEW.kind IN ('human', 'service')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: users_kind_check'); END;
CREATE TRIGGER users_kind_update_check BEFORE UPDATE OF kind ON users
WHEN NOT NEW.kind IN ('human', 'service')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: users_kind_check'); END;
CREATE TRIGGER users_is_admin_insert_check BEFORE INSERT ON users
WHEN NOT NEW.is_admin IN (0, 1)
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: users_is_admin_check'); END;
CREATE TRIGGER users_is_admin_update_check BEFORE UPDATE OF is_admin ON users
WHEN NOT NEW.is_admin IN (0, 1)
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: users_is_admin_check'); END;
CREATE TRIGGER users_disabled_insert_check BEFORE INSERT ON users
WHEN NOT NEW.disabled IN (0, 1)
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: users_disabled_check'); END;
CREATE TRIGGER users_disabled_update_check BEFORE UPDATE OF disabled ON users
WHEN NOT NEW.disabled IN (0, 1)
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: users_disabled_check'); END;
CREATE TRIGGER team_members_role_insert_check BEFORE INSERT ON team_members
WHEN NOT NEW.role IN ('member', 'owner')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: team_members_role_check'); END;
CREATE TRIGGER team_members_role_update_check BEFORE UPDATE OF role ON team_members
WHEN NOT NEW.role IN ('member', 'owner')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: team_members_role_check'); END;
CREATE TRIGGER integrations_kind_insert_check BEFORE INSERT ON integrations
WHEN NOT NEW.kind IN ('alertmanager')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
CREATE TRIGGER integrations_kind_update_check BEFORE UPDATE OF kind ON integrations
WHEN NOT NEW.kind IN ('alertmanager')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: integrations_kind_check'); END;
CREATE TRIGGER incidents_state_insert_check BEFORE INSERT ON incidents
WHEN NOT NEW.state IN ('triggered', 'acknowledged', 'resolved')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: incidents_state_check'); END;
CREATE TRIGGER incidents_state_update_check BEFORE UPDATE OF state ON incidents
WHEN NOT NEW.state IN ('triggered', 'acknowledged', 'resolved')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: incidents_state_check'); END;
CREATE TRIGGER incidents_severity_insert_check BEFORE INSERT ON incidents
WHEN NOT NEW.severity IN ('info', 'warning', 'critical')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: incidents_severity_check'); END;
CREATE TRIGGER incidents_severity_update_check BEFORE UPDATE OF severity ON incidents
WHEN NOT NEW.severity IN ('info', 'warning', 'critical')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: incidents_severity_check'); END;
CREATE TRIGGER incidents_opening_sent_insert_check BEFORE INSERT ON incidents
WHEN NOT NEW.opening_sent IN (0, 1)
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: incidents_opening_sent_check'); END;
CREATE TRIGGER incidents_opening_sent_update_check BEFORE UPDATE OF opening_sent ON incidents
WHEN NOT NEW.opening_sent IN (0, 1)
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: incidents_opening_sent_check'); END;
CREATE TRIGGER alerts_status_insert_check BEFORE INSERT ON alerts
WHEN NOT NEW.status IN ('firing', 'resolved')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: alerts_status_check'); END;
CREATE TRIGGER alerts_status_update_check BEFORE UPDATE OF status ON alerts
WHEN NOT NEW.status IN ('firing', 'resolved')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: alerts_status_check'); END;
CREATE TRIGGER alerts_resolution_source_insert_check BEFORE INSERT ON alerts
WHEN NOT (NEW.resolution_source IS NULL OR NEW.resolution_source IN ('alertmanager', 'expiry'))
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: alerts_resolution_source_check'); END;
CREATE TRIGGER alerts_resolution_source_update_check BEFORE UPDATE OF resolution_source ON alerts
WHEN NOT (NEW.resolution_source IS NULL OR NEW.resolution_source IN ('alertmanager', 'expiry'))
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: alerts_resolution_source_check'); END;
CREATE TRIGGER incident_notes_resolution_insert_check BEFORE INSERT ON incident_notes
WHEN NOT NEW.resolution IN (0, 1)
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: incident_notes_resolution_check'); END;
CREATE TRIGGER incident_notes_resolution_update_check BEFORE UPDATE OF resolution ON incident_notes
WHEN NOT NEW.resolution IN (0, 1)
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: incident_notes_resolution_check'); END;
CREATE TRIGGER pages_kind_insert_check BEFORE INSERT ON pages
WHEN NOT NEW.kind IN ('opening', 'reminder', 'escalation', 'fallback', 'all_clear')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_kind_check'); END;
CREATE TRIGGER pages_kind_update_check BEFORE UPDATE OF kind ON pages
WHEN NOT NEW.kind IN ('opening', 'reminder', 'escalation', 'fallback', 'all_clear')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_kind_check'); END;
CREATE TRIGGER pages_state_insert_check BEFORE INSERT ON pages
WHEN NOT NEW.state IN ('pending', 'sent', 'failed', 'cancelled')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_state_check'); END;
CREATE TRIGGER pages_state_update_check BEFORE UPDATE OF state ON pages
WHEN NOT NEW.state IN ('pending', 'sent', 'failed', 'cancelled')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: pages_state_check'); END;
CREATE TRIGGER deadman_switches_severity_insert_check BEFORE INSERT ON deadman_switches
WHEN NOT NEW.severity IN ('info', 'warning', 'critical')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: deadman_switches_severity_check'); END;
CREATE TRIGGER deadman_switches_severity_update_check BEFORE UPDATE OF severity ON deadman_switches
WHEN NOT NEW.severity IN ('info', 'warning', 'critical')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: deadman_switches_severity_check'); END;
