//! A page's call, answered: what it says is read from the delivery's token at that moment (so a
//! call answered after someone else acknowledged says so), then the menu; each key acts as the
//! person through the same token (`act`).

use super::act::Act;
use crate::roads::phone::twilio as twiml;
use crate::roads::phone::words::{
    spoken_incident, spoken_menu, spoken_summary, ACKNOWLEDGE, ESCALATE, REPEAT, RESOLVE,
};
use crate::{Core, Result};
use klaxon_domain::alerting::Severity;

#[derive(sqlx::FromRow)]
struct Spoken {
    username: String,
    title: String,
    severity: String,
    state: String,
    team: String,
    bundle_id: Option<i64>,
    /// 1 when the token was used (an acknowledgement, a resolve).
    used: i64,
    owner: Option<String>,
}

impl Core {
    /// The TwiML for a page's call: the menu when `key` is `None` (answered) or `1`, else what
    /// the key did. `action` is the URL the keys are posted to.
    pub(super) async fn call_answer(
        &self,
        token_hash: &str,
        key: Option<char>,
        action: &str,
    ) -> Result<String> {
        let act = match key {
            Some(k) if k == ACKNOWLEDGE => Some(Act::Acknowledge),
            Some(k) if k == RESOLVE => Some(Act::Resolve),
            Some(k) if k == ESCALATE => Some(Act::Escalate),
            _ => None,
        };
        if let Some(act) = act {
            let said = self.act_by_token(token_hash, act).await?;
            return Ok(twiml::say(&format!("{said} Goodbye.")));
        }
        let Some(s) = self.spoken(token_hash).await? else {
            return Ok(twiml::say(
                "This page can no longer be acted on: it lapsed. Goodbye.",
            ));
        };
        let severity = Severity::parse(&s.severity).unwrap_or(Severity::Warning);
        let said = match s.bundle_id {
            Some(bundle) => spoken_summary(self.open_in(bundle).await?, &s.team, &s.username),
            None => spoken_incident(severity, &s.team, &s.title, &s.username),
        };
        if s.used != 0 || (s.bundle_id.is_none() && s.state != "triggered") {
            let now = match (s.state.as_str(), &s.owner) {
                ("resolved", _) => "It is resolved already.".to_string(),
                (_, Some(by)) => format!("It was acknowledged already, by {by}."),
                _ => "It was acknowledged already.".to_string(),
            };
            return Ok(twiml::say(&format!("{said} {now} Goodbye.")));
        }
        let mut keys = spoken_menu(s.bundle_id.is_some());
        if key.is_some_and(|k| k != REPEAT) {
            keys = format!("That key does nothing. {keys}");
        }
        Ok(twiml::menu(&said, &keys, action))
    }

    async fn spoken(&self, token_hash: &str) -> Result<Option<Spoken>> {
        Ok(sqlx::query_as(
            "SELECT u.username, i.title, i.severity, i.state, tm.name AS team, t.bundle_id, \
             CASE WHEN t.used_at IS NULL THEN 0 ELSE 1 END AS used, \
             (SELECT username FROM users WHERE id = i.acknowledged_by) AS owner \
             FROM ack_tokens t JOIN users u ON u.id = t.user_id JOIN incidents i ON i.id = t.incident_id \
             JOIN teams tm ON tm.id = i.team_id WHERE t.token_hash = $1 AND t.expires_at > $2 \
             AND u.disabled = 0",
        )
        .bind(token_hash)
        .bind(self.now())
        .fetch_optional(&self.db.pool)
        .await?)
    }

    async fn open_in(&self, bundle: i64) -> Result<i64> {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT COUNT(DISTINCT i.id) FROM pages p JOIN incidents i ON i.id = p.incident_id \
             WHERE p.bundle_id = $1 AND i.state = 'triggered'",
        )
        .bind(bundle)
        .fetch_one(&self.db.pool)
        .await?;
        Ok(n)
    }
}
