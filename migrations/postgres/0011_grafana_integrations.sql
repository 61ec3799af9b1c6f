-- Grafana's webhook contact point posts the Alertmanager payload: a second integration kind.
ALTER TABLE integrations DROP CONSTRAINT integrations_kind_check;
ALTER TABLE integrations ADD CONSTRAINT integrations_kind_check CHECK (kind IN ('alertmanager', 'grafana'));
