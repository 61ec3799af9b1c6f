-- An incident's events are written once per statement, not once per row: a webhook's timeline
-- entries (opened, assigned, paged) were three events and three runs of the row trigger for one
-- incident, and the notifier's batch marking openings sent ran the trigger once per incident.
-- Browsers refetch an incident once per event anyway (`events::coalesce`), so one event per
-- incident and statement tells them the same. Transition tables need one trigger per operation.
CREATE FUNCTION klaxon_incident_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'incidents' THEN
        INSERT INTO events (kind, subject_id, team_id)
        SELECT 'incident', id, team_id FROM changed ORDER BY id;
    ELSE
        INSERT INTO events (kind, subject_id, team_id)
        SELECT 'incident', i.id, i.team_id FROM incidents i
        WHERE i.id IN (SELECT incident_id FROM changed) ORDER BY i.id;
    END IF;
    IF FOUND THEN
        PERFORM pg_notify('klaxon_events', '');
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER incidents_event ON incidents;
CREATE TRIGGER incidents_insert_event AFTER INSERT ON incidents
REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION klaxon_incident_events();
CREATE TRIGGER incidents_update_event AFTER UPDATE ON incidents
REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION klaxon_incident_events();
DROP TRIGGER timeline_event ON timeline;
CREATE TRIGGER timeline_event AFTER INSERT ON timeline
REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION klaxon_incident_events();
