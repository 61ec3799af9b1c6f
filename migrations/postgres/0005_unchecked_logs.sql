-- The outbox, the timeline and the acknowledge tokens lose their foreign keys. The notifier and
-- the sweeper write them in batches, and PostgreSQL checks a key with a locking lookup per row:
-- half the cost of such a batch (`klaxon bench ticks`). Their rows are only written beside the
-- incident they belong to; deleting a team or a user removes or detaches them in the same
-- transaction (core: teams::delete_team, accounts::delete_user), as the keys' actions did.
ALTER TABLE pages DROP CONSTRAINT pages_incident_id_fkey, DROP CONSTRAINT pages_user_id_fkey;
ALTER TABLE timeline DROP CONSTRAINT timeline_incident_id_fkey, DROP CONSTRAINT timeline_actor_id_fkey;
ALTER TABLE ack_tokens DROP CONSTRAINT ack_tokens_incident_id_fkey, DROP CONSTRAINT ack_tokens_user_id_fkey;
