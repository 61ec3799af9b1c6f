-- A channel whose road edits its messages (core::roads::Road::edits: a Matrix room, a Telegram
-- chat, a Discord channel, a Slack or Mattermost channel given by id) gets its incident's first
-- message edited even for an event it does not hear (core::announcements): such a post is quiet,
-- posts nothing new, and does not count toward the channel's bundling window.
ALTER TABLE channels ADD COLUMN edits BIGINT NOT NULL DEFAULT 0 CHECK (edits IN (0, 1));
UPDATE channels SET edits = 1 WHERE kind IN ('matrix', 'telegram', 'discord');
ALTER TABLE channel_posts ADD COLUMN quiet BIGINT NOT NULL DEFAULT 0 CHECK (quiet IN (0, 1));
