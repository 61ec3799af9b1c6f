-- Three more channel kinds (domain::channel): a Mattermost incoming webhook whose messages carry
-- buttons that act in Klaxon, and a Telegram chat and a Discord channel the install's bots post to.
ALTER TABLE channels DROP CONSTRAINT channels_kind_check;
ALTER TABLE channels ADD CONSTRAINT channels_kind_check
    CHECK (kind IN ('matrix', 'slack', 'teams', 'webhook', 'mattermost', 'telegram', 'discord'));
