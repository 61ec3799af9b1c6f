//! Sending one push by its road: an ntfy topic, a Web Push subscription, an email address, a
//! Matrix account or a signed webhook. A push is composed once, in ntfy's shape (`message`);
//! each road renders that in its own.

use super::bundle::Push;
use super::ntfy::{Message, PushError};
use super::personal::{Note, PersonalRoad};
use super::webpush;
use crate::mail::{escape_html, Mail};
use crate::outbound::Outcome;
use crate::{Core, Result};
use klaxon_domain::contact::Destination;
use klaxon_domain::paging::PageKind;
use std::collections::HashMap;

/// A contact method as sending needs it.
#[derive(sqlx::FromRow)]
pub(super) struct Method {
    pub id: i64,
    pub target: String,
    pub p256dh: Option<String>,
    pub auth: Option<String>,
    pub signing_secret: Option<String>,
    pub room: Option<String>,
    pub username: String,
}

/// The methods the pushes' destinations name, by id.
pub(super) type Methods = HashMap<i64, Method>;

impl Core {
    /// Reads the contact methods the pushes go to, in one query.
    pub(super) async fn methods_of<'a>(
        &self,
        topics: impl Iterator<Item = &'a str>,
    ) -> Result<Methods> {
        let mut ids: Vec<i64> = topics
            .filter_map(|t| Destination::parse(t).method_id())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let rows: Vec<Method> = self
            .db
            .fetch_in(
                "SELECT m.id, m.target, m.p256dh, m.auth, m.signing_secret, m.room, u.username \
                 FROM contact_methods m JOIN users u ON u.id = m.user_id \
                 WHERE m.verified_at IS NOT NULL AND m.id IN ({ids})",
                &[],
                &ids,
            )
            .await?;
        Ok(rows.into_iter().map(|m| (m.id, m)).collect())
    }

    /// Sends one push by the road its destination names.
    pub(super) async fn send_by_road(
        &self,
        push: &Push,
        message: &Message,
        methods: &Methods,
    ) -> std::result::Result<(), PushError> {
        let destination = Destination::parse(push.topic());
        let method = match destination.method_id() {
            Some(id) => Some(methods.get(&id).ok_or_else(|| {
                PushError::permanent("the contact method was removed".to_string())
            })?),
            None => None,
        };
        match (destination, method) {
            (Destination::Ntfy(_), _) => match &self.ntfy {
                Some(ntfy) => ntfy.publish(message).await,
                None => Err(PushError::unconfigured()),
            },
            (Destination::Email(_), Some(m)) => {
                let mailer = self.mail.as_ref().ok_or_else(|| {
                    PushError::permanent("no mail server is configured (KLAXON_SMTP_URL)".into())
                })?;
                let mail = page_mail(&m.target, push, message, &self.config.public_url);
                mailer.send(mail).await.map_err(|e| PushError {
                    reason: e.reason,
                    permanent: e.refused,
                    outage: !e.refused,
                    ..PushError::default()
                })
            }
            (Destination::Webpush(_), Some(m)) => {
                let to = webpush::Subscription {
                    endpoint: &m.target,
                    p256dh: m.p256dh.as_deref().unwrap_or_default(),
                    auth: m.auth.as_deref().unwrap_or_default(),
                };
                let payload = push_payload(push, message);
                webpush::send(
                    &self.personal_outbound,
                    &self.vapid,
                    &self.config.public_url,
                    &to,
                    &payload,
                )
                .await
            }
            (d @ (Destination::Matrix(_) | Destination::Webhook(_)), Some(m)) => {
                let road = PersonalRoad {
                    method_id: m.id,
                    username: &m.username,
                    target: &m.target,
                    signing_secret: m.signing_secret.as_deref(),
                    room: m.room.as_deref(),
                };
                let note = page_note(push, message, &self.config.public_url);
                let first = push.pages().next().map_or(0, |p| p.id);
                let delivery = format!("page-{first}");
                match self.note_by_road(d.kind(), &road, &note, &delivery).await {
                    Outcome::Sent => Ok(()),
                    Outcome::Failed {
                        sentence,
                        retry_after: Some(wait),
                    } => Err(PushError {
                        reason: sentence,
                        retry_after: Some(wait),
                        outage: true,
                        rate_limited: true,
                        ..PushError::default()
                    }),
                    Outcome::Failed { sentence, .. } => Err(PushError::outage(sentence)),
                }
            }
            (_, None) => Err(PushError::permanent("no such contact method".into())),
        }
    }
}

/// A road in words, for the timeline.
pub(super) fn road_name(d: &Destination) -> &'static str {
    match d {
        Destination::Ntfy(_) => "ntfy",
        Destination::Webpush(_) => "Web Push",
        Destination::Email(_) => "email",
        Destination::Matrix(_) => "Matrix",
        Destination::Webhook(_) => "webhook",
    }
}

/// A page as a Matrix message or a webhook's body: the message, the incident, and where the
/// page can be acknowledged, the confirmation page (for a person) and the POST (for a program).
fn page_note(push: &Push, message: &Message, public_url: &str) -> Note {
    let kind = match push {
        Push::One(send) => send.page.kind.as_str().to_string(),
        Push::Summary(_) => "summary".to_string(),
    };
    Note {
        event: "page",
        kind: Some(kind),
        title: message.title.clone(),
        message: message.message.clone(),
        url: message.click.clone(),
        ack_page: ack_token(message).map(|t| format!("{public_url}/ack/{t}")),
        ack_post: message.actions.first().map(|a| a.url.clone()),
        code: None,
    }
}

/// The acknowledge token a message's button carries, if any: its URL ends with it.
fn ack_token(message: &Message) -> Option<&str> {
    message
        .actions
        .first()
        .and_then(|a| a.url.rsplit('/').next())
}

/// A page as an email: the subject names severity, team and title; the text and HTML parts
/// carry the message, the incident link and, where the page can be acknowledged, a link to a
/// confirmation page (a mail scanner following links must not acknowledge anything).
pub(super) fn page_mail(to: &str, push: &Push, message: &Message, public_url: &str) -> Mail {
    let subject = match push {
        Push::One(send) => match &send.gist {
            Some(g) if send.page.kind == PageKind::AllClear => {
                format!("[RESOLVED] {}: {}", g.team, g.title)
            }
            Some(g) => format!(
                "[{}] {}: {}",
                g.severity.as_str().to_ascii_uppercase(),
                g.team,
                g.title
            ),
            None => message.title.clone(),
        },
        Push::Summary(_) => message.title.clone(),
    };
    let ack = ack_token(message).map(|t| format!("{public_url}/ack/{t}"));
    let mut text = format!("{}\n\n{}\n", message.title, message.message);
    let mut html = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\"><h2>{}</h2>",
        escape_html(&message.title)
    );
    for para in message.message.split("\n\n") {
        html.push_str(&format!(
            "<p>{}</p>",
            escape_html(para).replace('\n', "<br>")
        ));
    }
    if let Some(ack) = &ack {
        text.push_str(&format!("\nAcknowledge: {ack}\n"));
        html.push_str(&format!(
            "<p><a href=\"{}\" style=\"font-size:1.3em;font-weight:bold\">Acknowledge</a></p>",
            escape_html(ack)
        ));
    }
    if let Some(link) = &message.click {
        text.push_str(&format!("Open: {link}\n"));
        html.push_str(&format!(
            "<p><a href=\"{}\">Open in Klaxon</a></p>",
            escape_html(link)
        ));
    }
    html.push_str("</body></html>");
    Mail {
        to: to.to_string(),
        subject,
        text,
        html,
    }
}

/// A page as a Web Push payload, read by the app's service worker: what to show, where a tap
/// goes, the Acknowledge URL (a POST that works with the app closed), and a tag per incident
/// so the all-clear replaces the page's notification.
pub(super) fn push_payload(push: &Push, message: &Message) -> Vec<u8> {
    let (tag, kind) = match push {
        Push::One(send) => (
            send.page.incident_id.map_or_else(
                || "klaxon-notice".to_string(),
                |id| format!("klaxon-incident-{id}"),
            ),
            send.page.kind,
        ),
        Push::Summary(sends) => (
            format!("klaxon-summary-{}", sends[0].page.id),
            sends[0].page.kind,
        ),
    };
    let mut body = message.message.clone();
    loop {
        let payload = serde_json::json!({
            "title": message.title,
            "body": body,
            "url": message.click,
            "ack_url": message.actions.first().map(|a| a.url.as_str()),
            "tag": tag,
            "kind": kind.as_str(),
        })
        .to_string();
        // A title too long for any body is refused by `encrypt` as a failure for good.
        if payload.len() <= webpush::MAX_PLAINTEXT || body.len() <= '…'.len_utf8() {
            return payload.into_bytes();
        }
        // Cut at a character boundary and try again; escaping makes the JSON longer than the text.
        let mut cut = body
            .len()
            .saturating_sub(payload.len() - webpush::MAX_PLAINTEXT + 8);
        while cut > 0 && !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        body.push('…');
    }
}
