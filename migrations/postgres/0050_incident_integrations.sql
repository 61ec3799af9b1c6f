-- The integration whose alerts opened an incident (none for a dead man's switch's), kept with it
-- because an alert row moves to the newest incident of its fingerprint: the noise report counts
-- incidents by integration. Incidents opened before this keep what their alerts still say.
ALTER TABLE incidents ADD COLUMN integration_id BIGINT REFERENCES integrations(id) ON DELETE SET NULL;
UPDATE incidents SET integration_id = (SELECT MIN(a.integration_id) FROM alerts a WHERE a.incident_id = incidents.id);
-- Reports read a team's incidents over a range.
CREATE INDEX incidents_team_created ON incidents(team_id, created_at);
-- The noise report asks, for each incident, whether the same alert's incident was resolved in the
-- hour before it opened: the resolution time joins the signature's index (which also serves the
-- incident page's similar incidents, by its first two columns).
DROP INDEX incidents_signature;
CREATE INDEX incidents_signature ON incidents(team_id, signature, resolved_at);
