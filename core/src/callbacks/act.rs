//! Acting as the person a page went to, through that delivery's acknowledge token
//! (`paging::tokens`): live (a day, not used), its person enabled and still on the incident's
//! team. Acknowledging and resolving use the token up; escalating does not (the person may
//! still acknowledge after passing it on). A summary's token acts on every open incident of it.

use crate::actor::{Actor, Via};
use crate::{Core, Error, Result};
use klaxon_domain::account::AccountKind;

/// What a key or a reply asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    Acknowledge,
    Resolve,
    Escalate,
}

/// A live token's person and incidents.
#[derive(sqlx::FromRow)]
struct Holder {
    id: i64,
    user_id: i64,
    username: String,
    incident_id: i64,
    bundle_id: Option<i64>,
}

impl Core {
    /// Does `act` as the token's person; the sentence says what came of it, for a call to say
    /// or a text to answer. Only a database failure is an error.
    pub(crate) async fn act_by_token(&self, token_hash: &str, act: Act) -> Result<String> {
        if act == Act::Acknowledge {
            return Ok(match self.acknowledge_with_hash(token_hash).await {
                Ok(done) if done.acknowledged.len() > 1 => {
                    format!("Acknowledged {} incidents.", done.acknowledged.len())
                }
                Ok(_) => "Acknowledged.".into(),
                Err(e) => spoken_error(e)?,
            });
        }
        let Some(holder) = self.holder(token_hash).await? else {
            return spoken_error(Error::NotFound);
        };
        let actor = Actor {
            user_id: holder.user_id,
            username: holder.username.clone(),
            is_admin: false,
            kind: AccountKind::Human,
            team_scope: None,
            via: Via::Delivery(holder.id),
            address: String::new(),
        };
        let incidents = self.held_incidents(&holder).await?;
        if act == Act::Resolve {
            let used =
                sqlx::query("UPDATE ack_tokens SET used_at = $1 WHERE id = $2 AND used_at IS NULL")
                    .bind(self.now())
                    .bind(holder.id)
                    .execute(&self.db.pool)
                    .await?;
            if used.rows_affected() == 0 {
                return spoken_error(Error::NotFound);
            }
        }
        let mut done = 0;
        let mut last = None;
        for id in &incidents {
            let result = match act {
                Act::Resolve => self.resolve(&actor, *id, None).await.map(drop),
                _ => self.escalate_now(&actor, *id).await.map(drop),
            };
            match result {
                Ok(()) => done += 1,
                Err(e @ Error::Conflict(_)) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Ok(match (act, done) {
            (_, 0) => spoken_error(last.unwrap_or(Error::NotFound))?,
            (Act::Resolve, 1) => "Resolved.".into(),
            (Act::Resolve, n) => format!("Resolved {n} incidents."),
            (_, _) => "The next level of the escalation ladder is paged now.".into(),
        })
    }

    async fn holder(&self, token_hash: &str) -> Result<Option<Holder>> {
        Ok(sqlx::query_as(
            "SELECT t.id, t.user_id, u.username, t.incident_id, t.bundle_id FROM ack_tokens t \
             JOIN users u ON u.id = t.user_id JOIN incidents i ON i.id = t.incident_id \
             WHERE t.token_hash = $1 AND t.used_at IS NULL AND t.expires_at > $2 AND u.disabled = 0 \
             AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = i.team_id AND m.user_id = t.user_id)",
        )
        .bind(token_hash)
        .bind(self.now())
        .fetch_optional(&self.db.pool)
        .await?)
    }

    /// The incident, or a summary's incidents still open on the person's teams.
    async fn held_incidents(&self, holder: &Holder) -> Result<Vec<i64>> {
        let Some(bundle) = holder.bundle_id else {
            return Ok(vec![holder.incident_id]);
        };
        let rows: Vec<(i64,)> = sqlx::query_as(
            "SELECT DISTINCT i.id FROM pages p JOIN incidents i ON i.id = p.incident_id \
             WHERE p.bundle_id = $1 AND i.state <> 'resolved' \
             AND i.team_id IN (SELECT team_id FROM team_members WHERE user_id = $2) ORDER BY i.id",
        )
        .bind(bundle)
        .bind(holder.user_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }
}

/// A refusal as a sentence to say or text back.
fn spoken_error(e: Error) -> Result<String> {
    match e {
        Error::Conflict(why) => {
            let mut s = why;
            if let Some(first) = s.get(0..1) {
                s.replace_range(0..1, &first.to_uppercase());
            }
            Ok(format!("{s}."))
        }
        Error::NotFound | Error::Forbidden(_) => {
            Ok("This page can no longer be acted on: it was used, or it lapsed.".into())
        }
        e => Err(e),
    }
}
