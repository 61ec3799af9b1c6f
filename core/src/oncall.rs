//! Who holds a team's pager at an instant: the person of an active partial-day cover, else the
//! holder of the schedule date whose on-call day holds the instant. The day's bounds are
//! `domain::oncall_day`'s; this module only reads a team's rule and its covers.

use crate::{Core, Result};
use klaxon_domain::calendar::days_from;
use klaxon_domain::oncall_day::{HandOff, TeamDays};
use klaxon_domain::schedule::{CoverageGap, LOOK_AHEAD_DAYS};
use sqlx::AnyConnection;

/// A team's rule as stored: zone, hand-off time, and while a change waits, the earlier rule
/// and the first date that no longer follows it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct RuleRow {
    pub time_zone: String,
    pub handoff_time: String,
    pub earlier_time_zone: Option<String>,
    pub earlier_handoff_time: Option<String>,
    pub rule_from: Option<String>,
}

/// The columns of `RuleRow`, for queries that read them with other things.
pub(crate) const RULE_COLUMNS: &str =
    "t.time_zone, t.handoff_time, t.earlier_time_zone, t.earlier_handoff_time, t.rule_from";

impl RuleRow {
    /// The team's days. A stored rule this build cannot read (a zone gone from the database)
    /// falls back to UTC midnight, so paging never stops over it; the log says so.
    pub fn days(&self) -> TeamDays {
        let rule = |zone: &str, at: &str| {
            HandOff::new(zone, at).unwrap_or_else(|why| {
                tracing::warn!(%why, "a team's on-call day is unreadable; using UTC midnight");
                HandOff::default()
            })
        };
        let now = rule(&self.time_zone, &self.handoff_time);
        match (
            &self.earlier_time_zone,
            &self.earlier_handoff_time,
            self.rule_from.as_deref().and_then(|d| d.parse().ok()),
        ) {
            (Some(zone), Some(at), Some(from)) => TeamDays::changed(rule(zone, at), from, now),
            _ => TeamDays::new(now),
        }
    }
}

/// A team's days (UTC midnight for a team that is gone).
pub(crate) async fn team_days(conn: &mut AnyConnection, team_id: i64) -> Result<TeamDays> {
    let row: Option<RuleRow> = sqlx::query_as(&format!(
        "SELECT {RULE_COLUMNS} FROM teams t WHERE t.id = $1"
    ))
    .bind(team_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| r.days()).unwrap_or_default())
}

/// The schedule date (`YYYY-MM-DD`) of the team's day at `now`.
pub(crate) async fn today(conn: &mut AnyConnection, team_id: i64, now: i64) -> Result<String> {
    Ok(team_days(conn, team_id).await?.day_of(now).to_string())
}

/// The first of the team's next `LOOK_AHEAD_DAYS` dates, today (the team's) first, that no
/// enabled person holds; with whether it is today.
pub(crate) async fn first_gap(
    conn: &mut AnyConnection,
    team_id: i64,
    now: i64,
) -> Result<Option<(String, bool)>> {
    let today = today(conn, team_id, now).await?;
    let dates = days_from(&today, LOOK_AHEAD_DAYS);
    let last = dates.last().cloned().unwrap_or_else(|| today.clone());
    let held: Vec<(String,)> = sqlx::query_as(
        "SELECT s.date FROM schedule s JOIN users u ON u.id = s.user_id \
         WHERE s.team_id = $1 AND s.date >= $2 AND s.date <= $3 AND u.disabled = 0",
    )
    .bind(team_id)
    .bind(&today)
    .bind(&last)
    .fetch_all(&mut *conn)
    .await?;
    Ok(dates
        .into_iter()
        .find(|d| !held.iter().any(|(h,)| h == d))
        .map(|d| {
            let is_today = d == today;
            (d, is_today)
        }))
}

impl Core {
    /// The coverage gaps of `teams` (id and name), in their order: the first date of each
    /// that nobody holds, within the look-ahead.
    pub async fn coverage_gaps(&self, teams: &[(i64, String)]) -> Result<Vec<CoverageGap>> {
        let now = self.now();
        let mut conn = self.db.pool.acquire().await?;
        let mut gaps = Vec::new();
        for (team_id, team_name) in teams {
            if let Some((from, today)) = first_gap(&mut conn, *team_id, now).await? {
                gaps.push(CoverageGap {
                    team_id: *team_id,
                    team_name: team_name.clone(),
                    from,
                    today,
                });
            }
        }
        Ok(gaps)
    }
}

/// A partial-day cover in force.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct ActiveCover {
    pub id: i64,
    pub user_id: i64,
    pub ends_at: i64,
}

/// The cover of the team in force at `now`, if any.
pub(crate) async fn active_cover(
    conn: &mut AnyConnection,
    team_id: i64,
    now: i64,
) -> Result<Option<ActiveCover>> {
    Ok(sqlx::query_as(
        "SELECT id, user_id, ends_at FROM covers \
         WHERE team_id = $1 AND starts_at <= $2 AND ends_at > $2 ORDER BY starts_at LIMIT 1",
    )
    .bind(team_id)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?)
}

/// Who holds the pager at `now`: a cover's person, else the day's holder.
#[derive(Debug, Clone)]
pub(crate) struct OnCall {
    pub user_id: i64,
    pub cover: Option<ActiveCover>,
}

/// The holder of the team's pager at `now`, or nobody.
pub(crate) async fn holder_at(
    conn: &mut AnyConnection,
    team_id: i64,
    now: i64,
) -> Result<Option<OnCall>> {
    if let Some(cover) = active_cover(conn, team_id, now).await? {
        return Ok(Some(OnCall {
            user_id: cover.user_id,
            cover: Some(cover),
        }));
    }
    let date = today(conn, team_id, now).await?;
    let row: Option<(i64,)> =
        sqlx::query_as("SELECT user_id FROM schedule WHERE team_id = $1 AND date = $2")
            .bind(team_id)
            .bind(&date)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.map(|(user_id,)| OnCall {
        user_id,
        cover: None,
    }))
}

/// "covering for ana until Thursday 26 November 18:00 (America/New_York)", for timelines.
pub(crate) fn cover_words(days: &TeamDays, covered: Option<&str>, ends_at: i64) -> String {
    let rule = days.rule();
    let until = format!("until {} ({})", rule.local_words(ends_at), rule.zone_name());
    match covered {
        Some(name) => format!("covering for {name} {until}"),
        None => format!("covering {until}"),
    }
}

impl Core {
    /// The team's schedule date now (`YYYY-MM-DD`): the date of its on-call day in progress.
    pub async fn team_today(&self, team_id: i64) -> Result<String> {
        let mut conn = self.db.pool.acquire().await?;
        today(&mut conn, team_id, self.now()).await
    }
}
