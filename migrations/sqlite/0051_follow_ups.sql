-- Follow-up items of a post-incident review (domain::review): kept with the incident, shown on
-- the team page until done.
CREATE TABLE follow_ups (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    text TEXT NOT NULL,
    owner_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL,
    done_at BIGINT
);
CREATE INDEX follow_ups_incident ON follow_ups(incident_id);
CREATE INDEX follow_ups_team_open ON follow_ups(team_id) WHERE done_at IS NULL;
