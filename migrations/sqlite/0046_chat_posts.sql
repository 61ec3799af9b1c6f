-- Messages a chat road posted about an incident (roads::posts): an answer to one of them (a
-- reply, a reaction, a message in its thread) acts on that incident, and an announcement is
-- edited in place as the incident moves. Forgotten after 30 days by the sweeper.
CREATE TABLE chat_posts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    platform TEXT NOT NULL,
    -- The room (or channel) it is in, and its id there.
    place TEXT NOT NULL,
    message_id TEXT NOT NULL,
    incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('announcement', 'message')),
    created_at BIGINT NOT NULL,
    UNIQUE (platform, message_id)
);
CREATE INDEX chat_posts_incident ON chat_posts(incident_id);
CREATE INDEX chat_posts_created ON chat_posts(created_at);
-- Where a chat platform's event stream was last read (Matrix's sync token): moved on by a
-- conditional update before the events are acted on, so replicas reading alike act once.
CREATE TABLE chat_cursors (
    platform TEXT PRIMARY KEY,
    cursor TEXT NOT NULL
);
