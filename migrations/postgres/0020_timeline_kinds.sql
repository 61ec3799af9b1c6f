-- A timeline entry's kind is one of the words the code knows (domain::incident::TimelineKind).
ALTER TABLE timeline ADD CONSTRAINT timeline_kind_check CHECK (kind IN
    ('opened', 'alert_firing', 'alert_resolved', 'assigned', 'paged', 'reminder', 'escalated',
    'nobody_reachable', 'escalation_exhausted', 'held', 'push_failed', 'push_delivered', 'acknowledged',
    'snoozed', 'unsnoozed', 'note', 'silenced', 'unsilenced', 'resolved', 'archived', 'unarchived'));
