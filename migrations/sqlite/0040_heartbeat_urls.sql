-- Dead man's switches fed by pings to a heartbeat URL (core::deadman::pings) instead of by
-- alerts: the URL's key is kept hashed; a run begun (`/start`) is kept on the switch, a failure
-- (`/fail`) and what it said on the heartbeat row until the next heartbeat.
ALTER TABLE deadman_switches ADD COLUMN ping_key_hash TEXT;
ALTER TABLE deadman_switches ADD COLUMN ping_started_at BIGINT;
CREATE UNIQUE INDEX deadman_switches_ping_key ON deadman_switches (ping_key_hash);
ALTER TABLE deadman_heartbeats ADD COLUMN failed_at BIGINT;
ALTER TABLE deadman_heartbeats ADD COLUMN failure TEXT;
