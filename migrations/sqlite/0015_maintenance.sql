-- Maintenance windows: while one is on, the team's incidents still open but nothing is paged;
-- pages that come due wait for the window's end (see paging::delivery). A window ended early
-- keeps its row with ends_at moved to the moment it ended.
CREATE TABLE maintenance (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    starts_at BIGINT NOT NULL,
    ends_at BIGINT NOT NULL CHECK (ends_at > starts_at),
    created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX maintenance_team ON maintenance(team_id, ends_at);
CREATE TRIGGER maintenance_insert_event AFTER INSERT ON maintenance
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER maintenance_update_event AFTER UPDATE ON maintenance
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER maintenance_delete_event AFTER DELETE ON maintenance
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('team', OLD.team_id, OLD.team_id); END;
