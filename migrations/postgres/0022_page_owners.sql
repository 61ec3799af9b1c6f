-- An incident that found nobody on call and no fallback topic pages every owner of its team who
-- can be reached; its reminders and all-clear go to the owners again (read when each is sent).
ALTER TABLE incidents ADD COLUMN page_owners BIGINT NOT NULL DEFAULT 0;
