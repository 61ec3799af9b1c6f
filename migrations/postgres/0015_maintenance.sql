-- Maintenance windows: while one is on, the team's incidents still open but nothing is paged;
-- pages that come due wait for the window's end (see paging::delivery). A window ended early
-- keeps its row with ends_at moved to the moment it ended.
CREATE TABLE maintenance (
    id BIGSERIAL PRIMARY KEY,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    starts_at BIGINT NOT NULL,
    ends_at BIGINT NOT NULL CHECK (ends_at > starts_at),
    created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX maintenance_team ON maintenance(team_id, ends_at);
CREATE TRIGGER maintenance_event AFTER INSERT OR UPDATE OR DELETE ON maintenance
FOR EACH ROW EXECUTE FUNCTION klaxon_event('team');
