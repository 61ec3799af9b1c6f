//! The bot's side of a conversation: reading what was said in its rooms (`/sync`, long-polled,
//! filtered to messages and reactions), answering in a message's thread, and editing a message
//! in place (`m.replace`). Shapes: the client-server API,
//! <https://spec.matrix.org/v1.11/client-server-api/#syncing>, threads
//! (`#threading`) and event replacements (`#event-replacements`).

use super::client::{enc, text_content, Matrix};
use crate::roads::Failure;
use reqwest::Method;
use serde_json::{json, Value};
use std::time::Duration;

/// The most of one sync answer read: its batch is asked small (`FILTER`), but cannot be capped.
const MAX_SYNC: usize = 1024 * 1024;

/// Only what people say and react in the rooms the bot is in, a few events a room per batch.
const FILTER: &str = r#"{"presence":{"types":[]},"account_data":{"types":[]},"room":{"include_leave":false,"state":{"types":[]},"ephemeral":{"types":[]},"account_data":{"types":[]},"timeline":{"types":["m.room.message","m.reaction"],"limit":20}}}"#;

/// One event of a sync batch.
#[derive(Debug, Clone)]
pub struct Heard {
    pub room: String,
    pub event: Value,
}

/// A sync answer: where the next one starts, and the events since `since`.
#[derive(Debug, Clone)]
pub struct Batch {
    pub next: String,
    pub events: Vec<Heard>,
}

impl Matrix {
    /// What was said since `since` (everything after this instant when `None`, with no events),
    /// waiting at most `wait` for something to be said.
    pub async fn sync(&self, since: Option<&str>, wait: Duration) -> Result<Batch, Failure> {
        let token = self.token().await?;
        let mut url = format!(
            "{}/_matrix/client/v3/sync?filter={}&timeout={}",
            self.homeserver,
            enc(FILTER),
            if since.is_some() { wait.as_millis() } else { 0 }
        );
        if let Some(since) = since {
            url.push_str(&format!("&since={}", enc(since)));
        }
        let req = self
            .outbound
            .request(Method::GET, &url)
            .bearer_auth(&token)
            .timeout(wait + crate::outbound::TIMEOUT);
        let who = format!(
            "the Matrix homeserver {} (reading its rooms)",
            self.homeserver
        );
        let answer = self.outbound.send_reading(req, MAX_SYNC).await;
        let body: Value = match &answer {
            Ok(a) if a.status.is_success() => a.json().unwrap_or(Value::Null),
            _ => {
                if answer
                    .as_ref()
                    .is_ok_and(|a| a.status == reqwest::StatusCode::UNAUTHORIZED)
                {
                    self.signed_out().await;
                }
                return Err(crate::roads::answered(&who, answer)
                    .err()
                    .unwrap_or_default());
            }
        };
        let Some(next) = body["next_batch"].as_str() else {
            return Err(Failure::outage(format!(
                "{who} answered without next_batch"
            )));
        };
        let mut events = Vec::new();
        if since.is_some() {
            if let Some(rooms) = body["rooms"]["join"].as_object() {
                for (room, joined) in rooms {
                    let timeline = joined["timeline"]["events"].as_array();
                    for event in timeline.into_iter().flatten() {
                        events.push(Heard {
                            room: room.clone(),
                            event: event.clone(),
                        });
                    }
                }
            }
        }
        Ok(Batch {
            next: next.to_string(),
            events,
        })
    }

    /// Answers `reply_to` in the thread of `root` (a notice: bots answer bots never).
    pub async fn answer(
        &self,
        room: &str,
        root: &str,
        reply_to: &str,
        text: &str,
        txn: &str,
    ) -> Result<Option<String>, Failure> {
        let content = json!({
            "msgtype": "m.notice",
            "body": text,
            "m.mentions": {},
            "m.relates_to": {
                "rel_type": "m.thread",
                "event_id": root,
                "is_falling_back": root == reply_to,
                "m.in_reply_to": {"event_id": reply_to},
            },
        });
        self.post_event(room, &content, txn).await
    }

    /// Replaces the text of the bot's message `event_id` (clients show the new one, marked
    /// edited); the fallback body starts with `* ` as the spec asks.
    pub async fn edit(
        &self,
        room: &str,
        event_id: &str,
        plain: &str,
        html: &str,
        txn: &str,
    ) -> Result<Option<String>, Failure> {
        let mut content = text_content(&format!("* {plain}"), &format!("* {html}"));
        content["m.new_content"] = text_content(plain, html);
        content["m.relates_to"] = json!({"rel_type": "m.replace", "event_id": event_id});
        self.post_event(room, &content, txn).await
    }
}
