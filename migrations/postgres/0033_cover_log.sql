-- The schedule's change log also records covers made and ended, so putting someone on the pager
-- for a while says who did it.
ALTER TABLE schedule_log DROP CONSTRAINT schedule_log_kind_check;
ALTER TABLE schedule_log ADD CONSTRAINT schedule_log_kind_check CHECK (kind IN
    ('offered', 'withdrawn', 'taken', 'taken_over', 'rotation_applied', 'assigned', 'removed',
     'covered', 'cover_ended'));
