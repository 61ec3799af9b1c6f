//! Push acknowledge tokens: minted per delivery (by the notifier, in the batch that sends it) for one incident and one user, valid one day,
//! single use, stored only as a hash. Never an API key, because a notification body is kept
//! by the push service, outside Klaxon.

use crate::secrets::{hash_token, looks_like_token};
use crate::{Core, Error, Result};
use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::ids::{IncidentId, UserId};
use klaxon_domain::paging::AckOutcome;

pub const TOKEN_TTL: i64 = 86_400;

/// What a token would acknowledge (`Core::preview_ack_token`).
pub struct AckPreview {
    pub incident_id: i64,
    pub title: String,
    pub severity: Severity,
    /// How many incidents it covers: more than one for a summary's Acknowledge all.
    pub incidents: i64,
}

impl Core {
    /// `POST /api/notify/ack/{token}`: acknowledges as the user the token was minted for; a
    /// summary push's token acknowledges every still-unacknowledged incident of its bundle.
    /// A second tap on the same button says who acknowledged (409); unknown and expired tokens,
    /// and tokens of a since-disabled user or of one who has left the incident's team, answer
    /// 404: a token lapses with its person's membership, as a calendar link does.
    pub async fn acknowledge_with_token(&self, token: &str) -> Result<AckOutcome> {
        if !looks_like_token(token) {
            return Err(Error::NotFound);
        }
        self.acknowledge_with_hash(&hash_token(token)).await
    }

    /// The same, by the token's hash: a text's reply code names the token it stands for so
    /// (`callbacks::texts`).
    pub(crate) async fn acknowledge_with_hash(&self, token_hash: &str) -> Result<AckOutcome> {
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let used: Option<(i64, i64, Option<i64>)> = sqlx::query_as(
            "UPDATE ack_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1 \
             AND user_id IN (SELECT id FROM users WHERE disabled = 0) \
             AND EXISTS (SELECT 1 FROM incidents i JOIN team_members m ON m.team_id = i.team_id \
               WHERE i.id = ack_tokens.incident_id AND m.user_id = ack_tokens.user_id) \
             RETURNING incident_id, user_id, bundle_id",
        )
        .bind(now)
        .bind(token_hash)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((incident_id, user_id, bundle_id)) = used else {
            drop(tx);
            return Err(self.already_acknowledged(token_hash, now).await?);
        };
        let Some(bundle_id) = bundle_id else {
            self.acknowledge_in(&mut tx, IncidentId(incident_id), UserId(user_id))
                .await?;
            tx.commit().await?;
            let incident = self.incident_row(incident_id).await?;
            debug_assert!(incident.state != IncidentState::Triggered);
            return Ok(AckOutcome {
                incident_id,
                state: incident.state,
                acknowledged: vec![incident_id],
            });
        };
        // Acknowledge all: every incident of the summary that nobody owns yet, as one change.
        let triggered: Vec<(i64,)> = sqlx::query_as(
            "SELECT DISTINCT i.id FROM pages p JOIN incidents i ON i.id = p.incident_id \
             WHERE p.bundle_id = $1 AND i.state = 'triggered' \
             AND i.team_id IN (SELECT team_id FROM team_members WHERE user_id = $2) ORDER BY i.id",
        )
        .bind(bundle_id)
        .bind(user_id)
        .fetch_all(&mut *tx)
        .await?;
        if triggered.is_empty() {
            return Err(Error::Conflict(
                "every incident of this page was already acknowledged or resolved".into(),
            ));
        }
        for (id,) in &triggered {
            self.acknowledge_in(&mut tx, IncidentId(*id), UserId(user_id))
                .await?;
        }
        tx.commit().await?;
        Ok(AckOutcome {
            incident_id: triggered[0].0,
            state: IncidentState::Acknowledged,
            acknowledged: triggered.into_iter().map(|r| r.0).collect(),
        })
    }

    /// What a live token would acknowledge, without using it: the confirmation page an email's
    /// link opens shows this (a mail scanner following the link must acknowledge nothing).
    /// Used, unknown and expired tokens answer as `acknowledge_with_token` would.
    pub async fn preview_ack_token(&self, token: &str) -> Result<AckPreview> {
        if !looks_like_token(token) {
            return Err(Error::NotFound);
        }
        let now = self.now();
        let row: Option<(i64, String, String, Option<i64>)> = sqlx::query_as(
            "SELECT t.incident_id, i.title, i.severity, t.bundle_id FROM ack_tokens t JOIN incidents i ON i.id = t.incident_id \
             WHERE t.token_hash = $1 AND t.used_at IS NULL AND t.expires_at > $2 \
             AND t.user_id IN (SELECT id FROM users WHERE disabled = 0) \
             AND t.user_id IN (SELECT user_id FROM team_members WHERE team_id = i.team_id)",
        )
        .bind(hash_token(token))
        .bind(now)
        .fetch_optional(&self.db.pool)
        .await?;
        let Some((incident_id, title, severity, bundle_id)) = row else {
            return Err(self.already_acknowledged(&hash_token(token), now).await?);
        };
        let incidents = match bundle_id {
            None => 1,
            Some(bundle) => {
                sqlx::query_as::<_, (i64,)>(
                    "SELECT COUNT(DISTINCT incident_id) FROM pages WHERE bundle_id = $1",
                )
                .bind(bundle)
                .fetch_one(&self.db.pool)
                .await?
                .0
            }
        };
        Ok(AckPreview {
            incident_id,
            title,
            severity: Severity::parse(&severity).unwrap_or(Severity::Warning),
            incidents,
        })
    }

    /// Why a token that acknowledged nothing did not: used already (a sentence naming who
    /// acknowledged), or not a live token at all.
    async fn already_acknowledged(&self, token_hash: &str, now: i64) -> Result<Error> {
        let used: Option<(String, Option<String>)> = sqlx::query_as(
            "SELECT i.state, (SELECT username FROM users WHERE id = i.acknowledged_by) \
             FROM ack_tokens t JOIN incidents i ON i.id = t.incident_id \
             WHERE t.token_hash = $1 AND t.used_at IS NOT NULL AND t.expires_at > $2 \
             AND t.user_id IN (SELECT id FROM users WHERE disabled = 0) \
             AND t.user_id IN (SELECT user_id FROM team_members WHERE team_id = i.team_id)",
        )
        .bind(token_hash)
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
