-- A person's pages of one incident (failing over, the incident page) are found by
-- `pages_incident`, which leads with the incident since 0052: an incident has a handful of pages.
-- One index fewer to write for every page queued, and on PostgreSQL for every page sent.
DROP INDEX IF EXISTS pages_incident_user;
