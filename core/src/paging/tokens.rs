//! Push acknowledge tokens: minted per delivery (by the notifier, in the batch that sends it) for one incident and one user, valid one day,
//! single use, stored only as a hash. Never an API key, because a notification body is kept
//! by the push service, outside Klaxon.

use crate::secrets::{hash_token, looks_like_token};
use crate::{Core, Error, Result};
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::ids::{IncidentId, UserId};
use klaxon_domain::paging::AckOutcome;

pub const TOKEN_TTL: i64 = 86_400;

impl Core {
    /// `POST /api/notify/ack/{token}`: acknowledges as the user the token was minted for.
    /// A second tap on the same button says who acknowledged (409); unknown and expired tokens,
    /// and tokens of a since-disabled user, answer 404.
    pub async fn acknowledge_with_token(&self, token: &str) -> Result<AckOutcome> {
        if !looks_like_token(token) {
            return Err(Error::NotFound);
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let used: Option<(i64, i64)> = sqlx::query_as(
            "UPDATE ack_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1 \
             AND user_id IN (SELECT id FROM users WHERE disabled = 0) RETURNING incident_id, user_id",
        )
        .bind(now)
        .bind(hash_token(token))
        .fetch_optional(&mut *tx)
        .await?;
        let Some((incident_id, user_id)) = used else {
            drop(tx);
            return Err(self.already_acknowledged(token, now).await?);
        };
        self.acknowledge_in(&mut tx, IncidentId(incident_id), UserId(user_id))
            .await?;
        tx.commit().await?;
        let incident = self.incident_row(incident_id).await?;
        debug_assert!(incident.state != IncidentState::Triggered);
        Ok(AckOutcome {
            incident_id,
            state: incident.state,
        })
    }

    /// Why a token that acknowledged nothing did not: used already (a sentence naming who
    /// acknowledged), or not a live token at all.
    async fn already_acknowledged(&self, token: &str, now: i64) -> Result<Error> {
        let used: Option<(String, Option<String>)> = sqlx::query_as(
            "SELECT i.state, (SELECT username FROM users WHERE id = i.acknowledged_by) \
             FROM ack_tokens t JOIN incidents i ON i.id = t.incident_id \
             WHERE t.token_hash = $1 AND t.used_at IS NOT NULL AND t.expires_at > $2 \
             AND t.user_id IN (SELECT id FROM users WHERE disabled = 0)",
        )
        .bind(hash_token(token))
        .bind(now)
        .fetch_optional(&self.db.pool)
        .await?;
        Ok(match used {
            None => Error::NotFound,
            Some((state, by)) => Error::Conflict(match IncidentState::try_from(state)? {
                IncidentState::Resolved => "this incident is already resolved".to_string(),
                _ => match by {
                    Some(name) => format!("this incident was already acknowledged by {name}"),
                    None => "this incident was already acknowledged".to_string(),
                },
            }),
        })
    }
}
