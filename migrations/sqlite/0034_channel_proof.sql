-- A Matrix room hears a team only once someone with power in that room has posted the
-- channel's one-time code there (core::channels::proof). Until then `proof_code` holds the code
-- and `room_id` is empty; proven, `room_id` is the room the code was read in, the only room
-- ever posted to (an alias can be moved to another room later), and one room is one channel.
ALTER TABLE channels ADD COLUMN proof_code TEXT;
ALTER TABLE channels ADD COLUMN room_id TEXT;
ALTER TABLE channels ADD COLUMN proven_at BIGINT;
CREATE UNIQUE INDEX channels_room ON channels(room_id) WHERE room_id IS NOT NULL;
-- Rooms named before proofs existed are proven like new ones; what they had still to send is
-- dropped rather than posted to a room nobody proved.
UPDATE channels SET proof_code = 'klaxon-' || lower(hex(randomblob(5))) WHERE kind = 'matrix';
DELETE FROM channel_posts WHERE state = 'pending'
    AND channel_id IN (SELECT id FROM channels WHERE kind = 'matrix');
