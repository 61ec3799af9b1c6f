//! Posting one rendered message to a channel, through the outbound policy, and reading the
//! answer into an outcome: sent, or failed with a sentence that names the channel by its kind
//! and origin (never its URL, a secret, nor anything the other side wrote) and the wait a
//! rate limit asked for.

use super::message::Message;
use crate::outbound::Answer;
use crate::{Core, Error, Result};
use hmac::{Hmac, Mac};
use klaxon_domain::channel::{shown_target, ChannelKind};
use reqwest::Method;
use sha2::Sha256;

/// What a message is posted with: the channel's kind, target and secret, and its team.
pub(super) struct Target {
    pub id: i64,
    pub kind: ChannelKind,
    pub target: String,
    pub secret: Option<String>,
    pub team_id: i64,
    pub team: String,
}

pub(super) enum Outcome {
    Sent,
    Failed {
        sentence: String,
        /// Seconds the service asked to wait (a 429's `Retry-After`, Matrix's `retry_after_ms`).
        retry_after: Option<i64>,
    },
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

/// `Klaxon-Signature` for `body` sent at `t`: `t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
pub(crate) fn signature(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

impl Core {
    /// The channel's target as the announcer posts to it.
    pub(super) async fn channel_target_of(&self, id: i64) -> Result<Target> {
        let row: (i64, String, String, Option<String>, i64, String) = sqlx::query_as(
            "SELECT c.id, c.kind, c.target, c.signing_secret, c.team_id, t.name FROM channels c \
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
                Some(bot) => bot.post(&to.target, message, delivery).await,
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
                .header("klaxon-signature", signature(secret, self.now(), &body))
                .header("klaxon-event", message.event_word())
                .header("klaxon-delivery", delivery);
        }
        let answer = self.outbound.send(req.body(body)).await;
        outcome(&to.described(), answer)
    }
}

/// An HTTP answer (or its failure) as an outcome; any 2xx is sent.
pub(super) fn outcome(
    who: &str,
    answer: std::result::Result<Answer, crate::outbound::Failure>,
) -> Outcome {
    match answer {
        Err(f) if f.kind == crate::outbound::FailureKind::Policy => Outcome::Failed {
            sentence: format!("{who} was not called: {}", f.sentence),
            retry_after: None,
        },
        Err(f) => Outcome::Failed {
            sentence: format!("{who} {}", f.sentence),
            retry_after: None,
        },
        Ok(a) if a.status.is_success() => Outcome::Sent,
        Ok(a) => Outcome::Failed {
            sentence: format!(
                "{who} answered {} {}",
                a.status.as_u16(),
                a.status.canonical_reason().unwrap_or("")
            )
            .trim_end()
            .to_string(),
            retry_after: retry_after(&a),
        },
    }
}

/// The wait an answer asks for: `Retry-After` in seconds, else Matrix's `retry_after_ms`
/// (rounded up), at most a day.
pub(super) fn retry_after(a: &Answer) -> Option<i64> {
    let header = a
        .headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    let matrix = a
        .json::<serde_json::Value>()
        .and_then(|v| v.get("retry_after_ms").and_then(|ms| ms.as_i64()))
        .map(|ms| (ms + 999) / 1000);
    header
        .or(matrix)
        .map(|s| s.clamp(1, klaxon_domain::paging::GIVE_UP_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_time_dot_body() {
        // RFC 4231 test case 2 ("Jefe"), with the message split as "<t>." + body.
        assert_eq!(
            signature("Jefe", 0, b"what do ya want for nothing?"),
            "t=0,v1=".to_string()
                + &{
                    let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
                    mac.update(b"0.what do ya want for nothing?");
                    hex::encode(mac.finalize().into_bytes())
                }
        );
        let s = signature("secret", 1_795_305_600, b"{}");
        assert!(s.starts_with("t=1795305600,v1="));
        assert_eq!(s.len(), "t=1795305600,v1=".len() + 64);
    }

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
