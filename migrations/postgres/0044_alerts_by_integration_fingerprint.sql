-- Which team holds an integration's firing alert of a fingerprint (core::intake::routing): with
-- routing rules the alert may be in any team, so it is found by integration and fingerprint.
CREATE INDEX alerts_integration_fingerprint ON alerts(integration_id, fingerprint);
