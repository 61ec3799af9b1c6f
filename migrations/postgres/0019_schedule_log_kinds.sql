-- The schedule's change log also records dates given by hand and dates removed, so every change
-- of who is on call says who made it.
ALTER TABLE schedule_log DROP CONSTRAINT schedule_log_kind_check;
ALTER TABLE schedule_log ADD CONSTRAINT schedule_log_kind_check CHECK (kind IN
    ('offered', 'withdrawn', 'taken', 'taken_over', 'rotation_applied', 'assigned', 'removed'));
