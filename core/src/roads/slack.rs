//! Slack: a team's announcements as Block Kit, through an incoming webhook (Slack, and the
//! services that take its shape: Mattermost, Rocket.Chat, Discord's `/slack` endpoint), or, when
//! the channel is a Slack channel's id, posted by the install's Slack app (`api`) and edited in
//! place as the incident moves.

pub mod api;

use super::announcement::{Announcement, Body, SUMMARY_LISTS};
use super::http::post_json;
use super::message::Message;
use super::{Failure, Info, Owner, Road, Sent, To};
use crate::Core;
use api::SlackBot;
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::channel::{is_channel_id, shown_target, ChannelKind};
use klaxon_domain::chat::ChatAct;
use klaxon_domain::incident::Incident;
use serde_json::{json, Value};

static INFO: Info = Info {
    name: "slack",
    label: "Slack",
    personal: None,
    channel: true,
    needs_code: false,
    shared_service: false,
    signed: false,
    per_minute: None,
};

/// The road; the app's bot token (`KLAXON_SLACK_BOT_TOKEN`) lets a channel be a channel id.
pub(super) struct SlackRoad(pub Option<SlackBot>);

#[async_trait::async_trait]
impl Road for SlackRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        None
    }

    fn check(&self, core: &Core, _: Owner, target: &str) -> Result<String, String> {
        if is_channel_id(ChannelKind::Slack, target) {
            return match &self.0 {
                Some(_) => Ok(target.to_string()),
                None => Err("target: a Slack channel id needs Klaxon's Slack app \
                             (KLAXON_SLACK_BOT_TOKEN); or give an incoming webhook's URL"
                    .into()),
            };
        }
        core.outbound
            .check_url(target)
            .map(|_| target.to_string())
            .map_err(|why| format!("target: {why}"))
    }

    fn shown(&self, target: &str) -> String {
        shown_target(ChannelKind::Slack, target)
    }

    fn edits(&self, target: &str) -> bool {
        is_channel_id(ChannelKind::Slack, target)
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        if let Message::Update(a) = message {
            // A channel moved to a webhook since the edit was queued has nothing to edit.
            if let (Some(bot), true) = (&self.0, self.edits(&to.target)) {
                api::update(core, bot, &to.target, a).await;
            }
            return Ok(());
        }
        let Message::Announcement(a) = message else {
            return Err(Failure::not_carried(INFO.label));
        };
        if !is_channel_id(ChannelKind::Slack, &to.target) {
            let who = format!("the Slack-format webhook at {}", self.shown(&to.target));
            return post_json(&core.outbound, &to.target, &who, &render(a)).await;
        }
        match &self.0 {
            Some(bot) => api::post(core, bot, &to.target, a).await,
            None => Err(Failure::unconfigured("Slack app", "KLAXON_SLACK_BOT_TOKEN")),
        }
    }
}

/// A Slack incoming webhook's body: Block Kit, with `text` as the fallback that
/// notifications and Slack-compatible services (Mattermost, Rocket.Chat, Discord) show.
/// Shapes: <https://api.slack.com/messaging/webhooks>, <https://api.slack.com/reference/block-kit/blocks>.
pub(super) fn render(a: &Announcement) -> Value {
    let section =
        |text: String| json!({"type": "section", "text": {"type": "mrkdwn", "text": text}});
    let button = |label: &str, url: String, primary: bool| {
        let mut b =
            json!({"type": "button", "text": {"type": "plain_text", "text": label}, "url": url});
        if primary {
            b["style"] = json!("danger");
        }
        b
    };
    let blocks = match &a.body {
        Body::One(item) => {
            // Buttons that act through the Slack app, or links to the app's pages.
            let mut buttons = Vec::new();
            let mut open = button("Open incident", item.url(&a.public_url), false);
            if a.interactive {
                buttons = acting(&item.incident);
                open["action_id"] = json!("klaxon_open");
            } else if let Some(ack) = item.acknowledge_url(&a.public_url) {
                buttons.push(button("Acknowledge", ack, true));
            }
            buttons.push(open);
            vec![
                section(format!(
                    "*{}*\n{}",
                    escape_mrkdwn(&item.headline()),
                    escape_mrkdwn(&item.detail(&a.team))
                )),
                json!({"type": "actions", "elements": buttons}),
            ]
        }
        Body::Summary(items) => {
            let mut lines = vec![format!("*{}*", escape_mrkdwn(&a.summary_headline(items)))];
            for item in items.iter().take(SUMMARY_LISTS) {
                lines.push(format!(
                    "• <{}|{}>",
                    item.url(&a.public_url),
                    escape_mrkdwn(&item.headline()).replace('|', "¦")
                ));
            }
            if items.len() > SUMMARY_LISTS {
                lines.push(format!("…and {} more", items.len() - SUMMARY_LISTS));
            }
            vec![
                section(lines.join("\n")),
                json!({"type": "actions", "elements": [button("All open incidents", a.board(), false)]}),
            ]
        }
        Body::Test => vec![section(format!(
            "*Test from Klaxon*: team {}'s incidents will be announced here.",
            escape_mrkdwn(&a.team)
        ))],
    };
    // `text` is mrkdwn too, and what Mattermost, Rocket.Chat and Discord render.
    json!({"text": escape_mrkdwn(&a.plain()), "blocks": blocks})
}

/// The buttons that act on an incident still open, through the Slack app's interactivity
/// requests (`chat::slack`): each names its action (`klaxon_ack`, …) and the incident.
fn acting(i: &Incident) -> Vec<Value> {
    if i.state == IncidentState::Resolved {
        return Vec::new();
    }
    ChatAct::ALL
        .iter()
        .filter(|act| **act != ChatAct::Acknowledge || i.state == IncidentState::Triggered)
        .map(|act| {
            let mut b = json!({
                "type": "button",
                "text": {"type": "plain_text", "text": act.label()},
                "action_id": format!("klaxon_{}", act.as_str()),
                "value": i.id.to_string(),
            });
            if *act == ChatAct::Acknowledge {
                b["style"] = json!("danger");
            }
            b
        })
        .collect()
}

/// The message for an incident as it is now, after `by` acted on it from Slack: what replaces
/// the announcement the button was pressed on.
pub(crate) fn current(i: &Incident, team: &str, public_url: &str, by: Option<String>) -> Value {
    render(&Announcement::current(i, team, public_url, by, true))
}

/// Slack's mrkdwn escapes only these three.
fn escape_mrkdwn(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
