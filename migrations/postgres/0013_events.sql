-- Live updates: every change a browser shows is written here by a trigger, in the transaction that
-- made it, so no write path can forget one and a replica sees what another committed. Each replica
-- reads the rows after the last it saw (woken by NOTIFY) and streams them to its browsers
-- (`GET /api/events`); the sweeper keeps the newest rows only. No foreign keys: this is a log.
CREATE TABLE events (
    id BIGSERIAL PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('incident', 'team', 'schedule')),
    subject_id BIGINT NOT NULL,
    team_id BIGINT NOT NULL
);

-- TG_ARGV[0] is the event kind; the subject is the incident for incident events, else the team.
CREATE FUNCTION klaxon_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
    subject BIGINT;
    team BIGINT;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    IF TG_TABLE_NAME = 'incidents' THEN
        subject := r.id; team := r.team_id;
    ELSIF TG_TABLE_NAME IN ('timeline', 'incident_notes') THEN
        subject := r.incident_id;
        SELECT team_id INTO team FROM incidents WHERE id = r.incident_id;
        IF team IS NULL THEN RETURN NULL; END IF;
    ELSIF TG_TABLE_NAME = 'teams' THEN
        subject := r.id; team := r.id;
    ELSE
        subject := r.team_id; team := r.team_id;
    END IF;
    INSERT INTO events (kind, subject_id, team_id) VALUES (TG_ARGV[0], subject, team);
    -- Identical notifications in one transaction are delivered once.
    PERFORM pg_notify('klaxon_events', '');
    RETURN NULL;
END $$;

CREATE TRIGGER incidents_event AFTER INSERT OR UPDATE ON incidents
FOR EACH ROW EXECUTE FUNCTION klaxon_event('incident');
CREATE TRIGGER timeline_event AFTER INSERT ON timeline
FOR EACH ROW EXECUTE FUNCTION klaxon_event('incident');
CREATE TRIGGER incident_notes_event AFTER INSERT OR UPDATE ON incident_notes
FOR EACH ROW EXECUTE FUNCTION klaxon_event('incident');
CREATE TRIGGER teams_event AFTER UPDATE ON teams
FOR EACH ROW EXECUTE FUNCTION klaxon_event('team');
CREATE TRIGGER team_members_event AFTER INSERT OR UPDATE OR DELETE ON team_members
FOR EACH ROW EXECUTE FUNCTION klaxon_event('team');
CREATE TRIGGER integrations_event AFTER INSERT OR DELETE OR UPDATE OF name ON integrations
FOR EACH ROW EXECUTE FUNCTION klaxon_event('team');
CREATE TRIGGER deadman_switches_event AFTER INSERT OR UPDATE OR DELETE ON deadman_switches
FOR EACH ROW EXECUTE FUNCTION klaxon_event('team');
CREATE TRIGGER escalation_policies_event AFTER INSERT OR UPDATE ON escalation_policies
FOR EACH ROW EXECUTE FUNCTION klaxon_event('team');
CREATE TRIGGER schedule_event AFTER INSERT OR UPDATE OR DELETE ON schedule
FOR EACH ROW EXECUTE FUNCTION klaxon_event('schedule');
