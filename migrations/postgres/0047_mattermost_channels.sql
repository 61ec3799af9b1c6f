-- A fifth channel kind (domain::channel): a Mattermost incoming webhook whose messages carry
-- buttons that act in Klaxon.
ALTER TABLE channels DROP CONSTRAINT channels_kind_check;
ALTER TABLE channels ADD CONSTRAINT channels_kind_check
    CHECK (kind IN ('matrix', 'slack', 'teams', 'webhook', 'mattermost'));
