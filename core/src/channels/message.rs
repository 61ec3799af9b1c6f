//! One announcement rendered for each kind of channel: plain text (Matrix's `body`, Slack's
//! `text` fallback, which Mattermost, Rocket.Chat and Discord show), Matrix HTML, Slack Block
//! Kit, a Teams Adaptive Card and Klaxon's own JSON event. Each says what happened, the severity
//! in words, the team, who has it, and links to the incident; an event that wants an owner also
//! links to where a responder acknowledges (the incident page: signed in, it asks before it acts,
//! so a link preview or a scanner acknowledges nothing).

use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::channel::{ChannelEvent, WebhookEvent, WebhookTeam, EVENT_VERSION};
use klaxon_domain::incident::Incident;
use klaxon_domain::text::quiet;
use klaxon_domain::Timestamp;
use serde_json::{json, Value};

/// Incidents a storm summary names one by one; the rest are counted.
const SUMMARY_LISTS: usize = 10;
/// The longest title or text a message carries (characters); chat services cap a message.
const MAX_TEXT: usize = 300;

/// One event of one incident, as a channel hears it.
#[derive(Debug, Clone)]
pub(super) struct Item {
    /// The outbox row: unique per delivery.
    pub post_id: i64,
    pub event: ChannelEvent,
    pub at: i64,
    pub incident: Incident,
    pub actor: Option<String>,
    /// The timeline's sentence for it.
    pub text: String,
}

#[derive(Debug, Clone)]
pub(super) enum Body {
    One(Box<Item>),
    /// A storm: many events in one message.
    Summary(Vec<Item>),
    /// "Send a test".
    Test,
}

#[derive(Debug, Clone)]
pub(super) struct Message {
    pub team_id: i64,
    pub team: String,
    pub public_url: String,
    pub body: Body,
}

pub(super) fn test_message(team_id: i64, team: &str, public_url: &str) -> Message {
    Message {
        team_id,
        team: team.to_string(),
        public_url: public_url.to_string(),
        body: Body::Test,
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "Critical",
        Severity::Warning => "Warning",
        Severity::Info => "Info",
    }
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Who has the incident, in words.
fn who_has_it(i: &Incident) -> String {
    match (i.state, &i.acknowledged_by, &i.assignee) {
        (IncidentState::Resolved, _, _) => "resolved".into(),
        (_, Some(by), _) => format!("acknowledged by {by}"),
        (_, None, Some(who)) => format!("with {who}, not acknowledged yet"),
        (_, None, None) => "nobody has it yet".into(),
    }
}

impl Item {
    /// "Critical incident opened: Disk full on db-1", with who did it when someone did.
    fn headline(&self) -> String {
        let by = match (&self.actor, self.event) {
            (
                Some(who),
                ChannelEvent::Acknowledged
                | ChannelEvent::Resolved
                | ChannelEvent::Reassigned
                | ChannelEvent::ResolutionNote,
            ) => {
                format!(" by {who}")
            }
            _ => String::new(),
        };
        quiet(&format!(
            "{} incident {}{by}: {}",
            severity_word(self.incident.severity),
            self.event.phrase(),
            clip(&self.incident.title)
        ))
    }

    /// The line under the headline: the team, who has it, and what the timeline says where it
    /// adds something (a ladder level, a new assignee, the fix).
    fn detail(&self, team: &str) -> String {
        let mut line = format!("Team {team} · {}", who_has_it(&self.incident));
        match self.event {
            ChannelEvent::Escalated | ChannelEvent::Reassigned => {
                line.push_str(&format!(" · {}", clip(&self.text)));
            }
            ChannelEvent::ResolutionNote => line.push_str(&format!(" · Fix: {}", clip(&self.text))),
            _ => {}
        }
        quiet(&line)
    }

    fn url(&self, public_url: &str) -> String {
        format!("{public_url}/incidents/{}", self.incident.id)
    }

    /// Where a responder acknowledges, while the event wants an owner and nobody has it.
    fn acknowledge_url(&self, public_url: &str) -> Option<String> {
        (self.event.asks_for_owner() && self.incident.state == IncidentState::Triggered)
            .then(|| format!("{public_url}/incidents/{}#acknowledge", self.incident.id))
    }
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Teams renders a TextBlock's markdown, so an alert's title could carry a link of its own
/// (`[Acknowledge](https://elsewhere)`). A zero-width space between `]` and `(` keeps the text as
/// written and makes it no link.
fn unlinked(text: &str) -> String {
    text.replace("](", "]\u{200B}(")
}

/// Slack's mrkdwn escapes only these three.
fn escape_mrkdwn(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Message {
    pub fn event_word(&self) -> &'static str {
        match &self.body {
            Body::One(item) => item.event.as_str(),
            Body::Summary(items) => items[0].event.as_str(),
            Body::Test => "test",
        }
    }

    fn summary_headline(&self, items: &[Item]) -> String {
        format!(
            "{} incident events for team {} in a storm (summarised to keep the channel readable)",
            items.len(),
            quiet(&self.team)
        )
    }

    fn board(&self) -> String {
        format!("{}/", self.public_url)
    }

    /// The message as plain text with its links written out.
    pub fn plain(&self) -> String {
        match &self.body {
            Body::One(item) => {
                let mut text = format!("{}\n{}", item.headline(), item.detail(&self.team));
                if let Some(ack) = item.acknowledge_url(&self.public_url) {
                    text.push_str(&format!("\nAcknowledge: {ack}"));
                }
                text.push_str(&format!("\nOpen: {}", item.url(&self.public_url)));
                text
            }
            Body::Summary(items) => {
                let mut text = self.summary_headline(items);
                for item in items.iter().take(SUMMARY_LISTS) {
                    text.push_str(&format!(
                        "\n- {} ({})",
                        item.headline(),
                        item.url(&self.public_url)
                    ));
                }
                if items.len() > SUMMARY_LISTS {
                    text.push_str(&format!("\n…and {} more", items.len() - SUMMARY_LISTS));
                }
                text.push_str(&format!("\nAll open incidents: {}", self.board()));
                text
            }
            Body::Test => format!(
                "Test from Klaxon: team {}'s incidents will be announced here.\nOpen Klaxon: {}",
                quiet(&self.team),
                self.board()
            ),
        }
    }

    /// Matrix's `formatted_body` (`org.matrix.custom.html`).
    pub fn html(&self) -> String {
        let link = |url: &str, label: &str| {
            format!(
                "<a href=\"{}\">{}</a>",
                escape_html(url),
                escape_html(label)
            )
        };
        match &self.body {
            Body::One(item) => {
                let mut links = Vec::new();
                if let Some(ack) = item.acknowledge_url(&self.public_url) {
                    links.push(link(&ack, "Acknowledge"));
                }
                links.push(link(&item.url(&self.public_url), "Open incident"));
                format!(
                    "<p><strong>{}</strong><br>{}</p><p>{}</p>",
                    escape_html(&item.headline()),
                    escape_html(&item.detail(&self.team)),
                    links.join(" · ")
                )
            }
            Body::Summary(items) => {
                let mut html = format!("<p><strong>{}</strong></p><ul>", escape_html(&self.summary_headline(items)));
                for item in items.iter().take(SUMMARY_LISTS) {
                    html.push_str(&format!("<li>{}</li>", link(&item.url(&self.public_url), &item.headline())));
                }
                html.push_str("</ul>");
                if items.len() > SUMMARY_LISTS {
                    html.push_str(&format!("<p>…and {} more</p>", items.len() - SUMMARY_LISTS));
                }
                html.push_str(&format!("<p>{}</p>", link(&self.board(), "All open incidents")));
                html
            }
            Body::Test => format!(
                "<p><strong>Test from Klaxon</strong>: team {}'s incidents will be announced here.</p><p>{}</p>",
                escape_html(&self.team),
                link(&self.board(), "Open Klaxon")
            ),
        }
    }

    /// A Slack incoming webhook's body: Block Kit, with `text` as the fallback that
    /// notifications and Slack-compatible services (Mattermost, Rocket.Chat, Discord) show.
    /// Shapes: <https://api.slack.com/messaging/webhooks>, <https://api.slack.com/reference/block-kit/blocks>.
    pub fn slack(&self) -> Value {
        let section =
            |text: String| json!({"type": "section", "text": {"type": "mrkdwn", "text": text}});
        let button = |label: &str, url: String, primary: bool| {
            let mut b = json!({"type": "button", "text": {"type": "plain_text", "text": label}, "url": url});
            if primary {
                b["style"] = json!("danger");
            }
            b
        };
        let blocks = match &self.body {
            Body::One(item) => {
                let mut buttons = Vec::new();
                if let Some(ack) = item.acknowledge_url(&self.public_url) {
                    buttons.push(button("Acknowledge", ack, true));
                }
                buttons.push(button("Open incident", item.url(&self.public_url), false));
                vec![
                    section(format!(
                        "*{}*\n{}",
                        escape_mrkdwn(&item.headline()),
                        escape_mrkdwn(&item.detail(&self.team))
                    )),
                    json!({"type": "actions", "elements": buttons}),
                ]
            }
            Body::Summary(items) => {
                let mut lines = vec![format!(
                    "*{}*",
                    escape_mrkdwn(&self.summary_headline(items))
                )];
                for item in items.iter().take(SUMMARY_LISTS) {
                    lines.push(format!(
                        "• <{}|{}>",
                        item.url(&self.public_url),
                        escape_mrkdwn(&item.headline()).replace('|', "¦")
                    ));
                }
                if items.len() > SUMMARY_LISTS {
                    lines.push(format!("…and {} more", items.len() - SUMMARY_LISTS));
                }
                vec![
                    section(lines.join("\n")),
                    json!({"type": "actions", "elements": [button("All open incidents", self.board(), false)]}),
                ]
            }
            Body::Test => vec![section(format!(
                "*Test from Klaxon*: team {}'s incidents will be announced here.",
                escape_mrkdwn(&self.team)
            ))],
        };
        // `text` is mrkdwn too, and what Mattermost, Rocket.Chat and Discord render.
        json!({"text": escape_mrkdwn(&self.plain()), "blocks": blocks})
    }

    /// A Teams workflow webhook's body: a message with one Adaptive Card (version 1.4).
    /// Shapes: <https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using>,
    /// <https://adaptivecards.io/explorer/AdaptiveCard.html>.
    pub fn teams(&self) -> Value {
        let text = |t: String, strong: bool| {
            let mut block = json!({"type": "TextBlock", "text": t, "wrap": true});
            if strong {
                block["weight"] = json!("Bolder");
                block["size"] = json!("Medium");
            }
            block
        };
        let open = |title: &str, url: String| json!({"type": "Action.OpenUrl", "title": title, "url": url});
        let (body, actions) = match &self.body {
            Body::One(item) => {
                let mut actions = Vec::new();
                if let Some(ack) = item.acknowledge_url(&self.public_url) {
                    actions.push(open("Acknowledge", ack));
                }
                actions.push(open("Open incident", item.url(&self.public_url)));
                let facts = json!({"type": "FactSet", "facts": [
                    {"title": "Severity", "value": severity_word(item.incident.severity)},
                    {"title": "Team", "value": self.team},
                    {"title": "Who has it", "value": who_has_it(&item.incident)},
                ]});
                (
                    vec![
                        text(unlinked(&item.headline()), true),
                        text(unlinked(&item.detail(&self.team)), false),
                        facts,
                    ],
                    actions,
                )
            }
            Body::Summary(items) => {
                let mut body = vec![text(self.summary_headline(items), true)];
                for item in items.iter().take(SUMMARY_LISTS) {
                    body.push(text(
                        format!(
                            "[{}]({})",
                            unlinked(&item.headline()),
                            item.url(&self.public_url)
                        ),
                        false,
                    ));
                }
                if items.len() > SUMMARY_LISTS {
                    body.push(text(
                        format!("…and {} more", items.len() - SUMMARY_LISTS),
                        false,
                    ));
                }
                (body, vec![open("All open incidents", self.board())])
            }
            Body::Test => (
                vec![text(
                    format!(
                        "Test from Klaxon: team {}'s incidents will be announced here.",
                        self.team
                    ),
                    false,
                )],
                vec![open("Open Klaxon", self.board())],
            ),
        };
        json!({
            "type": "message",
            "attachments": [{
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": null,
                "content": {
                    "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                    "type": "AdaptiveCard",
                    "version": "1.4",
                    "body": body,
                    "actions": actions,
                }
            }]
        })
    }

    /// Klaxon's signed webhook body (`WebhookEvent`); a test is `{"version", "event": "test",
    /// "team", "text"}`.
    pub fn webhook(&self) -> Value {
        let team = WebhookTeam {
            id: self.team_id,
            name: self.team.clone(),
        };
        let (item, also) = match &self.body {
            Body::One(item) => (&**item, Vec::new()),
            Body::Summary(items) => (
                &items[0],
                items[1..].iter().map(|i| i.incident.id).collect(),
            ),
            Body::Test => {
                return json!({"version": EVENT_VERSION, "event": "test", "team": team, "text": self.plain()})
            }
        };
        serde_json::to_value(WebhookEvent {
            version: EVENT_VERSION,
            delivery: item.post_id,
            event: item.event,
            at: Timestamp(item.at),
            team,
            incident: item.incident.clone(),
            actor: item.actor.clone(),
            text: item.text.clone(),
            url: item.url(&self.public_url),
            acknowledge_url: item.acknowledge_url(&self.public_url),
            also,
        })
        .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
