-- An integration's routing rules (domain::routing), as JSON: in order, the first that matches an
-- alert decides its team, severity and labels, or drops it (core::intake::routing).
ALTER TABLE integrations ADD COLUMN rules TEXT;
