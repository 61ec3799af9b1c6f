//! Slack-format incoming webhooks (Slack, and the services that take its shape: Mattermost,
//! Rocket.Chat, Discord's `/slack` endpoint): a team's announcements as Block Kit.

use super::announcement::{Announcement, Body, SUMMARY_LISTS};
use super::chat::ChatWebhook;
use super::Info;
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::channel::ChannelKind;
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

/// The road: a chat webhook (`chat`) that posts announcements rendered as Slack shows them.
pub(super) fn road() -> ChatWebhook {
    ChatWebhook {
        info: &INFO,
        kind: ChannelKind::Slack,
        what: "the Slack-format webhook at",
        render,
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
