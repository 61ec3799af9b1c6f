-- Dead man's switches: a team's watch on a heartbeat alert, and what each source of it last said.

CREATE TABLE deadman_switches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id BIGINT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    matcher TEXT NOT NULL,
    timeout BIGINT NOT NULL,
    severity TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    -- The incident this switch opened last; kept after it resolves, for the list.
    last_incident_id BIGINT REFERENCES incidents(id) ON DELETE SET NULL,
    UNIQUE (team_id, name)
);

-- One row per switch and value of the `cluster` label ('' for heartbeats without one). No
-- foreign key: intake writes here without waiting on a concurrent removal, and the sweeper
-- deletes rows whose switch is gone.
CREATE TABLE deadman_heartbeats (
    switch_id BIGINT NOT NULL,
    cluster TEXT NOT NULL,
    first_seen_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    -- The incident opened for this source's current silence; cleared when heartbeats return.
    incident_id BIGINT,
    PRIMARY KEY (switch_id, cluster)
);
