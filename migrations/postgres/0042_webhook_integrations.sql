-- Any JSON sender, read by the integration's own Jinja templates (core::sources::webhook): a fifth
-- integration kind, its templates kept as JSON with it.
ALTER TABLE integrations ADD COLUMN templates TEXT;
ALTER TABLE integrations DROP CONSTRAINT integrations_kind_check;
ALTER TABLE integrations ADD CONSTRAINT integrations_kind_check
    CHECK (kind IN ('alertmanager', 'grafana', 'pagerduty', 'opsgenie', 'webhook'));
