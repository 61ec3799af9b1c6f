//! A person's Matrix account and signed webhook as roads: pages, verification codes and tests
//! go to them as one `Note`. Matrix notes go into the direct room the bot opened with the
//! account (opened the first time and kept on the method's row; the person is invited again if
//! they left it, so no page lands in a room nobody reads); webhook notes are
//! `PersonalWebhook` bodies signed as a team channel's webhook is.

use crate::outbound::{outcome, Outcome};
use crate::secrets::webhook_signature;
use crate::{Core, Result};
use klaxon_domain::channel::{shown_target, ChannelKind};
use klaxon_domain::contact::{ContactKind, PersonalWebhook};
use klaxon_domain::text::quiet;
use klaxon_domain::Timestamp;
use reqwest::Method;

/// What one message to a person says, whatever carries it.
pub(crate) struct Note {
    /// `page`, `verify` or `test`: the webhook's `Klaxon-Event`.
    pub event: &'static str,
    /// A page's kind (`opening`, …, or `summary`).
    pub kind: Option<String>,
    pub title: String,
    pub message: String,
    pub url: Option<String>,
    /// The confirmation page that acknowledges (a person opens it; a GET never acts).
    pub ack_page: Option<String>,
    /// `POST /api/notify/ack/{token}`, for a program.
    pub ack_post: Option<String>,
    pub code: Option<String>,
}

/// A method as a Matrix or webhook note needs it.
pub(crate) struct PersonalRoad<'a> {
    pub method_id: i64,
    pub username: &'a str,
    /// The Matrix user id or the webhook's URL.
    pub target: &'a str,
    pub signing_secret: Option<&'a str>,
    pub room: Option<&'a str>,
}

impl Note {
    /// Alert text in it mentions nobody and links nowhere (`text::quiet`): a person's Matrix
    /// room is chat like a team's.
    fn plain(&self) -> String {
        let mut text = format!("{}\n\n{}", quiet(&self.title), quiet(&self.message));
        if let Some(code) = &self.code {
            text.push_str(&format!("\n\nCode: {code}"));
        }
        if let Some(ack) = &self.ack_page {
            text.push_str(&format!("\n\nAcknowledge: {ack}"));
        }
        if let Some(url) = &self.url {
            text.push_str(&format!("\nOpen: {url}"));
        }
        text
    }

    fn html(&self) -> String {
        let esc = crate::mail::escape_html;
        let mut html = format!("<p><strong>{}</strong></p>", esc(&quiet(&self.title)));
        for para in quiet(&self.message).split("\n\n") {
            html.push_str(&format!("<p>{}</p>", esc(para).replace('\n', "<br>")));
        }
        if let Some(code) = &self.code {
            html.push_str(&format!("<p>Code: <code>{}</code></p>", esc(code)));
        }
        let mut links = Vec::new();
        if let Some(ack) = &self.ack_page {
            links.push(format!("<a href=\"{}\">Acknowledge</a>", esc(ack)));
        }
        if let Some(url) = &self.url {
            links.push(format!("<a href=\"{}\">Open in Klaxon</a>", esc(url)));
        }
        if !links.is_empty() {
            html.push_str(&format!("<p>{}</p>", links.join(" · ")));
        }
        html
    }
}

impl Core {
    /// Sends a note by a Matrix (`kind`) or webhook method. `delivery` is the same on every retry
    /// of one note: the webhook's `Klaxon-Delivery`, and prefixed, the Matrix transaction id, so
    /// the homeserver keeps one event.
    pub(crate) async fn note_by_road(
        &self,
        kind: ContactKind,
        road: &PersonalRoad<'_>,
        note: &Note,
        delivery: &str,
    ) -> Outcome {
        if kind != ContactKind::Matrix {
            return self.note_to_webhook(road, note, delivery).await;
        }
        self.note_to_matrix(road, note, &format!("klaxon-{delivery}"))
            .await
            .unwrap_or_else(|e| Outcome::Failed {
                sentence: e.to_string(),
                retry_after: None,
            })
    }

    /// Posts a note into the method's direct room, opening the room first when there is none.
    async fn note_to_matrix(
        &self,
        road: &PersonalRoad<'_>,
        note: &Note,
        txn: &str,
    ) -> Result<Outcome> {
        let Some(bot) = &self.matrix else {
            return Ok(Outcome::Failed {
                sentence: "no Matrix homeserver is configured (KLAXON_MATRIX_HOMESERVER)".into(),
                retry_after: None,
            });
        };
        // A person who left the room is invited again; a room the bot cannot use is replaced.
        let kept = match road.room {
            Some(room) if bot.keeps_reader(room, road.target).await => Some(room.to_string()),
            _ => None,
        };
        let room = match kept {
            Some(room) => room,
            None => match bot.direct_room(road.target).await {
                Ok(room) => {
                    sqlx::query("UPDATE contact_methods SET room = $1 WHERE id = $2")
                        .bind(&room)
                        .bind(road.method_id)
                        .execute(&self.db.pool)
                        .await?;
                    room
                }
                Err(failed) => return Ok(failed),
            },
        };
        Ok(bot.post(&room, &note.plain(), &note.html(), txn).await)
    }

    /// Posts a note to the method's webhook, signed with its secret.
    async fn note_to_webhook(
        &self,
        road: &PersonalRoad<'_>,
        note: &Note,
        delivery: &str,
    ) -> Outcome {
        let body = PersonalWebhook {
            version: 1,
            event: note.event.to_string(),
            kind: note.kind.clone(),
            to: road.username.to_string(),
            title: note.title.clone(),
            message: note.message.clone(),
            url: note.url.clone(),
            acknowledge_url: note.ack_page.clone(),
            acknowledge_post_url: note.ack_post.clone(),
            code: note.code.clone(),
            at: Timestamp(self.now()),
        };
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let secret = road.signing_secret.unwrap_or_default();
        let req = self
            .personal_outbound
            .request(Method::POST, road.target)
            .header("content-type", "application/json")
            .header(
                "klaxon-signature",
                webhook_signature(secret, self.now(), &body),
            )
            .header("klaxon-event", note.event)
            .header("klaxon-delivery", delivery)
            .body(body);
        let who = format!(
            "the webhook at {}",
            shown_target(ChannelKind::Webhook, road.target)
        );
        outcome(&who, self.personal_outbound.send(req).await)
    }
}
