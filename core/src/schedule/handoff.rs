//! Hand-off notices (`domain::handoff`): at each hand-off of a team's on-call day the incoming
//! person is told, and the outgoing one; a cover's start and end tell both its people. Each
//! notice is a `handoff` row of the pages outbox (no incident, no Acknowledge), queued by the
//! sweeper in the same transaction that moves the team's marker (the last date announced) or
//! the cover's, so a notice is queued once whichever replica sweeps and however often.

use crate::db::Tx;
use crate::oncall::{holder_at, RuleRow, RULE_COLUMNS};
use crate::paging::reach_user;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::contact::Destination;
use klaxon_domain::handoff::{HandoffSettings, LATE_NOTICE_SECONDS};
use klaxon_domain::oncall_day::TeamDays;

impl Core {
    pub async fn handoff_settings(&self, actor: &Actor, team_id: i64) -> Result<HandoffSettings> {
        self.team_access(actor, team_id).await?;
        self.read_handoff(team_id).await
    }

    async fn read_handoff(&self, team_id: i64) -> Result<HandoffSettings> {
        let row: (Option<i64>, String, String) = sqlx::query_as(
            "SELECT h.enabled, t.handoff_time, t.time_zone FROM teams t \
             LEFT JOIN handoffs h ON h.team_id = t.id WHERE t.id = $1",
        )
        .bind(team_id)
        .fetch_one(&self.db.pool)
        .await?;
        Ok(HandoffSettings {
            enabled: row.0 == Some(1),
            at: klaxon_domain::text::ClockTime::parse(&row.1).ok(),
            time_zone: Some(row.2),
        })
    }

    /// Team owners. Turning notices on does not reach back: the first is at the next hand-off.
    pub async fn set_handoff(
        &self,
        actor: &Actor,
        team_id: i64,
        settings: HandoffSettings,
    ) -> Result<HandoffSettings> {
        self.require_team_owner(actor, team_id).await?;
        let current = self.read_handoff(team_id).await?;
        if let Some(at) = settings
            .at
            .as_ref()
            .filter(|at| Some(*at) != current.at.as_ref())
        {
            return Err(Error::Invalid(format!(
                "at: notices go at the team's hand-off time, {} ({}), not {}; change it with PUT /api/teams/{team_id}/on-call-day",
                current.at.as_ref().map(|a| a.as_str()).unwrap_or("00:00"),
                current.time_zone.as_deref().unwrap_or("UTC"),
                at.as_str()
            )));
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let today = crate::oncall::today(&mut tx, team_id, now).await?;
        let was: Option<(i64,)> = sqlx::query_as("SELECT enabled FROM handoffs WHERE team_id = $1")
            .bind(team_id)
            .fetch_optional(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO handoffs (team_id, enabled, at_minute) VALUES ($1, $2, 0) \
             ON CONFLICT (team_id) DO UPDATE SET enabled = $2",
        )
        .bind(team_id)
        .bind(i64::from(settings.enabled))
        .execute(&mut *tx)
        .await?;
        if settings.enabled && was.is_none_or(|(e,)| e == 0) {
            // Today's hand-off has passed: the first notice is the next one. Covers already
            // under way are not announced late either.
            sqlx::query("UPDATE handoffs SET notified_on = $1 WHERE team_id = $2")
                .bind(&today)
                .bind(team_id)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "UPDATE covers SET noticed = CASE WHEN ends_at <= $1 THEN 2 ELSE 1 END \
                 WHERE team_id = $2 AND starts_at <= $1 AND noticed < 2",
            )
            .bind(now)
            .bind(team_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        self.read_handoff(team_id).await
    }

    /// Queues the notices that are due; the sweeper calls it. Returns how many it queued.
    pub(crate) async fn queue_handoffs(&self) -> Result<u64> {
        let now = self.now();
        #[derive(sqlx::FromRow)]
        struct Due {
            team_id: i64,
            notified_on: Option<String>,
            #[sqlx(flatten)]
            rule: RuleRow,
        }
        let teams: Vec<Due> = sqlx::query_as(&format!(
            "SELECT h.team_id, h.notified_on, {RULE_COLUMNS} FROM handoffs h \
             JOIN teams t ON t.id = h.team_id WHERE h.enabled = 1"
        ))
        .fetch_all(&self.db.pool)
        .await?;
        let mut queued = 0;
        for team in teams {
            let days = team.rule.days();
            let today = days.day_of(now).to_string();
            if team
                .notified_on
                .as_deref()
                .is_none_or(|d| d < today.as_str())
            {
                queued += self.queue_day_notices(team.team_id, &days, now).await?;
            }
        }
        let covers: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT c.id, c.team_id FROM covers c JOIN handoffs h ON h.team_id = c.team_id \
             WHERE h.enabled = 1 AND ((c.noticed = 0 AND c.starts_at <= $1) OR (c.noticed < 2 AND c.ends_at <= $1))",
        )
        .bind(now)
        .fetch_all(&self.db.pool)
        .await?;
        for (cover_id, team_id) in covers {
            queued += self.queue_cover_notices(cover_id, team_id, now).await?;
        }
        if queued > 0 {
            self.wake_notifier();
        }
        Ok(queued)
    }

    /// Claims the team's marker for the day in progress and, when its holder differs from the
    /// day before's, tells both.
    async fn queue_day_notices(&self, team_id: i64, days: &TeamDays, now: i64) -> Result<u64> {
        let today = days.day_of(now);
        let mut tx = self.db.begin().await?;
        let claimed = sqlx::query(
            "UPDATE handoffs SET notified_on = $1 WHERE team_id = $2 AND enabled = 1 \
             AND (notified_on IS NULL OR notified_on < $1)",
        )
        .bind(today.to_string())
        .bind(team_id)
        .execute(&mut *tx)
        .await?;
        let (start, end) = days.day_bounds(today);
        if claimed.rows_affected() == 0 || now - start > LATE_NOTICE_SECONDS {
            tx.commit().await?;
            return Ok(0);
        }
        let holder = |date: jiff::civil::Date| {
            sqlx::query_as::<_, (i64, String)>(
                "SELECT s.user_id, u.username FROM schedule s JOIN users u ON u.id = s.user_id \
                 WHERE s.team_id = $1 AND s.date = $2",
            )
            .bind(team_id)
            .bind(date.to_string())
        };
        let incoming = holder(today).fetch_optional(&mut *tx).await?;
        // The day before with hours of its own (a change of rule can leave one without).
        let mut before = today.yesterday().unwrap_or(today);
        if days.day_bounds(before).0 == start {
            before = before.yesterday().unwrap_or(before);
        }
        let outgoing = holder(before).fetch_optional(&mut *tx).await?;
        let mut queued = 0;
        if incoming.as_ref().map(|h| h.0) != outgoing.as_ref().map(|h| h.0) {
            let team = team_name(&mut tx, team_id).await?;
            let rule = days.rule();
            let until = format!("{} ({})", rule.local_words(end), rule.zone_name());
            if let Some((id, _)) = &incoming {
                let text = format!("You are on call for {team} now, until {until}.");
                queued += queue_notice(&mut tx, team_id, *id, &text, now).await?;
            }
            if let Some((id, _)) = &outgoing {
                let next = match &incoming {
                    Some((_, name)) => format!("{name} is on call now, until {until}."),
                    None => "Nobody is on call now.".into(),
                };
                let text = format!("Your on-call day for {team} has ended. {next}");
                queued += queue_notice(&mut tx, team_id, *id, &text, now).await?;
            }
        }
        tx.commit().await?;
        Ok(queued)
    }

    /// Moves a cover's marker past its start or its end and tells its two people.
    async fn queue_cover_notices(&self, cover_id: i64, team_id: i64, now: i64) -> Result<u64> {
        let mut tx = self.db.begin().await?;
        let row: Option<(i64, Option<i64>, i64, i64, i64)> = sqlx::query_as(
            "SELECT user_id, covered_id, starts_at, ends_at, noticed FROM covers WHERE id = $1",
        )
        .bind(cover_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((user_id, covered_id, starts_at, ends_at, noticed)) = row else {
            tx.commit().await?;
            return Ok(0);
        };
        let ended = ends_at <= now;
        let claimed = sqlx::query("UPDATE covers SET noticed = $1 WHERE id = $2 AND noticed = $3")
            .bind(if ended { 2i64 } else { 1 })
            .bind(cover_id)
            .bind(noticed)
            .execute(&mut *tx)
            .await?;
        let moment = if ended { ends_at } else { starts_at };
        if claimed.rows_affected() == 0 || now - moment > LATE_NOTICE_SECONDS {
            tx.commit().await?;
            return Ok(0);
        }
        let team = team_name(&mut tx, team_id).await?;
        let days = crate::oncall::team_days(&mut tx, team_id).await?;
        let rule = days.rule();
        let until = format!("{} ({})", rule.local_words(ends_at), rule.zone_name());
        let name = |id: i64| {
            sqlx::query_as::<_, (String,)>("SELECT username FROM users WHERE id = $1").bind(id)
        };
        let (coverer,) = name(user_id).fetch_one(&mut *tx).await?;
        let mut queued = 0;
        if ended {
            let back = holder_at(&mut tx, team_id, now).await?;
            let back_name = match &back {
                Some(h) => Some(name(h.user_id).fetch_one(&mut *tx).await?.0),
                None => None,
            };
            let who = back_name.map_or("Nobody".to_string(), |n| n);
            let text = format!("Your cover of the {team} pager has ended. {who} has it now.");
            queued += queue_notice(&mut tx, team_id, user_id, &text, now).await?;
            if let Some(covered) = covered_id.filter(|c| *c != user_id) {
                let text = if back.as_ref().is_some_and(|h| h.user_id == covered) {
                    format!("{coverer}'s cover has ended: you have the {team} pager again.")
                } else {
                    format!("{coverer}'s cover of the {team} pager has ended. {who} has it now.")
                };
                queued += queue_notice(&mut tx, team_id, covered, &text, now).await?;
            }
        } else {
            let covered_name = match covered_id {
                Some(id) => Some(name(id).fetch_one(&mut *tx).await?.0),
                None => None,
            };
            let text = match &covered_name {
                Some(n) => {
                    format!("You have the {team} pager now, covering for {n}, until {until}.")
                }
                None => format!("You have the {team} pager now, until {until}."),
            };
            queued += queue_notice(&mut tx, team_id, user_id, &text, now).await?;
            if let Some(covered) = covered_id.filter(|c| *c != user_id) {
                let text = format!(
                    "{coverer} has the {team} pager for you now, until {until}; you are not paged until then."
                );
                queued += queue_notice(&mut tx, team_id, covered, &text, now).await?;
            }
        }
        tx.commit().await?;
        Ok(queued)
    }
}

async fn team_name(tx: &mut Tx, team_id: i64) -> Result<String> {
    let (team,): (String,) = sqlx::query_as("SELECT display_name FROM teams WHERE id = $1")
        .bind(team_id)
        .fetch_one(&mut **tx)
        .await?;
    Ok(team)
}

/// One notice to one person, by their rules' first road; not queued (and logged) when they
/// cannot be paged.
async fn queue_notice(
    tx: &mut Tx,
    team_id: i64,
    user_id: i64,
    text: &str,
    now: i64,
) -> Result<u64> {
    match reach_user(tx, team_id, user_id).await? {
        Ok(reached) => {
            let to = Destination::parse(&reached.topic);
            sqlx::query(
                "INSERT INTO pages (incident_id, team_id, kind, topic, road, method_id, user_id, detail, due_at, created_at) \
                 VALUES (NULL, $1, 'handoff', $2, $6, $7, $3, $4, $5, $5)",
            )
            .bind(team_id)
            .bind(&reached.topic)
            .bind(reached.user_id)
            .bind(text)
            .bind(now)
            .bind(to.kind().as_str())
            .bind(to.method_id())
            .execute(&mut **tx)
            .await?;
            Ok(1)
        }
        Err(why) => {
            tracing::info!(team_id, %why, "hand-off notice not queued");
            Ok(0)
        }
    }
}
