-- The install's ceiling of texts and calls counted per clock hour in one row, taken by one
-- conditional upsert (core::roads::phone::ceiling), so replicas sending at once cannot both pass
-- the last free place and the count costs the same however many went this hour.
-- phone_sends now keeps pages only, for the per-number limits.
CREATE TABLE phone_hours (
    hour BIGINT PRIMARY KEY,
    sends BIGINT NOT NULL
);
-- What went this hour and the last stays counted across the upgrade.
INSERT INTO phone_hours (hour, sends) SELECT at / 3600, COUNT(*) FROM phone_sends GROUP BY at / 3600;
DELETE FROM phone_sends WHERE method_id IS NULL;
