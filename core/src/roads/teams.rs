//! Microsoft Teams workflow webhooks: a team's announcements as an Adaptive Card.

use super::announcement::{severity_word, who_has_it, Announcement, Body, SUMMARY_LISTS};
use super::chat::ChatWebhook;
use super::Info;
use klaxon_domain::channel::ChannelKind;
use serde_json::{json, Value};

static INFO: Info = Info {
    name: "teams",
    label: "Teams",
    personal: None,
    channel: true,
    needs_code: false,
    shared_service: false,
    signed: false,
    per_minute: None,
};

/// The road: a chat webhook (`chat`) that posts announcements rendered as Teams shows them.
pub(super) fn road() -> ChatWebhook {
    ChatWebhook {
        info: &INFO,
        kind: ChannelKind::Teams,
        what: "the Teams webhook at",
        render,
    }
}

/// A Teams workflow webhook's body: a message with one Adaptive Card (version 1.4).
/// Shapes: <https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using>,
/// <https://adaptivecards.io/explorer/AdaptiveCard.html>.
pub(super) fn render(a: &Announcement) -> Value {
    let text = |t: String, strong: bool| {
        let mut block = json!({"type": "TextBlock", "text": t, "wrap": true});
        if strong {
            block["weight"] = json!("Bolder");
            block["size"] = json!("Medium");
        }
        block
    };
    let open =
        |title: &str, url: String| json!({"type": "Action.OpenUrl", "title": title, "url": url});
    let (body, actions) = match &a.body {
        Body::One(item) => {
            let mut actions = Vec::new();
            if let Some(ack) = item.acknowledge_url(&a.public_url) {
                actions.push(open("Acknowledge", ack));
            }
            actions.push(open("Open incident", item.url(&a.public_url)));
            let facts = json!({"type": "FactSet", "facts": [
                {"title": "Severity", "value": severity_word(item.incident.severity)},
                {"title": "Team", "value": a.team},
                {"title": "Who has it", "value": who_has_it(&item.incident)},
            ]});
            (
                vec![
                    text(unlinked(&item.headline()), true),
                    text(unlinked(&item.detail(&a.team)), false),
                    facts,
                ],
                actions,
            )
        }
        Body::Summary(items) => {
            let mut body = vec![text(a.summary_headline(items), true)];
            for item in items.iter().take(SUMMARY_LISTS) {
                body.push(text(
                    format!(
                        "[{}]({})",
                        unlinked(&item.headline()),
                        item.url(&a.public_url)
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
            (body, vec![open("All open incidents", a.board())])
        }
        Body::Test => (
            vec![text(
                format!(
                    "Test from Klaxon: team {}'s incidents will be announced here.",
                    a.team
                ),
                false,
            )],
            vec![open("Open Klaxon", a.board())],
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

/// Teams renders a TextBlock's markdown, so an alert's title could carry a link of its own
/// (`[Acknowledge](https://elsewhere)`). A zero-width space between `]` and `(` keeps the text as
/// written and makes it no link.
fn unlinked(text: &str) -> String {
    text.replace("](", "]\u{200B}(")
}
