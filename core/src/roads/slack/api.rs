//! Slack's Web API as the install's Slack app (its bot token, `KLAXON_SLACK_BOT_TOKEN`): an
//! announcement posted to a channel id (<https://api.slack.com/methods/chat.postMessage>), and
//! the incident's first message there edited (<https://api.slack.com/methods/chat.update>) as
//! later events of it are posted, so the channel shows the incident as it is now. Slack answers
//! 200 with `ok: false` and an error code for a refusal, 429 with `Retry-After` for a limit.

use super::render;
use crate::outbound::Outbound;
use crate::roads::announcement::{Announcement, Body};
use crate::roads::posts::{keep_first, to_update, Post};
use crate::roads::{answered, Failure, Sent};
use crate::Core;
use serde_json::{json, Value};

/// `KLAXON_SLACK_BOT_TOKEN`, `KLAXON_SLACK_API_URL`.
#[derive(Clone, PartialEq, Eq)]
pub struct SlackBot {
    /// `https://slack.com/api`, or a service speaking the same API.
    pub api_url: String,
    /// The app's bot token (`xoxb-…`), with the `chat:write` scope.
    pub token: String,
}

impl std::fmt::Debug for SlackBot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SlackBot {{ api_url: {:?}, .. }}", self.api_url)
    }
}

/// The platform's name in `chat_posts`.
pub const PLATFORM: &str = "slack";

/// Posts an announcement to `channel`; an incident's first message there is kept current.
pub(super) async fn post(core: &Core, bot: &SlackBot, channel: &str, a: &Announcement) -> Sent {
    let mut body = render(a);
    body["channel"] = json!(channel);
    body["unfurl_links"] = json!(false);
    let sent = call(&core.outbound, bot, "chat.postMessage", &body).await?;
    // A summary's incidents that were announced alone before have their messages edited.
    if let Body::Summary(_) = &a.body {
        update(core, bot, channel, a).await;
        return Ok(());
    }
    let (Body::One(item), Some(ts)) = (&a.body, sent["ts"].as_str()) else {
        return Ok(());
    };
    let place = sent["channel"].as_str().unwrap_or(channel);
    let key = post_key(place, ts);
    if let Some((first, now)) =
        keep_first(core, PLATFORM, a, item, place, &key, a.interactive).await
    {
        for post in first {
            edit_to(&core.outbound, bot, &post, &now).await;
        }
    }
    Ok(())
}

/// Edits the channel's messages of the update's incidents (`Message::Update`).
pub(super) async fn update(core: &Core, bot: &SlackBot, channel: &str, a: &Announcement) {
    for (first, now) in to_update(core, PLATFORM, a, channel, a.interactive).await {
        for post in first {
            edit_to(&core.outbound, bot, &post, &now).await;
        }
    }
}

/// A message's key in `chat_posts`: Slack names a message by its channel and timestamp.
fn post_key(channel: &str, ts: &str) -> String {
    format!("{channel}:{ts}")
}

/// Edits the message kept as `post` into `now`; a failure is logged.
pub async fn edit_to(outbound: &Outbound, bot: &SlackBot, post: &Post, now: &Announcement) {
    let ts = post.message_id.rsplit(':').next().unwrap_or_default();
    let mut body = render(now);
    body["channel"] = json!(post.place);
    body["ts"] = json!(ts);
    if let Err(f) = call(outbound, bot, "chat.update", &body).await {
        tracing::warn!(why = %f.reason, "a Slack message was not edited");
    }
}

/// Calls a Web API method; its answer, or why not.
async fn call(
    outbound: &Outbound,
    bot: &SlackBot,
    method: &str,
    body: &Value,
) -> Result<Value, Failure> {
    let url = format!("{}/{method}", bot.api_url.trim_end_matches('/'));
    let req = outbound
        .request(reqwest::Method::POST, &url)
        .header("content-type", "application/json; charset=utf-8")
        .header("authorization", format!("Bearer {}", bot.token))
        .body(serde_json::to_vec(body).unwrap_or_default());
    let who = format!("the Slack Web API ({method})");
    let answer = outbound.send(req).await;
    let json = answer
        .as_ref()
        .ok()
        .and_then(|a| serde_json::from_slice::<Value>(&a.body).ok());
    answered(&who, answer)?;
    match json {
        Some(v) if v["ok"] == true => Ok(v),
        // A refusal names its reason in a short code of Slack's (`channel_not_found`,
        // `not_in_channel`, `invalid_auth`); retried as a webhook's 4xx is, since inviting the
        // app to the channel fixes it.
        Some(v) => Err(Failure::outage(format!(
            "{who} refused: {}",
            v["error"].as_str().unwrap_or("no reason given")
        ))),
        None => Err(Failure::outage(format!("{who} answered without JSON"))),
    }
}
