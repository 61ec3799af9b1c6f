-- A team's on-call day (domain::oncall_day): its IANA zone and hand-off time. While a change
-- waits for its first hand-off, the rule before it and the first date that no longer follows it.
ALTER TABLE teams ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE teams ADD COLUMN handoff_time TEXT NOT NULL DEFAULT '00:00';
ALTER TABLE teams ADD COLUMN earlier_time_zone TEXT;
ALTER TABLE teams ADD COLUMN earlier_handoff_time TEXT;
ALTER TABLE teams ADD COLUMN rule_from TEXT;
-- Partial-day cover: `user_id` holds the team's pager from `starts_at` to `ends_at` (end
-- excluded) for `covered_id`. At most one cover of a team at any instant (core::oncall).
-- `noticed` is how far its notices went: 1 once its start was announced, 2 once its end was.
CREATE TABLE covers (
    id BIGSERIAL PRIMARY KEY,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    covered_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    starts_at BIGINT NOT NULL,
    ends_at BIGINT NOT NULL,
    created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL,
    noticed BIGINT NOT NULL DEFAULT 0,
    CHECK (ends_at > starts_at)
);
CREATE INDEX covers_team ON covers(team_id, ends_at);
-- Hand-off notices now go at each hand-off: `notified_on` is the last date whose start was
-- announced. The old advance notice's markers start again.
UPDATE handoffs SET notified_on = NULL, ended_on = NULL;
