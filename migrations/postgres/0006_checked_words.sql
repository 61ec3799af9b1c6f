-- The columns that hold one of a few words (or a 0/1 flag) refuse anything else, so a row can
-- never hold a state the code does not know. The code reads them through enums that fail on an
-- unknown word (`domain::words`), and this keeps such a word from being written at all.

ALTER TABLE users ADD CONSTRAINT users_kind_check CHECK (kind IN ('human', 'service'));
ALTER TABLE users ADD CONSTRAINT users_is_admin_check CHECK (is_admin IN (0, 1));
ALTER TABLE users ADD CONSTRAINT users_disabled_check CHECK (disabled IN (0, 1));
ALTER TABLE team_members ADD CONSTRAINT team_members_role_check CHECK (role IN ('member', 'owner'));
ALTER TABLE integrations ADD CONSTRAINT integrations_kind_check CHECK (kind IN ('alertmanager'));
ALTER TABLE incidents ADD CONSTRAINT incidents_state_check CHECK (state IN ('triggered', 'acknowledged', 'resolved'));
ALTER TABLE incidents ADD CONSTRAINT incidents_severity_check CHECK (severity IN ('info', 'warning', 'critical'));
ALTER TABLE incidents ADD CONSTRAINT incidents_opening_sent_check CHECK (opening_sent IN (0, 1));
ALTER TABLE alerts ADD CONSTRAINT alerts_status_check CHECK (status IN ('firing', 'resolved'));
ALTER TABLE alerts ADD CONSTRAINT alerts_resolution_source_check CHECK ((resolution_source IS NULL OR resolution_source IN ('alertmanager', 'expiry')));
ALTER TABLE incident_notes ADD CONSTRAINT incident_notes_resolution_check CHECK (resolution IN (0, 1));
ALTER TABLE pages ADD CONSTRAINT pages_kind_check CHECK (kind IN ('opening', 'reminder', 'escalation', 'fallback', 'all_clear'));
ALTER TABLE pages ADD CONSTRAINT pages_state_check CHECK (state IN ('pending', 'sent', 'failed', 'cancelled'));
ALTER TABLE deadman_switches ADD CONSTRAINT deadman_switches_severity_check CHECK (severity IN ('info', 'warning', 'critical'));
