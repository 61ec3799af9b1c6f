//! Posting one rendered message to a channel, through the outbound policy, and reading the
//! answer into an outcome: sent, or failed with a sentence that names the channel by its kind
//! and origin (never its URL, a secret, nor anything the other side wrote) and the wait a
//! rate limit asked for.

use super::message::Message;
use crate::outbound::{outcome, Outcome};
use crate::secrets::webhook_signature;
use crate::{Core, Error, Result};
use klaxon_domain::channel::{shown_target, ChannelKind};
use reqwest::Method;

/// What a message is posted with: the channel's kind, target and secret, and its team.
pub(super) struct Target {
    pub id: i64,
    pub kind: ChannelKind,
    pub target: String,
    pub secret: Option<String>,
    pub team_id: i64,
    pub team: String,
}

impl Target {
    /// The channel in an error sentence: "the Slack webhook at https://hooks.slack.com".
    pub fn described(&self) -> String {
        let what = match self.kind {
            ChannelKind::Matrix => "the Matrix room",
            ChannelKind::Slack => "the Slack-format webhook at",
            ChannelKind::Teams => "the Teams webhook at",
            ChannelKind::Webhook => "the webhook at",
        };
        format!("{what} {}", shown_target(self.kind, &self.target))
    }
}

impl Core {
    /// The channel's target as the announcer posts to it.
    pub(super) async fn channel_target_of(&self, id: i64) -> Result<Target> {
        // A Matrix channel posts to the room it was proven in, never to what an alias names now;
        // an unproven one to no room at all.
        let row: (i64, String, String, Option<String>, i64, String) = sqlx::query_as(
            "SELECT c.id, c.kind, CASE WHEN c.kind = 'matrix' THEN COALESCE(c.room_id, '') \
             ELSE c.target END, c.signing_secret, c.team_id, t.name FROM channels c \
             JOIN teams t ON t.id = c.team_id WHERE c.id = $1",
        )
        .bind(id)
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::NotFound)?;
        Ok(Target {
            id: row.0,
            kind: ChannelKind::try_from(row.1)?,
            target: row.2,
            secret: row.3,
            team_id: row.4,
            team: row.5,
        })
    }

    /// Posts one message. `delivery` is the same on every retry of it: the Matrix transaction
    /// id (the homeserver keeps one event per id, so a retry after a lost answer posts once)
    /// and the webhook's `Klaxon-Delivery`.
    pub(super) async fn post_to(&self, to: &Target, message: &Message, delivery: &str) -> Outcome {
        if to.kind == ChannelKind::Matrix {
            return match &self.matrix {
                Some(_) if to.target.is_empty() => Outcome::Failed {
                    sentence: "the Matrix room is not proven".into(),
                    retry_after: None,
                },
                Some(bot) => {
                    bot.post(&to.target, &message.plain(), &message.html(), delivery)
                        .await
                }
                None => Outcome::Failed {
                    sentence: "no Matrix homeserver is configured (KLAXON_MATRIX_HOMESERVER)"
                        .into(),
                    retry_after: None,
                },
            };
        }
        let body = match to.kind {
            ChannelKind::Slack => message.slack(),
            ChannelKind::Teams => message.teams(),
            _ => message.webhook(),
        };
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let mut req = self
            .outbound
            .request(Method::POST, &to.target)
            .header("content-type", "application/json");
        if to.kind == ChannelKind::Webhook {
            let secret = to.secret.as_deref().unwrap_or_default();
            req = req
                .header(
                    "klaxon-signature",
                    webhook_signature(secret, self.now(), &body),
                )
                .header("klaxon-event", message.event_word())
                .header("klaxon-delivery", delivery);
        }
        let answer = self.outbound.send(req.body(body)).await;
        outcome(&to.described(), answer)
    }
}

#[cfg(test)]
mod tests {
    use crate::outbound::{outcome, retry_after, Answer, Outcome};

    fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut map = reqwest::header::HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        Answer {
            status: reqwest::StatusCode::from_u16(status).unwrap(),
            headers: map,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn failures_name_the_channel_and_keep_the_answer_out() {
        let Outcome::Failed {
            sentence,
            retry_after: wait,
        } = outcome(
            "the Slack-format webhook at https://hooks.slack.com",
            Ok(answer(
                429,
                &[("retry-after", "30")],
                "rate_limited: token xoxb-secret",
            )),
        )
        else {
            panic!("a 429 is a failure")
        };
        assert_eq!(
            sentence,
            "the Slack-format webhook at https://hooks.slack.com answered 429 Too Many Requests"
        );
        assert_eq!(wait, Some(30));
        let matrix = answer(
            429,
            &[],
            r#"{"errcode":"M_LIMIT_EXCEEDED","error":"Too Many Requests","retry_after_ms":1500}"#,
        );
        assert_eq!(retry_after(&matrix), Some(2));
        assert!(matches!(
            outcome("x", Ok(answer(202, &[], ""))),
            Outcome::Sent
        ));
    }
}
