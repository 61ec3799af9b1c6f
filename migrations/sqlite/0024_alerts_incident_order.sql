-- An incident's first alert (its annotations ride on every page) is one index probe. On
-- `incident_id` alone PostgreSQL answered `ORDER BY id LIMIT 1` by walking the primary key from
-- the oldest alert, so planning a batch of pages grew with every alert ever stored.
DROP INDEX alerts_incident;
CREATE INDEX alerts_incident ON alerts(incident_id, id);
