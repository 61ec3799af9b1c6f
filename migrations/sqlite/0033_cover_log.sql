-- The schedule's change log also records covers made and ended, so putting someone on the pager
-- for a while says who did it. SQLite cannot change a CHECK: the table is rebuilt.
CREATE TABLE schedule_log_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    date TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('offered', 'withdrawn', 'taken', 'taken_over',
        'rotation_applied', 'assigned', 'removed', 'covered', 'cover_ended')),
    actor_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    from_user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    to_user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    text TEXT NOT NULL,
    at BIGINT NOT NULL
);
INSERT INTO schedule_log_new (id, team_id, date, kind, actor_id, from_user_id, to_user_id, text, at)
    SELECT id, team_id, date, kind, actor_id, from_user_id, to_user_id, text, at FROM schedule_log;
DROP TABLE schedule_log;
ALTER TABLE schedule_log_new RENAME TO schedule_log;
CREATE INDEX schedule_log_team ON schedule_log(team_id, id);
CREATE TRIGGER schedule_log_event AFTER INSERT ON schedule_log
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('schedule', NEW.team_id, NEW.team_id); END;
