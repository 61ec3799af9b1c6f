//! Incident statistics for a period, per week, and alert volume per hour: the team page's
//! charts and `GET /api/stats/…`. Always the caller's teams.

use crate::{Actor, Core, Error, Result};
use klaxon_domain::calendar::utc_date;
use klaxon_domain::ids::{IntegrationId, TeamId};
use klaxon_domain::incident::{
    week_start, HourVolume, IncidentStats, WeeklyStats, DEFAULT_HOURS, DEFAULT_WEEKS, MAX_HOURS,
    MAX_WEEKS,
};
use klaxon_domain::Timestamp;

const WEEK: i64 = 7 * 86_400;
const HOUR: i64 = 3_600;

fn team_list(teams: &[i64]) -> String {
    teams
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn bounded(name: &str, v: Option<i64>, default: i64, max: i64) -> Result<i64> {
    match v {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(_) => Err(Error::Invalid(format!(
            "{name} must be between 1 and {max}"
        ))),
    }
}

#[derive(sqlx::FromRow)]
struct WeekRow {
    week: i64,
    opened: i64,
    acked: i64,
    ack_sum: Option<i64>,
    resolved: i64,
    res_sum: Option<i64>,
}

fn mean(sum: Option<i64>, n: i64) -> Option<i64> {
    sum.filter(|_| n > 0).map(|s| s / n)
}

impl Core {
    /// Mean time to acknowledge and to resolve over incidents opened in [from, to).
    pub async fn incident_stats(
        &self,
        actor: &Actor,
        team: Option<i64>,
        from: Option<String>,
        to: Option<String>,
    ) -> Result<IncidentStats> {
        let teams = self.readable_teams(actor, team).await?;
        let (from, to) = (
            super::reads::time_param("from", &from)?,
            super::reads::time_param("to", &to)?,
        );
        if teams.is_empty() {
            return Ok(IncidentStats {
                mtta_seconds: None,
                mttr_seconds: None,
                opened: 0,
                acknowledged: 0,
                resolved: 0,
            });
        }
        // SUM over BIGINT is NUMERIC on PostgreSQL; cast back so one decoder serves both.
        let sql = format!(
            "SELECT COUNT(*), \
             COUNT(acknowledged_at), CAST(SUM(acknowledged_at - created_at) AS BIGINT), \
             COUNT(resolved_at), CAST(SUM(resolved_at - created_at) AS BIGINT) \
             FROM incidents WHERE team_id IN ({}) AND ($1 IS NULL OR created_at >= $1) AND ($2 IS NULL OR created_at < $2)",
            team_list(&teams)
        );
        let (opened, acked, ack_sum, resolved, res_sum): (i64, i64, Option<i64>, i64, Option<i64>) =
            sqlx::query_as(&sql)
                .bind(from)
                .bind(to)
                .fetch_one(&self.db.pool)
                .await?;
        Ok(IncidentStats {
            mtta_seconds: mean(ack_sum, acked),
            mttr_seconds: mean(res_sum, resolved),
            opened,
            acknowledged: acked,
            resolved,
        })
    }

    /// The last `weeks` weeks (Monday 00:00 UTC to Monday, the current one last), every week
    /// present: incidents opened in it and their mean times to acknowledge and resolve.
    pub async fn weekly_incident_stats(
        &self,
        actor: &Actor,
        team: Option<i64>,
        weeks: Option<i64>,
    ) -> Result<Vec<WeeklyStats>> {
        let weeks = bounded("weeks", weeks, DEFAULT_WEEKS, MAX_WEEKS)?;
        let teams = self.readable_teams(actor, team).await?;
        let first = week_start(self.now()) - (weeks - 1) * WEEK;
        let rows: Vec<WeekRow> = if teams.is_empty() {
            Vec::new()
        } else {
            sqlx::query_as(&format!(
                "SELECT (created_at - $1) / {WEEK} AS week, COUNT(*) AS opened, \
                 COUNT(acknowledged_at) AS acked, CAST(SUM(acknowledged_at - created_at) AS BIGINT) AS ack_sum, \
                 COUNT(resolved_at) AS resolved, CAST(SUM(resolved_at - created_at) AS BIGINT) AS res_sum \
                 FROM incidents WHERE team_id IN ({}) AND created_at >= $1 \
                 GROUP BY 1",
                team_list(&teams)
            ))
            .bind(first)
            .fetch_all(&self.db.pool)
            .await?
        };
        Ok((0..weeks)
            .map(|w| {
                let row = rows.iter().find(|r| r.week == w);
                WeeklyStats {
                    week_start: utc_date(first + w * WEEK),
                    opened: row.map_or(0, |r| r.opened),
                    mtta_seconds: row.and_then(|r| mean(r.ack_sum, r.acked)),
                    mttr_seconds: row.and_then(|r| mean(r.res_sum, r.resolved)),
                }
            })
            .collect())
    }

    /// `integration_volume` of each of the team's integrations, by integration id: the team
    /// page's sparklines in one call.
    pub async fn integration_volumes(
        &self,
        actor: &Actor,
        team_id: i64,
    ) -> Result<Vec<(i64, Vec<HourVolume>)>> {
        let mut out = Vec::new();
        for i in self.list_integrations(actor, team_id).await? {
            out.push((
                i.id,
                self.integration_volume(actor, TeamId(team_id), IntegrationId(i.id), None)
                    .await?,
            ));
        }
        Ok(out)
    }

    /// Alerts of one integration that started firing in each of the last `hours` hours (the
    /// current hour last, every hour present). Members of the team only.
    pub async fn integration_volume(
        &self,
        actor: &Actor,
        team_id: TeamId,
        integration_id: IntegrationId,
        hours: Option<i64>,
    ) -> Result<Vec<HourVolume>> {
        let (TeamId(team_id), IntegrationId(integration_id)) = (team_id, integration_id);
        let hours = bounded("hours", hours, DEFAULT_HOURS, MAX_HOURS)?;
        self.team_access(actor, team_id).await?;
        let known: Option<(i64,)> =
            sqlx::query_as("SELECT id FROM integrations WHERE id = $1 AND team_id = $2")
                .bind(integration_id)
                .bind(team_id)
                .fetch_optional(&self.db.pool)
                .await?;
        known.ok_or(Error::NotFound)?;
        let first = (self.now().div_euclid(HOUR) - (hours - 1)) * HOUR;
        // An alert that started in the window was received in it too, so the
        // (integration, received_at) index bounds the scan.
        let rows: Vec<(i64, i64)> = sqlx::query_as(&format!(
            "SELECT (starts_at - $2) / {HOUR}, COUNT(*) FROM alerts \
             WHERE integration_id = $1 AND received_at >= $2 AND starts_at >= $2 \
             GROUP BY 1"
        ))
        .bind(integration_id)
        .bind(first)
        .fetch_all(&self.db.pool)
        .await?;
        Ok((0..hours)
            .map(|h| HourVolume {
                hour: Timestamp(first + h * HOUR),
                alerts: rows.iter().find(|r| r.0 == h).map_or(0, |r| r.1),
            })
            .collect())
    }
}
