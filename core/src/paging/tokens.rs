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
    /// Unknown, expired and used tokens, and tokens of a since-disabled user, all answer 404.
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
        let (incident_id, user_id) = used.ok_or(Error::NotFound)?;
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
}
