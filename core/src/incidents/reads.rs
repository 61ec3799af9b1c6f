//! Listing incidents and alerts. Everything is filtered to the caller's teams. One incident
//! with everything around it is `detail`; statistics are `stats`.

use crate::{Actor, Core, Error, Result};
use klaxon_domain::alerting::{AlertStatus, IncidentState, Severity};
use klaxon_domain::incident::{Alert, Incident};
use klaxon_domain::Timestamp;
use serde::Deserialize;

pub const DEFAULT_LIMIT: i64 = 100;
pub const MAX_LIMIT: i64 = 1000;

pub(crate) const INCIDENT_COLUMNS: &str = "i.id, i.team_id, i.title, i.state, i.severity, i.group_key, i.signature, \
     i.assignee_id, (SELECT username FROM users WHERE id = i.assignee_id) AS assignee, \
     CASE WHEN i.page_user_id IS NOT NULL THEN (SELECT username FROM users WHERE id = i.page_user_id) \
       WHEN i.page_topic IS NOT NULL THEN 'the fallback topic' WHEN i.page_owners = 1 THEN 'the team''s owners' \
       WHEN i.esc_step IS NOT NULL THEN 'the escalation ladder' END AS paged, \
     (SELECT username FROM users WHERE id = i.acknowledged_by) AS acknowledged_by, i.acknowledged_at, i.snoozed_until, i.resolved_at, \
     i.archived_at, i.created_at";

#[derive(sqlx::FromRow)]
pub(crate) struct IncidentRow {
    id: i64,
    team_id: i64,
    title: String,
    #[sqlx(try_from = "String")]
    state: IncidentState,
    #[sqlx(try_from = "String")]
    severity: Severity,
    group_key: String,
    signature: String,
    assignee_id: Option<i64>,
    assignee: Option<String>,
    paged: Option<String>,
    acknowledged_by: Option<String>,
    acknowledged_at: Option<i64>,
    snoozed_until: Option<i64>,
    resolved_at: Option<i64>,
    archived_at: Option<i64>,
    created_at: i64,
}

impl From<IncidentRow> for Incident {
    fn from(r: IncidentRow) -> Incident {
        Incident {
            id: r.id,
            team_id: r.team_id,
            title: r.title,
            state: r.state,
            severity: r.severity,
            group_key: r.group_key,
            signature: r.signature,
            assignee_id: r.assignee_id,
            assignee: r.assignee,
            paged: r.paged,
            acknowledged_by: r.acknowledged_by,
            acknowledged_at: r.acknowledged_at.map(Timestamp),
            snoozed_until: r.snoozed_until.map(Timestamp),
            resolved_at: r.resolved_at.map(Timestamp),
            archived: r.archived_at.is_some(),
            created_at: Timestamp(r.created_at),
        }
    }
}

pub(crate) const ALERT_COLUMNS: &str =
    "id, team_id, fingerprint, status, labels, annotations, starts_at, ends_at, received_at, \
     resolution_source, archived_at, incident_id, integration_id, generator_url";

#[derive(sqlx::FromRow)]
pub(crate) struct AlertRow {
    id: i64,
    team_id: i64,
    fingerprint: String,
    #[sqlx(try_from = "String")]
    status: AlertStatus,
    labels: String,
    annotations: String,
    starts_at: i64,
    ends_at: Option<i64>,
    received_at: i64,
    resolution_source: Option<String>,
    archived_at: Option<i64>,
    incident_id: Option<i64>,
    integration_id: Option<i64>,
    generator_url: Option<String>,
}

impl From<AlertRow> for Alert {
    fn from(r: AlertRow) -> Alert {
        Alert {
            id: r.id,
            team_id: r.team_id,
            fingerprint: r.fingerprint,
            status: r.status,
            // Written by intake from a map, so always a JSON object.
            labels: serde_json::from_str(&r.labels).unwrap_or_default(),
            annotations: serde_json::from_str(&r.annotations).unwrap_or_default(),
            starts_at: Timestamp(r.starts_at),
            ends_at: r.ends_at.map(Timestamp),
            received_at: Timestamp(r.received_at),
            resolution_source: r.resolution_source,
            archived_at: r.archived_at.map(Timestamp),
            incident_id: r.incident_id,
            integration_id: r.integration_id,
            generator_url: r.generator_url,
        }
    }
}

/// `GET /api/incidents` filters.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
pub struct IncidentFilter {
    pub team_id: Option<i64>,
    /// triggered, acknowledged, resolved, or `open` for both unresolved states (empty: any).
    #[param(pattern = "^(triggered|acknowledged|resolved|open)?$")]
    pub state: Option<String>,
    pub assignee_id: Option<i64>,
    /// Archived incidents are hidden unless this is true.
    #[serde(default)]
    pub archived: bool,
    /// At most this many (1 to 1000, default 50).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
    /// Only incidents with a smaller id (paging).
    pub before: Option<i64>,
    /// Only the incidents of this summary push: the link of a page sent in a bundle.
    pub bundle: Option<i64>,
}

/// `GET /api/alerts` filters.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
pub struct AlertFilter {
    pub team: Option<i64>,
    /// firing or resolved (empty: either).
    #[param(pattern = "^(firing|resolved)?$")]
    pub status: Option<String>,
    /// Alert name (the `alertname` label).
    pub name: Option<String>,
    /// Started at or after (RFC 3339).
    #[param(format = DateTime)]
    pub from: Option<String>,
    /// Started before (RFC 3339).
    #[param(format = DateTime)]
    pub to: Option<String>,
    /// At most this many (1 to 1000, default 50).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
    pub before: Option<i64>,
    #[serde(default)]
    pub archived: bool,
}

fn limit(l: Option<i64>) -> Result<i64> {
    match l {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        Some(_) => Err(Error::Invalid(format!(
            "limit must be between 1 and {MAX_LIMIT}"
        ))),
    }
}

pub(super) fn time_param(name: &str, v: &Option<String>) -> Result<Option<i64>> {
    v.as_deref()
        .map(|s| {
            Timestamp::parse(s)
                .map(|t| t.0)
                .ok_or_else(|| Error::Invalid(format!("{name} must be an RFC 3339 time")))
        })
        .transpose()
}

impl Core {
    /// Team ids to read: the one asked for (which the caller must be able to see), or every
    /// team the caller is in (its own team for a team-scoped account). The same rule as a
    /// single read: an instance-scoped service account, which is in no team, reads no team's
    /// incidents or alerts, although it may list the teams' names to adopt them.
    pub(crate) async fn readable_teams(
        &self,
        actor: &Actor,
        team: Option<i64>,
    ) -> Result<Vec<i64>> {
        if let Some(t) = team {
            self.team_access(actor, t).await?;
            return Ok(vec![t]);
        }
        if let Some(scope) = actor.team_scope {
            return Ok(vec![scope]);
        }
        let rows: Vec<(i64,)> =
            sqlx::query_as("SELECT team_id FROM team_members WHERE user_id = $1 ORDER BY team_id")
                .bind(actor.user_id)
                .fetch_all(&self.db.pool)
                .await?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    pub(crate) async fn incident_row(&self, id: i64) -> Result<Incident> {
        let row: IncidentRow = sqlx::query_as(&format!(
            "SELECT {INCIDENT_COLUMNS} FROM incidents i WHERE i.id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::NotFound)?;
        Ok(row.into())
    }

    /// The incident, after checking the caller may see its team (404 otherwise).
    pub async fn incident(&self, actor: &Actor, id: i64) -> Result<Incident> {
        let incident = self.incident_row(id).await?;
        self.team_access(actor, incident.team_id).await?;
        Ok(incident)
    }

    pub async fn list_incidents(&self, actor: &Actor, f: &IncidentFilter) -> Result<Vec<Incident>> {
        let teams = self.readable_teams(actor, f.team_id).await?;
        self.incidents_of(&teams, f).await
    }

    /// The incidents of `teams` that `f` selects (its `team_id` aside); the caller has checked
    /// that these teams may be read.
    pub(crate) async fn incidents_of(
        &self,
        teams: &[i64],
        f: &IncidentFilter,
    ) -> Result<Vec<Incident>> {
        let limit = limit(f.limit)?;
        let state = match f.state.as_deref() {
            None | Some("") => None,
            Some("open") => Some("open"),
            Some(s) => Some(
                IncidentState::parse(s)
                    .ok_or_else(|| {
                        Error::Invalid(
                            "state must be triggered, acknowledged, resolved or open".into(),
                        )
                    })?
                    .as_str(),
            ),
        };
        if teams.is_empty() {
            return Ok(vec![]);
        }
        // Team ids are integers from the database, so inlining them is safe.
        let team_list = teams
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let sql = format!(
            "SELECT {INCIDENT_COLUMNS} FROM incidents i WHERE i.team_id IN ({team_list}) \
             AND ($1 IS NULL OR i.state = $1 OR ($1 = 'open' AND i.state <> 'resolved')) \
             AND ($2 IS NULL OR i.assignee_id = $2) AND ($3 = 1 OR i.archived_at IS NULL) \
             AND ($4 IS NULL OR i.id < $4) \
             AND ($5 IS NULL OR i.id IN (SELECT p.incident_id FROM pages p WHERE p.bundle_id = $5)) \
             ORDER BY i.id DESC LIMIT $6"
        );
        let rows: Vec<IncidentRow> = sqlx::query_as(&sql)
            .bind(state)
            .bind(f.assignee_id)
            .bind(f.archived as i64)
            .bind(f.before)
            .bind(f.bundle)
            .bind(limit)
            .fetch_all(&self.db.pool)
            .await?;
        Ok(rows.into_iter().map(Incident::from).collect())
    }

    pub async fn list_alerts(&self, actor: &Actor, f: &AlertFilter) -> Result<Vec<Alert>> {
        let teams = self.readable_teams(actor, f.team).await?;
        let limit = limit(f.limit)?;
        let status = f
            .status
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|s| {
                AlertStatus::parse(s)
                    .map(|s| s.as_str())
                    .ok_or_else(|| Error::Invalid("status must be firing or resolved".into()))
            })
            .transpose()?;
        let (from, to) = (time_param("from", &f.from)?, time_param("to", &f.to)?);
        if teams.is_empty() {
            return Ok(vec![]);
        }
        let team_list = teams
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let sql = format!(
            "SELECT {ALERT_COLUMNS} FROM alerts WHERE team_id IN ({team_list}) AND ($1 IS NULL OR status = $1) \
             AND ($2 IS NULL OR alertname = $2) AND ($3 IS NULL OR starts_at >= $3) AND ($4 IS NULL OR starts_at < $4) \
             AND ($5 = 1 OR archived_at IS NULL) AND ($6 IS NULL OR id < $6) ORDER BY id DESC LIMIT $7"
        );
        let rows: Vec<AlertRow> = sqlx::query_as(&sql)
            .bind(status)
            .bind(f.name.as_deref())
            .bind(from)
            .bind(to)
            .bind(f.archived as i64)
            .bind(f.before)
            .bind(limit)
            .fetch_all(&self.db.pool)
            .await?;
        Ok(rows.into_iter().map(Alert::from).collect())
    }

    pub async fn get_alert(&self, actor: &Actor, id: i64) -> Result<Alert> {
        let row: AlertRow =
            sqlx::query_as(&format!("SELECT {ALERT_COLUMNS} FROM alerts WHERE id = $1"))
                .bind(id)
                .fetch_optional(&self.db.pool)
                .await?
                .ok_or(Error::NotFound)?;
        self.team_access(actor, row.team_id).await?;
        Ok(row.into())
    }
}
