-- A person's link to one team's schedule as an iCalendar feed, for calendar apps, which cannot
-- send a bearer key: the secret is in the URL, kept only as its hash, shown once when made.
-- One per person and team; making another replaces it.
CREATE TABLE calendar_feeds (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    UNIQUE (user_id, team_id)
);
