-- Changes a team's senders report (PagerDuty's change events, core::changes): never paged, shown
-- with the incidents that follow them; kept 90 days, as PagerDuty keeps them.
CREATE TABLE changes (
    id BIGSERIAL PRIMARY KEY,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    integration_id BIGINT REFERENCES integrations(id) ON DELETE SET NULL,
    at BIGINT NOT NULL,
    received_at BIGINT NOT NULL,
    summary TEXT NOT NULL,
    source TEXT,
    link TEXT,
    link_text TEXT,
    details TEXT
);
CREATE INDEX changes_team_at ON changes(team_id, at);
CREATE INDEX changes_received ON changes(received_at);
