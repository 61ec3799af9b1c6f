-- Senders configured for Opsgenie's Alert API post to /v2/alerts with the integration's key as
-- their API key (core::sources::opsgenie): a fourth integration kind.
ALTER TABLE integrations DROP CONSTRAINT integrations_kind_check;
ALTER TABLE integrations ADD CONSTRAINT integrations_kind_check
    CHECK (kind IN ('alertmanager', 'grafana', 'pagerduty', 'opsgenie'));
