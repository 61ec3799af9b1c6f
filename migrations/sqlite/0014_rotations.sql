-- Rotations fill the per-date schedule, which stays the one record of who is on call; a date a
-- rotation wrote remembers it (so `replace` overwrites only its own dates), and a holder may
-- offer a date for another member to take. Every swap and application is kept in schedule_log.
CREATE TABLE rotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    shift_days BIGINT NOT NULL CHECK (shift_days BETWEEN 1 AND 365),
    start_date TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (team_id, name)
);
-- Turn order. A member who leaves the team, by any path, leaves its rotations (trigger below);
-- the dates they hold stay, listed for the owner to refill.
CREATE TABLE rotation_members (
    rotation_id BIGINT NOT NULL REFERENCES rotations(id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (rotation_id, position)
);
ALTER TABLE schedule ADD COLUMN rotation_id BIGINT REFERENCES rotations(id) ON DELETE SET NULL;
ALTER TABLE schedule ADD COLUMN offered BIGINT NOT NULL DEFAULT 0 CHECK (offered IN (0, 1));
CREATE TABLE schedule_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    date TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('offered', 'withdrawn', 'taken', 'taken_over', 'rotation_applied')),
    actor_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    from_user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    to_user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    text TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX schedule_log_team ON schedule_log(team_id, id);
CREATE TRIGGER schedule_log_event AFTER INSERT ON schedule_log
BEGIN INSERT INTO events (kind, subject_id, team_id) VALUES ('schedule', NEW.team_id, NEW.team_id); END;
CREATE TRIGGER team_members_leave_rotations AFTER DELETE ON team_members
BEGIN DELETE FROM rotation_members WHERE user_id = OLD.user_id
    AND rotation_id IN (SELECT id FROM rotations WHERE team_id = OLD.team_id); END;
