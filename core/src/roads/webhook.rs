//! Klaxon's signed webhook: JSON POSTed to a URL, signed with the target's secret
//! (`Klaxon-Signature`, `Klaxon-Event`, `Klaxon-Delivery`). A team channel hears its incident
//! events (`WebhookEvent`); a person's webhook their pages, codes and tests (`PersonalWebhook`),
//! which an SMS gateway can forward.

use super::announcement::{Announcement, Body};
use super::http::answered;
use super::message::{Message, Words};
use super::{Failure, Form, Info, Owner, Profile, Road, Sent, To};
use crate::secrets::webhook_signature;
use crate::Core;
use klaxon_domain::channel::{shown_target, ChannelKind, WebhookEvent, WebhookTeam, EVENT_VERSION};
use klaxon_domain::contact::PersonalWebhook;
use klaxon_domain::Timestamp;
use serde_json::{json, Value};

static INFO: Info = Info {
    name: "webhook",
    label: "webhook",
    personal: Some(Profile {
        listed_as: "webhook",
        code_from: "Code sent to the webhook",
        in_chat: false,
        form: Some(Form {
            name: "Webhook",
            field: "Webhook URL",
            input: "url",
            placeholder: "",
            hint: "Pages are posted there as signed JSON. A code is posted first; enter it above. \
                   The signing secret is shown once, when it is added.",
            button: "Add webhook",
            folded: Some("A webhook (an SMS gateway, your own tool)"),
        }),
    }),
    channel: true,
    needs_code: true,
    shared_service: false,
    signed: true,
    per_minute: None,
};

pub struct WebhookRoad;

#[async_trait::async_trait]
impl Road for WebhookRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        None
    }

    fn check(&self, core: &Core, owner: Owner, target: &str) -> Result<String, String> {
        let (target, outbound, field) = match owner {
            Owner::Person => (
                klaxon_domain::contact::webhook_url(target)?,
                &core.personal_outbound,
                "url",
            ),
            Owner::Team => (target.to_string(), &core.outbound, "target"),
        };
        outbound
            .check_url(&target)
            .map_err(|why| format!("{field}: {why}"))?;
        Ok(target)
    }

    /// A URL can hold a credential: only its origin is shown.
    fn shown(&self, target: &str) -> String {
        shown_target(ChannelKind::Webhook, target)
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let body = match message {
            Message::Announcement(a) => render(a),
            _ => {
                let Some(words) =
                    Words::of(message, &core.config.public_url, "Pages reach you here.")
                else {
                    return Err(Failure::not_carried("webhook"));
                };
                serde_json::to_value(PersonalWebhook {
                    version: 1,
                    event: message.event_word().to_string(),
                    kind: words.kind.map(str::to_string),
                    to: to.name.clone(),
                    title: words.title,
                    message: words.text,
                    url: words.link,
                    acknowledge_url: words.ack_page,
                    acknowledge_post_url: words.ack_post,
                    code: words.code,
                    at: Timestamp(core.now()),
                })
                .unwrap_or_default()
            }
        };
        let outbound = match to.owner {
            Owner::Person => &core.personal_outbound,
            Owner::Team => &core.outbound,
        };
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let secret = to.secret.as_deref().unwrap_or_default();
        let req = outbound
            .request(reqwest::Method::POST, &to.target)
            .header("content-type", "application/json")
            .header(
                "klaxon-signature",
                webhook_signature(secret, core.now(), &body),
            )
            .header("klaxon-event", message.event_word())
            .header("klaxon-delivery", &to.delivery)
            .body(body);
        let who = format!("the webhook at {}", self.shown(&to.target));
        answered(&who, outbound.send(req).await)
    }
}

/// Klaxon's signed webhook body (`WebhookEvent`); a test is `{"version", "event": "test",
/// "team", "text"}`.
pub(super) fn render(a: &Announcement) -> Value {
    let team = WebhookTeam {
        id: a.team_id,
        name: a.team.clone(),
    };
    let (item, also) = match &a.body {
        Body::One(item) => (&**item, Vec::new()),
        Body::Summary(items) => (
            &items[0],
            items[1..].iter().map(|i| i.incident.id).collect(),
        ),
        Body::Test => {
            return json!({"version": EVENT_VERSION, "event": "test", "team": team, "text": a.plain()})
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
        url: item.url(&a.public_url),
        acknowledge_url: item.acknowledge_url(&a.public_url),
        also,
    })
    .unwrap_or_default()
}
