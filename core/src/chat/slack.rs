//! Slack: the app's interactivity requests (the buttons of announcements) and its `/klaxon`
//! slash command (`link <code>`, `unlink`), both signed with the app's signing secret
//! (<https://api.slack.com/authentication/verifying-requests-from-slack>: `v0=` and the hex
//! HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{body}`, refused when the timestamp is more
//! than five minutes from now). A press is answered 200 at once; its outcome goes back through
//! the request's `response_url` (<https://api.slack.com/interactivity/handling#message_responses>),
//! through the outbound policy: the message is replaced by the incident as it is now, and the
//! person who pressed gets a sentence only they see.

use super::act::ChatOutcome;
use crate::callbacks::form;
use crate::roads::slack::current;
use crate::{Core, Error, Result};
use hmac::{Hmac, Mac};
use klaxon_domain::chat::ChatAct;
use serde::Deserialize;
use serde_json::{json, Value};

pub const INTERACTIONS_PATH: &str = "/api/chat/slack/interactions";
pub const COMMANDS_PATH: &str = "/api/chat/slack/commands";
/// How far a request's timestamp may be from now.
pub const WINDOW: i64 = 5 * 60;
const PLATFORM: &str = "slack";

#[derive(Deserialize)]
struct Interaction {
    #[serde(rename = "type")]
    kind: String,
    user: Person,
    #[serde(default)]
    team: Option<Workspace>,
    #[serde(default)]
    response_url: Option<String>,
    #[serde(default)]
    actions: Vec<Pressed>,
}

#[derive(Deserialize)]
struct Person {
    id: String,
    #[serde(default)]
    team_id: Option<String>,
}

#[derive(Deserialize)]
struct Workspace {
    id: String,
}

#[derive(Deserialize)]
struct Pressed {
    action_id: String,
    #[serde(default)]
    value: Option<String>,
}

impl Core {
    /// Whether a request is the Slack app's: signed with its secret, sent within `WINDOW`.
    fn check_slack_request(
        &self,
        body: &[u8],
        timestamp: Option<&str>,
        sig: Option<&str>,
    ) -> Result<()> {
        let refused = |what: &str| {
            tracing::warn!(what, "a Slack request failed its check; nothing was done");
            Error::Unauthorized
        };
        let Some(secret) = self.config.roads.slack_signing_secret.as_deref() else {
            return Err(Error::NotFound);
        };
        let (Some(at), Some(sig)) = (timestamp, sig) else {
            return Err(refused("no signature"));
        };
        let Ok(sent) = at.trim().parse::<i64>() else {
            return Err(refused("a timestamp that is not a number"));
        };
        if (self.now() - sent).abs() > WINDOW {
            return Err(refused("a timestamp outside the five minutes"));
        }
        let Some(given) = sig
            .trim()
            .strip_prefix("v0=")
            .and_then(|h| hex::decode(h).ok())
        else {
            return Err(refused("a signature that is not v0"));
        };
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("any key");
        mac.update(format!("v0:{}:", at.trim()).as_bytes());
        mac.update(body);
        mac.verify_slice(&given)
            .map_err(|_| refused("a wrong signature"))
    }

    /// A button pressed on a Slack message (`block_actions`). Acts, then answers through the
    /// request's `response_url` in a task of its own, so Slack hears 200 at once.
    pub async fn slack_interaction(
        &self,
        body: &[u8],
        timestamp: Option<&str>,
        sig: Option<&str>,
    ) -> Result<()> {
        self.check_slack_request(body, timestamp, sig)?;
        let form = form(body);
        let payload = form.iter().find(|(k, _)| k == "payload").map(|(_, v)| v);
        let i: Interaction = payload
            .and_then(|p| serde_json::from_str(p).ok())
            .ok_or_else(|| Error::Invalid("payload: not a Slack interaction".into()))?;
        let pressed = i.actions.first();
        let act = pressed.and_then(|p| ChatAct::parse(p.action_id.strip_prefix("klaxon_")?));
        let id = pressed.and_then(|p| p.value.as_deref()?.parse::<i64>().ok());
        let (Some(act), Some(id), "block_actions") = (act, id, i.kind.as_str()) else {
            // "Open incident" and anything else: nothing to do.
            return Ok(());
        };
        let account = account(&i);
        let outcome = self.act_from_chat(PLATFORM, &account, id, act).await?;
        if let Some(url) = i.response_url {
            let core = self.clone();
            tokio::spawn(async move { core.answer_slack(&url, outcome).await });
        }
        Ok(())
    }

    /// The `/klaxon` command: `link <code>`, `unlink`, anything else its help. Answered in the
    /// response, to the person who typed it alone.
    pub async fn slack_command(
        &self,
        body: &[u8],
        timestamp: Option<&str>,
        sig: Option<&str>,
    ) -> Result<Value> {
        self.check_slack_request(body, timestamp, sig)?;
        let form = form(body);
        let field = |name: &str| {
            form.iter()
                .find(|(k, _)| k == name)
                .map_or("", |(_, v)| v.as_str())
        };
        let (team, user) = (field("team_id"), field("user_id"));
        if user.is_empty() {
            return Err(Error::Invalid("user_id: required".into()));
        }
        let account = format!("{team}:{user}");
        let shown = format!("@{} in {}", field("user_name"), field("team_domain"));
        let mut words = field("text").split_whitespace();
        let said = match (words.next(), words.next()) {
            (Some("link"), Some(code)) => self.link_chat(PLATFORM, &account, &shown, code).await?,
            (Some("unlink"), None) => self.unlink_account(PLATFORM, &account).await?,
            _ => "Type `/klaxon link` and the code from your Klaxon profile (Chat accounts) to act on incidents from here; `/klaxon unlink` to stop.".into(),
        };
        Ok(json!({"response_type": "ephemeral", "text": said}))
    }

    /// Replaces the message with the incident as it is now, and tells the person who pressed.
    async fn answer_slack(&self, url: &str, outcome: ChatOutcome) {
        if let Some(i) = &outcome.incident {
            let team = self.team_name_of(i).await.unwrap_or_default();
            let mut message = current(i, &team, &self.config.public_url, outcome.by.clone());
            message["replace_original"] = json!(true);
            self.post_to_slack(url, &message).await;
        }
        let said =
            json!({"response_type": "ephemeral", "replace_original": false, "text": outcome.said});
        self.post_to_slack(url, &said).await;
    }

    async fn post_to_slack(&self, url: &str, body: &Value) {
        let req = self
            .outbound
            .request(reqwest::Method::POST, url)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(body).unwrap_or_default());
        match self.outbound.send(req).await {
            Ok(a) if a.status.is_success() => {}
            Ok(a) => tracing::warn!(status = a.status.as_u16(), "Slack's response URL refused"),
            Err(f) => tracing::warn!(why = %f.sentence, "Slack's response URL was not reached"),
        }
    }
}

/// The chat account of whoever pressed: workspace and user ids, as Slack names them.
fn account(i: &Interaction) -> String {
    let team = (i.team.as_ref().map(|t| t.id.as_str()))
        .or(i.user.team_id.as_deref())
        .unwrap_or_default();
    format!("{team}:{}", i.user.id)
}
