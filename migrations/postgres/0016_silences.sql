-- Alertmanager silences made from an incident. An integration may name the Alertmanager its
-- alerts come from (and how to sign in to it: a JSON object, never sent back by the API); an
-- incident keeps the silence it made until it ends or is expired early.
ALTER TABLE integrations ADD COLUMN alertmanager_url TEXT;
ALTER TABLE integrations ADD COLUMN alertmanager_auth TEXT;
ALTER TABLE incidents ADD COLUMN silence_id TEXT;
ALTER TABLE incidents ADD COLUMN silence_ends_at BIGINT;
ALTER TABLE incidents ADD COLUMN silence_matchers TEXT;
ALTER TABLE incidents ADD COLUMN silence_integration_id BIGINT;
