-- The link an alert's sender gives to its source graph (Alertmanager's `generatorURL`), kept
-- only when it is an http(s) URL of at most 2048 bytes: the incident page shows it as
-- "Open in Prometheus".
ALTER TABLE alerts ADD COLUMN generator_url TEXT;
