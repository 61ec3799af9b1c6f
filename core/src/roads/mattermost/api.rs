//! Mattermost's REST API as a bot account of the install
//! (<https://developers.mattermost.com/integrate/reference/bot-accounts/>): an announcement
//! posted to a channel id (`POST /api/v4/posts`, the attachment in the post's props) and the
//! incident's first message there patched (`PUT /api/v4/posts/{id}/patch`) as later events of it
//! are posted (<https://api.mattermost.com/#tag/posts>).

use super::render;
use crate::outbound::Outbound;
use crate::roads::announcement::{Announcement, Body};
use crate::roads::posts::{keep_first, to_update, Post};
use crate::roads::{answered, Failure, Sent};
use crate::Core;
use serde_json::{json, Value};

/// `KLAXON_MATTERMOST_URL`, `KLAXON_MATTERMOST_BOT_TOKEN`.
#[derive(Clone, PartialEq, Eq)]
pub struct MattermostBot {
    /// The Mattermost server (`https://chat.example.org`).
    pub url: String,
    /// The bot account's access token.
    pub token: String,
}

impl std::fmt::Debug for MattermostBot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MattermostBot {{ url: {:?}, .. }}", self.url)
    }
}

/// The platform's name in `chat_posts`.
pub const PLATFORM: &str = "mattermost";

/// Posts an announcement to `channel`, its buttons signed with `key`; an incident's first
/// message there is kept current.
pub(super) async fn post(
    core: &Core,
    bot: &MattermostBot,
    channel: &str,
    a: &Announcement,
    key: Option<&str>,
) -> Sent {
    let body = json!({"channel_id": channel, "message": "", "props": render(a, key)});
    let path = "/api/v4/posts";
    let sent = call(&core.outbound, bot, reqwest::Method::POST, path, &body).await?;
    // A summary's incidents that were announced alone before have their messages edited.
    if let Body::Summary(_) = &a.body {
        update(core, bot, channel, a, key).await;
        return Ok(());
    }
    let (Body::One(item), Some(id)) = (&a.body, sent["id"].as_str()) else {
        return Ok(());
    };
    if let Some((first, now)) =
        keep_first(core, PLATFORM, a, item, channel, id, key.is_some()).await
    {
        for post in first {
            edit_to(&core.outbound, bot, &post, &now, key).await;
        }
    }
    Ok(())
}

/// Patches the channel's posts of the update's incidents (`Message::Update`).
pub(super) async fn update(
    core: &Core,
    bot: &MattermostBot,
    channel: &str,
    a: &Announcement,
    key: Option<&str>,
) {
    for (first, now) in to_update(core, PLATFORM, a, channel, key.is_some()).await {
        for post in first {
            edit_to(&core.outbound, bot, &post, &now, key).await;
        }
    }
}

/// Patches the post kept as `post` into `now`; a failure is logged.
pub async fn edit_to(
    outbound: &Outbound,
    bot: &MattermostBot,
    post: &Post,
    now: &Announcement,
    key: Option<&str>,
) {
    let path = format!("/api/v4/posts/{}/patch", post.message_id);
    let body = json!({"message": "", "props": render(now, key)});
    if let Err(f) = call(outbound, bot, reqwest::Method::PUT, &path, &body).await {
        tracing::warn!(why = %f.reason, "a Mattermost post was not edited");
    }
}

/// Calls the REST API as the bot; the answer's JSON, or why not.
async fn call(
    outbound: &Outbound,
    bot: &MattermostBot,
    method: reqwest::Method,
    path: &str,
    body: &Value,
) -> Result<Value, Failure> {
    let url = format!("{}{path}", bot.url.trim_end_matches('/'));
    let req = outbound
        .request(method, &url)
        .header("authorization", format!("Bearer {}", bot.token))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(body).unwrap_or_default());
    let answer = outbound.send(req).await;
    let json = answer
        .as_ref()
        .ok()
        .and_then(|a| serde_json::from_slice::<Value>(&a.body).ok());
    answered("the Mattermost API", answer)?;
    Ok(json.unwrap_or(Value::Null))
}
