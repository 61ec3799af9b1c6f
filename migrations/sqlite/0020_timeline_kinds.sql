-- A timeline entry's kind is one of the words the code knows (domain::incident::TimelineKind).
-- As in 0006, triggers stand in for the CHECK that SQLite cannot add to an existing table.
CREATE TRIGGER timeline_kind_insert_check BEFORE INSERT ON timeline
WHEN NOT NEW.kind IN ('opened', 'alert_firing', 'alert_resolved', 'assigned', 'paged', 'reminder', 'escalated',
    'nobody_reachable', 'escalation_exhausted', 'held', 'push_failed', 'push_delivered', 'acknowledged',
    'snoozed', 'unsnoozed', 'note', 'silenced', 'unsilenced', 'resolved', 'archived', 'unarchived')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: timeline_kind_check'); END;
CREATE TRIGGER timeline_kind_update_check BEFORE UPDATE OF kind ON timeline
WHEN NOT NEW.kind IN ('opened', 'alert_firing', 'alert_resolved', 'assigned', 'paged', 'reminder', 'escalated',
    'nobody_reachable', 'escalation_exhausted', 'held', 'push_failed', 'push_delivered', 'acknowledged',
    'snoozed', 'unsnoozed', 'note', 'silenced', 'unsilenced', 'resolved', 'archived', 'unarchived')
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: timeline_kind_check'); END;
