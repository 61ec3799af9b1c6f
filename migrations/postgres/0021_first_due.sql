-- When a pending page was first due, kept across its retries (a retry moves due_at forward), so
-- health and the oldest-due metric count a page failing for minutes as overdue. A page held for a
-- maintenance window is not late: holding it clears this.
ALTER TABLE pages ADD COLUMN first_due_at BIGINT;
CREATE INDEX pages_first_due ON pages(first_due_at) WHERE state = 'pending' AND first_due_at IS NOT NULL;
