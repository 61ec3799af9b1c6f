//! Telegram: a team's announcements in a group or channel through the install's bot, by the Bot
//! API (<https://core.telegram.org/bots/api#sendmessage>: HTML text and an inline keyboard). With
//! the webhook's secret (`KLAXON_TELEGRAM_WEBHOOK_SECRET`), an open incident's message carries
//! buttons whose presses come back to Klaxon's webhook (`chat::telegram`). An incident's first
//! message in a chat is kept current (`editMessageText`) as later events of it are posted.
//!
//! A person's road too: their private chat with the bot, made a verified contact method when
//! they link their Telegram account there (a bot cannot write to someone who never wrote to it,
//! and the link proves the chat is theirs). Pages carry an Acknowledge button.

use super::announcement::{Announcement, Body, SUMMARY_LISTS};
use super::message::{Message, Words};
use super::posts::{keep_first, to_update, PostKind};
use super::{answered, Failure, Info, Owner, Profile, Road, Sent, To};
use crate::outbound::Outbound;
use crate::Core;
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::chat::ChatAct;
use klaxon_domain::text::escape_html;
use serde_json::{json, Value};

/// `KLAXON_TELEGRAM_*`.
#[derive(Clone, PartialEq, Eq)]
pub struct TelegramConfig {
    /// The Bot API's base URL (`https://api.telegram.org`, or a local Bot API server).
    pub api_url: String,
    pub bot_token: String,
    /// What Telegram sends as `X-Telegram-Bot-Api-Secret-Token` with each update, as given to
    /// `setWebhook`; without it, updates are not taken and messages carry no buttons.
    pub webhook_secret: Option<String>,
}

impl std::fmt::Debug for TelegramConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TelegramConfig {{ api_url: {:?}, .. }}", self.api_url)
    }
}

static INFO: Info = Info {
    name: "telegram",
    label: "Telegram",
    personal: Some(Profile {
        listed_as: "Telegram",
        code_from: "",
        in_chat: true,
        form: None,
    }),
    channel: true,
    needs_code: false,
    shared_service: true,
    signed: false,
    per_minute: None,
};

/// The platform's name in `chat_posts` and `chat_links`.
pub const PLATFORM: &str = "telegram";

/// The road; `None` without `KLAXON_TELEGRAM_BOT_TOKEN`.
pub struct TelegramRoad(pub Option<TelegramConfig>);

#[async_trait::async_trait]
impl Road for TelegramRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        self.0
            .is_none()
            .then(|| "no Telegram bot is configured (KLAXON_TELEGRAM_BOT_TOKEN)".into())
    }

    fn check(&self, _: &Core, _: Owner, target: &str) -> Result<String, String> {
        Ok(target.to_string())
    }

    fn edits(&self, _: &str) -> bool {
        true
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let Some(bot) = &self.0 else {
            return Err(Failure::outage(self.unconfigured().unwrap_or_default()));
        };
        let buttons = bot.webhook_secret.is_some();
        if let Message::Update(a) = message {
            for (first, now) in to_update(core, PLATFORM, a, &to.target, buttons).await {
                for post in first {
                    edit_to(&core.outbound, bot, &post.place, &post.message_id, &now).await;
                }
            }
            return Ok(());
        }
        let Message::Announcement(a) = message else {
            return page(core, bot, to, message).await;
        };
        let mut body = render(a, buttons);
        body["chat_id"] = json!(to.target);
        let sent = call(&core.outbound, bot, "sendMessage", &body).await?;
        // A summary's incidents that were announced alone before have their messages edited.
        if let Body::Summary(_) = &a.body {
            return self.send(core, to, &Message::Update(a)).await;
        }
        let (Body::One(item), Some(id)) = (&a.body, sent["message_id"].as_i64()) else {
            return Ok(());
        };
        let key = post_key(&to.target, id);
        if let Some((first, now)) =
            keep_first(core, PLATFORM, a, item, &to.target, &key, buttons).await
        {
            for post in first {
                edit_to(&core.outbound, bot, &post.place, &post.message_id, &now).await;
            }
        }
        Ok(())
    }
}

/// A person's page, code or test in their private chat; a page's message is remembered, so a
/// reply to it acts on its incident.
async fn page(core: &Core, bot: &TelegramConfig, to: &To, message: &Message<'_>) -> Sent {
    let public_url = &core.config.public_url;
    let Some(words) = Words::of(message, public_url, "Pages reach you here.") else {
        return Err(Failure::not_carried(INFO.label));
    };
    let incident = match message {
        Message::Page(p) => p.incident_id,
        _ => None,
    };
    let mut body = personal(&words, incident, bot.webhook_secret.is_some(), public_url);
    body["chat_id"] = json!(to.target);
    let sent = call(&core.outbound, bot, "sendMessage", &body).await?;
    if let (Some(incident), Some(id)) = (incident, sent["message_id"].as_i64()) {
        let key = post_key(&to.target, id);
        let kept = core
            .remember_post(PLATFORM, &to.target, &key, incident, PostKind::Message)
            .await;
        if let Err(e) = kept {
            tracing::warn!(error = %e, "a Telegram page's message was not kept");
        }
    }
    Ok(())
}

/// A person's message: its title in bold, its text, and an Acknowledge button that acts as the
/// linked person (with the webhook, for a page of one incident), else the confirmation page's
/// link; links to the app as buttons where Telegram accepts them (https only).
fn personal(w: &Words, incident: Option<i64>, buttons: bool, public_url: &str) -> Value {
    let link = |url: &str, label: &str| {
        format!(
            "<a href=\"{}\">{}</a>",
            escape_html(url),
            escape_html(label)
        )
    };
    let mut text = format!("<b>{}</b>\n{}", escape_html(&w.title), escape_html(&w.text));
    if let Some(code) = &w.code {
        text.push_str(&format!("\n\nCode: <code>{}</code>", escape_html(code)));
    }
    let mut row = Vec::new();
    match (incident, &w.ack_page) {
        (Some(id), Some(_)) if buttons => row.push(json!({
            "text": ChatAct::Acknowledge.label(),
            "callback_data": format!("{}:{id}", ChatAct::Acknowledge.as_str()),
        })),
        (_, Some(ack)) => text.push_str(&format!("\n{}", link(ack, "Acknowledge"))),
        (_, None) => {}
    }
    if let Some(url) = &w.link {
        match public_url.starts_with("https://") {
            true => row.push(json!({"text": "Open in Klaxon", "url": url})),
            false => text.push_str(&format!("\n{}", link(url, "Open in Klaxon"))),
        }
    }
    let keyboard: Vec<Vec<Value>> = match row.is_empty() {
        true => Vec::new(),
        false => vec![row],
    };
    json!({
        "text": text,
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": true},
        "reply_markup": {"inline_keyboard": keyboard},
    })
}

/// Calls a Bot API method; its `result`, or why not (Telegram's 429 names its wait in
/// `parameters.retry_after`).
pub async fn call(
    outbound: &Outbound,
    bot: &TelegramConfig,
    method: &str,
    body: &Value,
) -> Result<Value, Failure> {
    let url = format!(
        "{}/bot{}/{method}",
        bot.api_url.trim_end_matches('/'),
        bot.bot_token
    );
    let req = outbound
        .request(reqwest::Method::POST, &url)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(body).unwrap_or_default());
    let who = format!("the Telegram Bot API ({method})");
    let answer = outbound.send(req).await;
    let wait = answer.as_ref().ok().and_then(|a| {
        let v: Value = serde_json::from_slice(&a.body).ok()?;
        v["parameters"]["retry_after"].as_i64()
    });
    let result = answer.as_ref().ok().and_then(|a| {
        let v: Value = serde_json::from_slice(&a.body).ok()?;
        (v["ok"] == true).then(|| v["result"].clone())
    });
    match (answered(&who, answer), result) {
        (Ok(()), Some(result)) => Ok(result),
        (Ok(()), None) => Err(Failure::outage(format!("{who} answered without a result"))),
        (Err(f), _) => Err(Failure {
            retry_after: f.retry_after.or(wait),
            rate_limited: f.rate_limited || wait.is_some(),
            ..f
        }),
    }
}

/// A message's key in `chat_posts`: Telegram numbers messages per chat.
pub fn post_key(chat: &str, message_id: i64) -> String {
    format!("{chat}:{message_id}")
}

/// Edits the message kept as `key` (`post_key`) in `chat` into `now`; a failure is logged.
pub async fn edit_to(
    outbound: &Outbound,
    bot: &TelegramConfig,
    chat: &str,
    key: &str,
    now: &Announcement,
) {
    let message_id = key.rsplit(':').next().and_then(|id| id.parse::<i64>().ok());
    let mut body = render(now, now.interactive);
    body["chat_id"] = json!(chat);
    body["message_id"] = json!(message_id.unwrap_or_default());
    if let Err(f) = call(outbound, bot, "editMessageText", &body).await {
        tracing::warn!(why = %f.reason, "a Telegram message was not edited");
    }
}

/// A message's text (HTML) and its inline keyboard: the buttons that act while the incident is
/// open (with `buttons`), and links to the app where Telegram accepts them (https only).
pub(crate) fn render(a: &Announcement, buttons: bool) -> Value {
    let link = |url: &str, label: &str| {
        format!(
            "<a href=\"{}\">{}</a>",
            escape_html(url),
            escape_html(label)
        )
    };
    let https = a.public_url.starts_with("https://");
    let mut keyboard: Vec<Vec<Value>> = Vec::new();
    let text = match &a.body {
        Body::One(item) => {
            let i = &item.incident;
            if buttons && i.state != IncidentState::Resolved {
                keyboard.push(
                    ChatAct::ALL
                        .iter()
                        .filter(|act| {
                            **act != ChatAct::Acknowledge || i.state == IncidentState::Triggered
                        })
                        .map(|act| {
                            json!({"text": act.label(), "callback_data": format!("{}:{}", act.as_str(), i.id)})
                        })
                        .collect(),
                );
            }
            if https {
                keyboard.push(vec![
                    json!({"text": "Open incident", "url": item.url(&a.public_url)}),
                ]);
            }
            format!(
                "<b>{}</b>\n{}\n{}",
                escape_html(&item.headline()),
                escape_html(&item.detail(&a.team)),
                link(&item.url(&a.public_url), "Open incident")
            )
        }
        Body::Summary(items) => {
            let mut lines = vec![format!(
                "<b>{}</b>",
                escape_html(&a.summary_headline(items))
            )];
            for item in items.iter().take(SUMMARY_LISTS) {
                lines.push(format!(
                    "• {}",
                    link(&item.url(&a.public_url), &item.headline())
                ));
            }
            if items.len() > SUMMARY_LISTS {
                lines.push(format!("…and {} more", items.len() - SUMMARY_LISTS));
            }
            lines.push(link(&a.board(), "All open incidents"));
            lines.join("\n")
        }
        Body::Test => format!(
            "<b>Test from Klaxon</b>: team {}'s incidents will be announced here.",
            escape_html(&a.team)
        ),
    };
    json!({
        "text": text,
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": true},
        "reply_markup": {"inline_keyboard": keyboard},
    })
}
