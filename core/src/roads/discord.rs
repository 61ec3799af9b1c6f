//! Discord: a team's announcements in a channel through the install's bot, by the REST API
//! (<https://discord.com/developers/docs/resources/message#create-message>: an embed, and
//! message components, <https://discord.com/developers/docs/components/reference#button>). With
//! the application's public key (`KLAXON_DISCORD_PUBLIC_KEY`), an open incident's message carries
//! buttons whose presses Discord sends to Klaxon's interactions endpoint (`chat::discord`). An
//! incident's first message in a channel is kept current (edit message) as later events of it
//! are posted.

use super::announcement::{Announcement, Body, SUMMARY_LISTS};
use super::message::Message;
use super::posts::{keep_first, to_update};
use super::{answered, Failure, Info, Owner, Road, Sent, To};
use crate::outbound::Outbound;
use crate::Core;
use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::chat::ChatAct;
use serde_json::{json, Value};

/// `KLAXON_DISCORD_*`.
#[derive(Clone, PartialEq, Eq)]
pub struct DiscordConfig {
    /// The REST API's base URL (`https://discord.com/api/v10`).
    pub api_url: String,
    pub bot_token: String,
    /// The application's public key (32 bytes), which checks its interactions; without it,
    /// messages carry no buttons and interactions are not taken.
    pub public_key: Option<[u8; 32]>,
}

impl std::fmt::Debug for DiscordConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DiscordConfig {{ api_url: {:?}, .. }}", self.api_url)
    }
}

static INFO: Info = Info {
    name: "discord",
    label: "Discord",
    personal: None,
    channel: true,
    needs_code: false,
    shared_service: true,
    signed: false,
    per_minute: None,
};

/// The platform's name in `chat_posts` and `chat_links`.
pub const PLATFORM: &str = "discord";

/// The road; `None` without `KLAXON_DISCORD_BOT_TOKEN`.
pub struct DiscordRoad(pub Option<DiscordConfig>);

#[async_trait::async_trait]
impl Road for DiscordRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        self.0
            .is_none()
            .then(|| "no Discord bot is configured (KLAXON_DISCORD_BOT_TOKEN)".into())
    }

    fn edits(&self, _: &str) -> bool {
        true
    }

    fn check(&self, _: &Core, _: Owner, target: &str) -> Result<String, String> {
        Ok(target.to_string())
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let Some(bot) = &self.0 else {
            return Err(Failure::outage(self.unconfigured().unwrap_or_default()));
        };
        let buttons = bot.public_key.is_some();
        if let Message::Update(a) = message {
            for (first, now) in to_update(core, PLATFORM, a, &to.target, buttons).await {
                for post in first {
                    edit_to(&core.outbound, bot, &post.place, &post.message_id, &now).await;
                }
            }
            return Ok(());
        }
        let Message::Announcement(a) = message else {
            return Err(Failure::not_carried(INFO.label));
        };
        let path = format!("/channels/{}/messages", to.target);
        let sent = call(
            &core.outbound,
            bot,
            reqwest::Method::POST,
            &path,
            &render(a, buttons),
        )
        .await?;
        // A summary's incidents that were announced alone before have their messages edited.
        if let Body::Summary(_) = &a.body {
            return self.send(core, to, &Message::Update(a)).await;
        }
        let (Body::One(item), Some(id)) = (&a.body, sent["id"].as_str()) else {
            return Ok(());
        };
        if let Some((first, now)) =
            keep_first(core, PLATFORM, a, item, &to.target, id, buttons).await
        {
            for post in first {
                edit_to(&core.outbound, bot, &post.place, &post.message_id, &now).await;
            }
        }
        Ok(())
    }
}

/// Calls the REST API as the bot; the answer's JSON, or why not (Discord's 429 names its wait in
/// `Retry-After` and `retry_after`).
pub async fn call(
    outbound: &Outbound,
    bot: &DiscordConfig,
    method: reqwest::Method,
    path: &str,
    body: &Value,
) -> Result<Value, Failure> {
    let url = format!("{}{path}", bot.api_url.trim_end_matches('/'));
    let req = outbound
        .request(method, &url)
        .header("authorization", format!("Bot {}", bot.bot_token))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(body).unwrap_or_default());
    let answer = outbound.send(req).await;
    let json = answer
        .as_ref()
        .ok()
        .and_then(|a| serde_json::from_slice::<Value>(&a.body).ok());
    answered("the Discord API", answer)?;
    Ok(json.unwrap_or(Value::Null))
}

/// Edits a message into `now`; a failure is logged.
pub async fn edit_to(
    outbound: &Outbound,
    bot: &DiscordConfig,
    channel: &str,
    message_id: &str,
    now: &Announcement,
) {
    let path = format!("/channels/{channel}/messages/{message_id}");
    let body = render(now, now.interactive);
    if let Err(f) = call(outbound, bot, reqwest::Method::PATCH, &path, &body).await {
        tracing::warn!(why = %f.reason, "a Discord message was not edited");
    }
}

/// A message: an embed (title linking to the incident, the detail, coloured by severity), the
/// buttons that act while the incident is open (with `buttons`), and a link button to it.
/// Mentions in alert text ping nobody (`allowed_mentions`).
pub(crate) fn render(a: &Announcement, buttons: bool) -> Value {
    let (embed, row) = match &a.body {
        Body::One(item) => {
            let i = &item.incident;
            let color = match (i.state, i.severity) {
                (IncidentState::Resolved, _) => 0x2e7d32,
                (_, Severity::Critical) => 0xc62828,
                (_, Severity::Warning) => 0xf9a825,
                (_, Severity::Info) => 0x1565c0,
            };
            let mut row = Vec::new();
            if buttons && i.state != IncidentState::Resolved {
                for &act in ChatAct::ALL {
                    if act == ChatAct::Acknowledge && i.state != IncidentState::Triggered {
                        continue;
                    }
                    let style = if act == ChatAct::Acknowledge { 4 } else { 2 };
                    row.push(json!({"type": 2, "style": style, "label": act.label(),
                                    "custom_id": format!("klaxon:{}:{}", act.as_str(), i.id)}));
                }
            }
            row.push(json!({"type": 2, "style": 5, "label": "Open incident", "url": item.url(&a.public_url)}));
            let embed = json!({"title": clip(&item.headline(), 256), "url": item.url(&a.public_url),
                               "description": item.detail(&a.team), "color": color});
            (embed, row)
        }
        Body::Summary(items) => {
            let mut lines = Vec::new();
            for item in items.iter().take(SUMMARY_LISTS) {
                lines.push(format!(
                    "• [{}]({})",
                    item.headline().replace(['[', ']'], ""),
                    item.url(&a.public_url)
                ));
            }
            if items.len() > SUMMARY_LISTS {
                lines.push(format!("…and {} more", items.len() - SUMMARY_LISTS));
            }
            let embed = json!({"title": clip(&a.summary_headline(items), 256), "description": lines.join("\n")});
            (
                embed,
                vec![
                    json!({"type": 2, "style": 5, "label": "All open incidents", "url": a.board()}),
                ],
            )
        }
        Body::Test => (
            json!({"title": "Test from Klaxon",
                   "description": format!("Team {}'s incidents will be announced here.", a.team)}),
            Vec::new(),
        ),
    };
    let components = match row.is_empty() {
        true => json!([]),
        false => json!([{"type": 1, "components": row}]),
    };
    json!({"embeds": [embed], "components": components, "allowed_mentions": {"parse": []}})
}

fn clip(text: &str, most: usize) -> String {
    match text.char_indices().nth(most - 1) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
