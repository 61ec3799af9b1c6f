-- Senders configured for PagerDuty's Events API v2 post to /v2/enqueue with the integration's key
-- as their routing key (core::sources::pagerduty): a third integration kind.
ALTER TABLE integrations DROP CONSTRAINT integrations_kind_check;
ALTER TABLE integrations ADD CONSTRAINT integrations_kind_check
    CHECK (kind IN ('alertmanager', 'grafana', 'pagerduty'));
