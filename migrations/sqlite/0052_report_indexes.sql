-- Reports over a year read hundreds of thousands of pages and timeline entries; these let each
-- read stay inside one small index instead of visiting every row (`klaxon bench reports`).
-- Every page now names its team (hand-off notices already did): the health report counts a
-- team's pages by person, road and night from one index, without visiting their incidents.
UPDATE pages SET team_id = (SELECT i.team_id FROM incidents i WHERE i.id = pages.incident_id)
    WHERE team_id IS NULL AND incident_id IS NOT NULL;
CREATE INDEX pages_team_sent ON pages(team_id, sent_at, user_id, kind, road, incident_id, created_at)
    WHERE sent_at IS NOT NULL;
-- An incident's pages by kind and whether they went: the noise report counts them per incident.
DROP INDEX pages_incident;
CREATE INDEX pages_incident ON pages(incident_id, kind, sent_at);
-- The few timeline entries reports look for among many: escalations (who was passed over),
-- resolutions (who resolved), and anything a person did (whether anyone acted).
CREATE INDEX timeline_escalated ON timeline(incident_id, at) WHERE kind = 'escalated';
CREATE INDEX timeline_resolved ON timeline(incident_id, id, actor_id) WHERE kind = 'resolved';
CREATE INDEX timeline_acted ON timeline(incident_id) WHERE actor_id IS NOT NULL;
