//! `klaxon serve`'s settings for acting from chat: Slack's app, Mattermost's slash command,
//! Telegram's bot and Discord's application.

use clap::Args;
use klaxon_core::roads::discord::DiscordConfig;
use klaxon_core::roads::mattermost::api::MattermostBot;
use klaxon_core::roads::slack::api::SlackBot;
use klaxon_core::roads::telegram::TelegramConfig;

#[derive(Args)]
pub(super) struct ChatArgs {
    /// The Slack app's signing secret: its buttons on announcements and its `/klaxon` command
    /// act in Klaxon (Interactivity URL `/api/chat/slack/interactions`, command URL
    /// `/api/chat/slack/commands`).
    #[arg(long, env = "KLAXON_SLACK_SIGNING_SECRET", hide_env_values = true)]
    pub(super) slack_signing_secret: Option<String>,
    /// The Slack app's bot token (`xoxb-…`, scope `chat:write`): a Slack channel can be given by
    /// its id, and its messages are edited as incidents move.
    #[arg(long, env = "KLAXON_SLACK_BOT_TOKEN", hide_env_values = true)]
    pub(super) slack_bot_token: Option<String>,
    /// Slack's Web API.
    #[arg(
        long,
        env = "KLAXON_SLACK_API_URL",
        default_value = "https://slack.com/api"
    )]
    pub(super) slack_api_url: String,
    /// The token of Klaxon's `/klaxon` slash command in Mattermost: the command acts in Klaxon
    /// (`/api/chat/mattermost/commands`), and Mattermost announcements carry buttons that do
    /// (`/api/chat/mattermost/actions`).
    #[arg(long, env = "KLAXON_MATTERMOST_TOKEN", hide_env_values = true)]
    pub(super) mattermost_token: Option<String>,
    /// The Mattermost server, for its bot account (`KLAXON_MATTERMOST_BOT_TOKEN`).
    #[arg(long, env = "KLAXON_MATTERMOST_URL")]
    pub(super) mattermost_url: Option<String>,
    /// A Mattermost bot account's access token: a Mattermost channel can be given by its id, and
    /// its messages are edited as incidents move.
    #[arg(long, env = "KLAXON_MATTERMOST_BOT_TOKEN", hide_env_values = true)]
    pub(super) mattermost_bot_token: Option<String>,
    /// The Telegram bot's token (from @BotFather): Telegram chats can be team channels.
    #[arg(long, env = "KLAXON_TELEGRAM_BOT_TOKEN", hide_env_values = true)]
    pub(super) telegram_bot_token: Option<String>,
    /// The Bot API's base URL.
    #[arg(
        long,
        env = "KLAXON_TELEGRAM_API_URL",
        default_value = "https://api.telegram.org"
    )]
    pub(super) telegram_api_url: String,
    /// The secret given to the bot's `setWebhook` (`secret_token`), sent back with each update to
    /// `/api/chat/telegram/webhook`: with it, announcements carry buttons and the bot takes
    /// commands.
    #[arg(long, env = "KLAXON_TELEGRAM_WEBHOOK_SECRET", hide_env_values = true)]
    pub(super) telegram_webhook_secret: Option<String>,
    /// The Discord bot's token: Discord channels can be team channels.
    #[arg(long, env = "KLAXON_DISCORD_BOT_TOKEN", hide_env_values = true)]
    pub(super) discord_bot_token: Option<String>,
    /// The REST API's base URL.
    #[arg(
        long,
        env = "KLAXON_DISCORD_API_URL",
        default_value = "https://discord.com/api/v10"
    )]
    pub(super) discord_api_url: String,
    /// The application's public key (hex): its interactions at `/api/chat/discord/interactions`
    /// are checked with it, and announcements carry buttons.
    #[arg(long, env = "KLAXON_DISCORD_PUBLIC_KEY")]
    pub(super) discord_public_key: Option<String>,
}

fn given(v: &Option<String>) -> Option<String> {
    v.clone().filter(|v| !v.trim().is_empty())
}

/// A service's base URL as given to `setting`: http(s) only.
fn http_url(setting: &str, url: &str) -> Result<String, String> {
    let url = url.trim();
    match url.starts_with("http://") || url.starts_with("https://") {
        true => Ok(url.trim_end_matches('/').to_string()),
        false => Err(format!("{setting} must start with http:// or https://")),
    }
}

impl ChatArgs {
    pub(super) fn slack_signing_secret(&self) -> Option<String> {
        given(&self.slack_signing_secret)
    }

    pub(super) fn mattermost_token(&self) -> Option<String> {
        given(&self.mattermost_token)
    }

    /// `KLAXON_SLACK_BOT_TOKEN`, `KLAXON_SLACK_API_URL`.
    pub(super) fn slack_bot(&self) -> Result<Option<SlackBot>, String> {
        let Some(token) = given(&self.slack_bot_token) else {
            return Ok(None);
        };
        Ok(Some(SlackBot {
            api_url: http_url("KLAXON_SLACK_API_URL", &self.slack_api_url)?,
            token: token.trim().to_string(),
        }))
    }

    /// `KLAXON_MATTERMOST_URL` and `KLAXON_MATTERMOST_BOT_TOKEN`: both or neither.
    pub(super) fn mattermost_bot(&self) -> Result<Option<MattermostBot>, String> {
        match (
            given(&self.mattermost_url),
            given(&self.mattermost_bot_token),
        ) {
            (None, None) => Ok(None),
            (Some(url), Some(token)) => Ok(Some(MattermostBot {
                url: http_url("KLAXON_MATTERMOST_URL", &url)?,
                token: token.trim().to_string(),
            })),
            (Some(_), None) => {
                Err("KLAXON_MATTERMOST_URL needs KLAXON_MATTERMOST_BOT_TOKEN".into())
            }
            (None, Some(_)) => {
                Err("KLAXON_MATTERMOST_BOT_TOKEN needs KLAXON_MATTERMOST_URL".into())
            }
        }
    }

    /// `KLAXON_TELEGRAM_*`, checked now so a mistake stops the start with its name.
    pub(super) fn telegram(&self) -> Result<Option<TelegramConfig>, String> {
        let secret = given(&self.telegram_webhook_secret);
        let Some(bot_token) = given(&self.telegram_bot_token) else {
            return match secret {
                Some(_) => {
                    Err("KLAXON_TELEGRAM_WEBHOOK_SECRET needs KLAXON_TELEGRAM_BOT_TOKEN".into())
                }
                None => Ok(None),
            };
        };
        let api_url = self.telegram_api_url.trim().to_string();
        if !(api_url.starts_with("http://") || api_url.starts_with("https://")) {
            return Err("KLAXON_TELEGRAM_API_URL must start with http:// or https://".into());
        }
        // Telegram allows 1 to 256 characters of A-Z, a-z, 0-9, _ and -.
        if let Some(s) = &secret {
            if s.len() > 256
                || !s
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                return Err(
                    "KLAXON_TELEGRAM_WEBHOOK_SECRET: 1 to 256 of A-Z, a-z, 0-9, _ and -".into(),
                );
            }
        }
        Ok(Some(TelegramConfig {
            api_url,
            bot_token,
            webhook_secret: secret,
        }))
    }

    /// `KLAXON_DISCORD_*`, checked now so a mistake stops the start with its name.
    pub(super) fn discord(&self) -> Result<Option<DiscordConfig>, String> {
        let key = given(&self.discord_public_key);
        let Some(bot_token) = given(&self.discord_bot_token) else {
            return match key {
                Some(_) => Err("KLAXON_DISCORD_PUBLIC_KEY needs KLAXON_DISCORD_BOT_TOKEN".into()),
                None => Ok(None),
            };
        };
        let api_url = self.discord_api_url.trim().to_string();
        if !(api_url.starts_with("http://") || api_url.starts_with("https://")) {
            return Err("KLAXON_DISCORD_API_URL must start with http:// or https://".into());
        }
        let public_key = match key {
            None => None,
            Some(hex_key) => Some(
                hex::decode(hex_key.trim())
                    .ok()
                    .and_then(|b| <[u8; 32]>::try_from(b).ok())
                    .ok_or(
                        "KLAXON_DISCORD_PUBLIC_KEY: the application's public key, 64 hex digits",
                    )?,
            ),
        };
        Ok(Some(DiscordConfig {
            api_url,
            bot_token,
            public_key,
        }))
    }
}
