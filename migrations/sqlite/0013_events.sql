-- Live updates: every change a browser shows is written here by a trigger, in the transaction that
-- made it, so no write path can forget one and a replica sees what another committed. Each replica
-- reads the rows after the last it saw and streams them to its browsers (`GET /api/events`); the
-- sweeper keeps the newest rows only. No foreign keys: this is a log.
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('incident', 'team', 'schedule')),
    subject_id BIGINT NOT NULL,
    team_id BIGINT NOT NULL
);

-- The subject is the incident for incident events, else the team.
CREATE TRIGGER incidents_insert_event AFTER INSERT ON incidents
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('incident', NEW.id, NEW.team_id); END;
CREATE TRIGGER incidents_update_event AFTER UPDATE ON incidents
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('incident', NEW.id, NEW.team_id); END;
CREATE TRIGGER timeline_event AFTER INSERT ON timeline
WHEN (SELECT team_id FROM incidents WHERE id = NEW.incident_id) IS NOT NULL
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('incident', NEW.incident_id, (SELECT team_id FROM incidents WHERE id = NEW.incident_id)); END;
CREATE TRIGGER incident_notes_insert_event AFTER INSERT ON incident_notes
WHEN (SELECT team_id FROM incidents WHERE id = NEW.incident_id) IS NOT NULL
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('incident', NEW.incident_id, (SELECT team_id FROM incidents WHERE id = NEW.incident_id)); END;
CREATE TRIGGER incident_notes_update_event AFTER UPDATE ON incident_notes
WHEN (SELECT team_id FROM incidents WHERE id = NEW.incident_id) IS NOT NULL
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('incident', NEW.incident_id, (SELECT team_id FROM incidents WHERE id = NEW.incident_id)); END;
CREATE TRIGGER teams_event AFTER UPDATE ON teams
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.id, NEW.id); END;
CREATE TRIGGER team_members_insert_event AFTER INSERT ON team_members
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER team_members_update_event AFTER UPDATE ON team_members
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER team_members_delete_event AFTER DELETE ON team_members
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', OLD.team_id, OLD.team_id); END;
CREATE TRIGGER integrations_insert_event AFTER INSERT ON integrations
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER integrations_update_event AFTER UPDATE OF name ON integrations
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER integrations_delete_event AFTER DELETE ON integrations
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', OLD.team_id, OLD.team_id); END;
CREATE TRIGGER deadman_switches_insert_event AFTER INSERT ON deadman_switches
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER deadman_switches_update_event AFTER UPDATE ON deadman_switches
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER deadman_switches_delete_event AFTER DELETE ON deadman_switches
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', OLD.team_id, OLD.team_id); END;
CREATE TRIGGER escalation_policies_insert_event AFTER INSERT ON escalation_policies
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER escalation_policies_update_event AFTER UPDATE ON escalation_policies
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER schedule_insert_event AFTER INSERT ON schedule
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('schedule', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER schedule_update_event AFTER UPDATE ON schedule
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('schedule', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER schedule_delete_event AFTER DELETE ON schedule
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('schedule', OLD.team_id, OLD.team_id); END;
