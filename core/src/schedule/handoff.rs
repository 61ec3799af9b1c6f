//! Hand-off notices: at the team's chosen time (UTC) the person on call tomorrow is told, and
//! once a day has ended its outgoing person is. Only when the holder changes. Each notice is a
//! `handoff` row of the pages outbox (no incident, no Acknowledge), queued by the sweeper in the
//! same transaction as the team's per-day marker, so a day's notice is queued once whichever
//! replica sweeps and however often.

use crate::paging::{oncall_today, reach_user};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::handoff::{format_minute, parse_minute, HandoffSettings, DEFAULT_AT_MINUTE};
use klaxon_domain::incident::utc_date;

#[derive(Clone, Copy)]
enum Notice {
    /// To tomorrow's holder, at the team's time.
    Tomorrow,
    /// To yesterday's holder, once today has begun.
    Ended,
}

impl Notice {
    fn marker(self) -> &'static str {
        match self {
            Notice::Tomorrow => "notified_on",
            Notice::Ended => "ended_on",
        }
    }
}

/// "Wednesday 25 November" of a Unix time.
fn day_words(unix: i64) -> String {
    let format =
        time::macros::format_description!("[weekday] [day padding:none] [month repr:long]");
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_else(|| utc_date(unix))
}

impl Core {
    pub async fn handoff_settings(&self, actor: &Actor, team_id: i64) -> Result<HandoffSettings> {
        self.team_access(actor, team_id).await?;
        let row: Option<(i64, i64)> =
            sqlx::query_as("SELECT enabled, at_minute FROM handoffs WHERE team_id = $1")
                .bind(team_id)
                .fetch_optional(&self.db.pool)
                .await?;
        let (enabled, minute) = row.unwrap_or((0, DEFAULT_AT_MINUTE));
        Ok(HandoffSettings {
            enabled: enabled == 1,
            at: format_minute(minute),
        })
    }

    /// Team owners. Turning notices on does not reach back: a notice whose moment has passed
    /// today waits for tomorrow.
    pub async fn set_handoff(
        &self,
        actor: &Actor,
        team_id: i64,
        settings: HandoffSettings,
    ) -> Result<HandoffSettings> {
        self.require_team_owner(actor, team_id).await?;
        let minute = parse_minute(&settings.at).map_err(Error::Invalid)?;
        let now = self.now();
        let today = utc_date(now);
        let mut tx = self.db.begin().await?;
        let was: Option<(i64,)> = sqlx::query_as("SELECT enabled FROM handoffs WHERE team_id = $1")
            .bind(team_id)
            .fetch_optional(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO handoffs (team_id, enabled, at_minute) VALUES ($1, $2, $3) \
             ON CONFLICT (team_id) DO UPDATE SET enabled = $2, at_minute = $3",
        )
        .bind(team_id)
        .bind(i64::from(settings.enabled))
        .bind(minute)
        .execute(&mut *tx)
        .await?;
        if settings.enabled && was.is_none_or(|(e,)| e == 0) {
            let past = now.rem_euclid(86_400) / 60 >= minute;
            sqlx::query("UPDATE handoffs SET notified_on = $1, ended_on = $2 WHERE team_id = $3")
                .bind(past.then(|| today.clone()))
                .bind(&today)
                .bind(team_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(HandoffSettings {
            enabled: settings.enabled,
            at: format_minute(minute),
        })
    }

    /// Queues the notices that are due; the sweeper calls it. Returns how many it queued.
    pub(crate) async fn queue_handoffs(&self) -> Result<u64> {
        let now = self.now();
        let today = utc_date(now);
        let minute = now.rem_euclid(86_400) / 60;
        let due: Vec<(i64, i64, Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT team_id, at_minute, notified_on, ended_on FROM handoffs WHERE enabled = 1 \
             AND (notified_on IS NULL OR notified_on < $1 OR ended_on IS NULL OR ended_on < $1)",
        )
        .bind(&today)
        .fetch_all(&self.db.pool)
        .await?;
        let before_today = |d: &Option<String>| d.as_deref().is_none_or(|d| d < today.as_str());
        let mut queued = 0;
        for (team_id, at, notified_on, ended_on) in due {
            if before_today(&ended_on) {
                queued += u64::from(self.queue_handoff(team_id, Notice::Ended, now).await?);
            }
            if before_today(&notified_on) && minute >= at {
                queued += u64::from(self.queue_handoff(team_id, Notice::Tomorrow, now).await?);
            }
        }
        if queued > 0 {
            self.wake_notifier();
        }
        Ok(queued)
    }

    /// Claims today's marker of one notice and, when the holder changes, queues the notice.
    async fn queue_handoff(&self, team_id: i64, notice: Notice, now: i64) -> Result<bool> {
        let today = utc_date(now);
        let mut tx = self.db.begin().await?;
        let marker = notice.marker();
        let claimed = sqlx::query(&format!(
            "UPDATE handoffs SET {marker} = $1 WHERE team_id = $2 AND enabled = 1 \
             AND ({marker} IS NULL OR {marker} < $1)"
        ))
        .bind(&today)
        .bind(team_id)
        .execute(&mut *tx)
        .await?;
        if claimed.rows_affected() == 0 {
            tx.commit().await?;
            return Ok(false);
        }
        let (team,): (String,) = sqlx::query_as("SELECT display_name FROM teams WHERE id = $1")
            .bind(team_id)
            .fetch_one(&mut *tx)
            .await?;
        let holder_today = oncall_today(&mut tx, team_id, now).await?;
        let (to, text) = match notice {
            Notice::Tomorrow => {
                let next = oncall_today(&mut tx, team_id, now + 86_400).await?;
                let text = format!(
                    "You are on call tomorrow ({}) for {team}.",
                    day_words(now + 86_400)
                );
                (next, text)
            }
            Notice::Ended => {
                let out = oncall_today(&mut tx, team_id, now - 86_400).await?;
                let next = match holder_today {
                    Some(id) => {
                        sqlx::query_as::<_, (String,)>("SELECT username FROM users WHERE id = $1")
                            .bind(id)
                            .fetch_optional(&mut *tx)
                            .await?
                            .map(|r| format!("{} is on call now.", r.0))
                    }
                    None => None,
                }
                .unwrap_or_else(|| "Nobody is on call today.".into());
                (
                    out,
                    format!("Your on-call day for {team} has ended. {next}"),
                )
            }
        };
        let Some(to) = to.filter(|to| Some(*to) != holder_today) else {
            tx.commit().await?;
            return Ok(false);
        };
        let queued = match reach_user(&mut tx, team_id, to).await? {
            Ok(reached) => {
                sqlx::query(
                    "INSERT INTO pages (incident_id, team_id, kind, topic, user_id, detail, due_at, created_at) \
                     VALUES (NULL, $1, 'handoff', $2, $3, $4, $5, $5)",
                )
                .bind(team_id)
                .bind(&reached.topic)
                .bind(reached.user_id)
                .bind(&text)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                true
            }
            Err(why) => {
                tracing::info!(team_id, %why, "hand-off notice not queued");
                false
            }
        };
        tx.commit().await?;
        Ok(queued)
    }
}
