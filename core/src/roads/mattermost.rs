//! Mattermost: a team's announcements through an incoming webhook, as a message attachment
//! (<https://developers.mattermost.com/integrate/reference/message-attachments/>). With
//! `KLAXON_MATTERMOST_TOKEN` (the token of Klaxon's `/klaxon` slash command), an open incident's
//! message carries buttons that act in Klaxon
//! (<https://developers.mattermost.com/integrate/plugins/interactive-messages/>): each posts to
//! Klaxon's action URL with a context naming the action and the incident, signed with that
//! token. Mattermost keeps an action's integration (URL and context) on the server and never
//! shows it to clients, so a press Klaxon can verify came through the Mattermost server, which
//! names who pressed (`chat::mattermost`).
//!
//! With a bot account (`KLAXON_MATTERMOST_URL`, `KLAXON_MATTERMOST_BOT_TOKEN`), a channel may be
//! a channel's id instead: the bot posts there (`api`) and edits the incident's first message as
//! the incident moves.

pub mod api;

use super::announcement::{Announcement, Body, Item, SUMMARY_LISTS};
use super::http::post_json;
use super::message::Message;
use super::{Failure, Info, Owner, Road, Sent, To};
use crate::Core;
use api::MattermostBot;
use hmac::{Hmac, Mac};
use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::channel::{is_channel_id, shown_target, ChannelKind};
use klaxon_domain::chat::ChatAct;
use klaxon_domain::incident::Incident;
use serde_json::{json, Value};

static INFO: Info = Info {
    name: "mattermost",
    label: "Mattermost",
    personal: None,
    channel: true,
    needs_code: false,
    shared_service: false,
    signed: false,
    per_minute: None,
};

/// Where Mattermost posts a button's press.
pub const ACTIONS_PATH: &str = "/api/chat/mattermost/actions";

/// The road; the bot account lets a channel be a channel id.
pub(super) struct MattermostRoad(pub Option<MattermostBot>);

#[async_trait::async_trait]
impl Road for MattermostRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        None
    }

    fn check(&self, core: &Core, _: Owner, target: &str) -> Result<String, String> {
        if is_channel_id(ChannelKind::Mattermost, target) {
            return match &self.0 {
                Some(_) => Ok(target.to_string()),
                None => Err(
                    "target: a Mattermost channel id needs Klaxon's bot account \
                             (KLAXON_MATTERMOST_URL, KLAXON_MATTERMOST_BOT_TOKEN); or give an \
                             incoming webhook's URL"
                        .into(),
                ),
            };
        }
        core.outbound
            .check_url(target)
            .map(|_| target.to_string())
            .map_err(|why| format!("target: {why}"))
    }

    fn shown(&self, target: &str) -> String {
        shown_target(ChannelKind::Mattermost, target)
    }

    fn edits(&self, target: &str) -> bool {
        is_channel_id(ChannelKind::Mattermost, target)
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let key = core.config.roads.mattermost_token.as_deref();
        if let Message::Update(a) = message {
            // A channel moved to a webhook since the edit was queued has nothing to edit.
            if let (Some(bot), true) = (&self.0, self.edits(&to.target)) {
                api::update(core, bot, &to.target, a, key).await;
            }
            return Ok(());
        }
        let Message::Announcement(a) = message else {
            return Err(Failure::not_carried(INFO.label));
        };
        if is_channel_id(ChannelKind::Mattermost, &to.target) {
            return match &self.0 {
                Some(bot) => api::post(core, bot, &to.target, a, key).await,
                None => Err(Failure::unconfigured(
                    "Mattermost bot",
                    "KLAXON_MATTERMOST_BOT_TOKEN",
                )),
            };
        }
        let who = format!("the Mattermost webhook at {}", self.shown(&to.target));
        post_json(&core.outbound, &to.target, &who, &render(a, key)).await
    }
}

/// The webhook's body: one attachment, its buttons signed with `key` when buttons act.
pub(crate) fn render(a: &Announcement, key: Option<&str>) -> Value {
    let attachment = match &a.body {
        Body::One(item) => one(a, item, key),
        Body::Summary(items) => {
            let mut lines = Vec::new();
            for item in items.iter().take(SUMMARY_LISTS) {
                lines.push(format!(
                    "- [{}]({})",
                    escape(&item.headline()),
                    item.url(&a.public_url)
                ));
            }
            if items.len() > SUMMARY_LISTS {
                lines.push(format!("…and {} more", items.len() - SUMMARY_LISTS));
            }
            lines.push(format!("[All open incidents]({})", a.board()));
            json!({
                "fallback": a.plain(),
                "title": a.summary_headline(items),
                "text": lines.join("\n"),
            })
        }
        Body::Test => json!({
            "fallback": a.plain(),
            "title": "Test from Klaxon",
            "text": format!("Team {}'s incidents will be announced here.", escape(&a.team)),
        }),
    };
    json!({"attachments": [attachment]})
}

/// One incident's attachment: coloured by severity (green once resolved), linking to it, with
/// the actions that still apply.
fn one(a: &Announcement, item: &Item, key: Option<&str>) -> Value {
    let i = &item.incident;
    let color = match (i.state, i.severity) {
        (IncidentState::Resolved, _) => "#2e7d32",
        (_, Severity::Critical) => "#c62828",
        (_, Severity::Warning) => "#f9a825",
        (_, Severity::Info) => "#1565c0",
    };
    let mut attachment = json!({
        "fallback": a.plain(),
        "color": color,
        "title": item.headline(),
        "title_link": item.url(&a.public_url),
        "text": escape(&item.detail(&a.team)),
    });
    match key {
        Some(key) => attachment["actions"] = json!(actions(i, &a.public_url, key)),
        None => {
            if let Some(ack) = item.acknowledge_url(&a.public_url) {
                attachment["text"] = json!(format!(
                    "{}\n[Acknowledge]({ack})",
                    escape(&item.detail(&a.team))
                ));
            }
        }
    }
    attachment
}

/// The buttons of an incident still open; a resolved one has none.
fn actions(i: &Incident, public_url: &str, key: &str) -> Vec<Value> {
    if i.state == IncidentState::Resolved {
        return Vec::new();
    }
    ChatAct::ALL
        .iter()
        .filter(|act| **act != ChatAct::Acknowledge || i.state == IncidentState::Triggered)
        .map(|act| {
            let mut button = json!({
                "id": act.as_str(),
                "name": act.label(),
                "integration": {
                    "url": format!("{public_url}{ACTIONS_PATH}"),
                    "context": {
                        "action": act.as_str(),
                        "incident": i.id,
                        "sig": sign(key, act.as_str(), i.id),
                    },
                },
            });
            if *act == ChatAct::Acknowledge {
                button["style"] = json!("danger");
            }
            button
        })
        .collect()
}

/// The hex HMAC-SHA256, by the slash command's token, of an action on an incident.
pub fn sign(key: &str, action: &str, incident: i64) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).expect("any key");
    mac.update(format!("klaxon-mattermost:{action}:{incident}").as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Whether `sig` is `sign(key, action, incident)` (compared in constant time).
pub(crate) fn signed(key: &str, action: &str, incident: i64, sig: &str) -> bool {
    let Ok(given) = hex::decode(sig) else {
        return false;
    };
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).expect("any key");
    mac.update(format!("klaxon-mattermost:{action}:{incident}").as_bytes());
    mac.verify_slice(&given).is_ok()
}

/// The message's props for an incident as it is now, after `by` acted on it: what replaces the
/// announcement a button was pressed on.
pub(crate) fn current(
    i: &Incident,
    team: &str,
    public_url: &str,
    key: &str,
    by: Option<String>,
) -> Value {
    render(
        &Announcement::current(i, team, public_url, by, true),
        Some(key),
    )
}

/// Markdown's characters that would make alert text a link, a mention or emphasis.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '*' | '_' | '`' | '[' | ']' | '(' | ')' | '<' | '>' | '#' | '|' | '~' | '@'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_names_one_action_on_one_incident() {
        let sig = sign("token", "ack", 42);
        assert!(signed("token", "ack", 42, &sig));
        assert!(!signed("token", "resolve", 42, &sig));
        assert!(!signed("token", "ack", 43, &sig));
        assert!(!signed("other", "ack", 42, &sig));
        assert!(!signed("token", "ack", 42, "not hex"));
    }

    #[test]
    fn alert_text_makes_no_link_and_no_mention() {
        assert_eq!(
            escape("[x](http://evil) @all"),
            "\\[x\\]\\(http://evil\\) \\@all"
        );
    }
}
