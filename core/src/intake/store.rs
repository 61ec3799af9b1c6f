//! Where intake reads and writes alerts: the stored state of a payload's alerts in a few
//! queries, new alerts in one statement, and each known alert under the seed's transition table
//! with writes conditional on the row still being what was read.

use super::Applied;
use crate::db::{fetch_in, insert_rows, Backend, Col::*, Tx};
use crate::{Error, Result};
use klaxon_domain::alerting::{ingest, AlertStatus, IncomingAlert, Ingest, StoredAlert};
use serde::Serialize;
use sqlx::AnyConnection;
use std::collections::{HashMap, HashSet};

/// An alert as stored, as much as applying a new instance of it needs.
#[derive(sqlx::FromRow)]
pub(super) struct StoredRow {
    fingerprint: String,
    id: i64,
    #[sqlx(try_from = "String")]
    status: AlertStatus,
    starts_at: i64,
    incident_id: Option<i64>,
}

const STORED_COLUMNS: &str = "fingerprint, id, status, starts_at, incident_id";

impl StoredRow {
    fn previous(&self) -> StoredAlert {
        StoredAlert {
            status: self.status,
            starts_at: self.starts_at,
        }
    }
}

/// What a payload's team has that its transaction would otherwise look for in vain.
pub(super) struct TeamHas {
    /// Dead man's switches fed by alerts: only then are the alerts matched against them (a
    /// switch added while a payload is in flight counts from the next).
    pub switches: bool,
    /// Chat channels: without one, the timeline is written without the statement that queues
    /// announcements.
    pub channels: bool,
}

/// Read with the payload's other reads, not with the key: there, outside a transaction, each
/// statement is planned afresh on PostgreSQL, and these two subqueries were most of the key
/// lookup's planning; in intake's transaction their plan is kept (`Db::begin_indexed`).
pub(super) async fn team_has(conn: &mut AnyConnection, team_id: i64) -> Result<TeamHas> {
    let (switches, channels): (i64, i64) = sqlx::query_as(
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM deadman_switches \
         WHERE team_id = $1 AND ping_key_hash IS NULL) THEN 1 ELSE 0 END, \
         CASE WHEN EXISTS (SELECT 1 FROM channels WHERE team_id = $1) THEN 1 ELSE 0 END",
    )
    .bind(team_id)
    .fetch_one(conn)
    .await?;
    Ok(TeamHas {
        switches: switches == 1,
        channels: channels == 1,
    })
}

/// The stored state of a payload's alerts, read in a few queries instead of one per alert.
/// Read before the payload's transaction: every write it leads to is conditional on the row
/// still being so (`apply_alert`), or skipped when a concurrent delivery inserted it first.
pub(super) async fn load_stored<'a>(
    conn: &mut AnyConnection,
    backend: Backend,
    team_id: i64,
    fingerprints: impl Iterator<Item = &'a String>,
) -> Result<HashMap<String, StoredRow>> {
    let fingerprints: Vec<&String> = fingerprints.collect();
    let rows: Vec<StoredRow> = match backend {
        // One statement text whatever the payload's length, so it is prepared and planned once
        // per connection (an id list of each length was planned at every payload). The fence
        // (`OFFSET 0`) keeps the plan a lookup per fingerprint: a plan kept from while the
        // table was small would otherwise read the team's every alert.
        Backend::Postgres => {
            let list = serde_json::to_string(&fingerprints)
                .map_err(|e| Error::Internal(e.to_string()))?;
            sqlx::query_as(&format!(
                "SELECT a.* FROM json_array_elements_text(CAST($2 AS json)) AS f(fingerprint) \
                 CROSS JOIN LATERAL (SELECT {STORED_COLUMNS} FROM alerts \
                 WHERE team_id = $1 AND fingerprint = f.fingerprint OFFSET 0) AS a"
            ))
            .bind(team_id)
            .bind(list)
            .fetch_all(&mut *conn)
            .await?
        }
        Backend::Sqlite => {
            fetch_in(
                conn,
                (backend, false),
                &format!(
                    "SELECT {STORED_COLUMNS} FROM alerts WHERE team_id = $1 AND fingerprint IN ({{ids}})"
                ),
                &[team_id.into()],
                &fingerprints,
            )
            .await?
        }
    };
    Ok(rows
        .into_iter()
        .map(|r| (r.fingerprint.clone(), r))
        .collect())
}

/// Whether any of the alerts starts a new occurrence (opens or joins its group's incident),
/// as far as `stored` tells.
pub(super) fn any_fires<'a>(
    stored: &HashMap<String, StoredRow>,
    mut alerts: impl Iterator<Item = &'a IncomingAlert>,
) -> bool {
    alerts.any(|a| {
        let previous = stored.get(&a.fingerprint).map(StoredRow::previous);
        ingest(previous, a.status, a.starts_at) == Ingest::Fire
    })
}

/// An alert row as intake writes it, inserted from JSON (`insert_rows`) or bound to an update.
#[derive(Serialize)]
pub(super) struct AlertRow<'a> {
    team_id: i64,
    fingerprint: &'a str,
    status: &'static str,
    labels: String,
    annotations: String,
    starts_at: i64,
    ends_at: Option<i64>,
    received_at: i64,
    resolution_source: Option<&'static str>,
    integration_id: Option<i64>,
    alertname: String,
    incident_id: Option<i64>,
    generator_url: Option<&'a str>,
}

impl<'a> AlertRow<'a> {
    fn of(p: &Applied<'_>, a: &'a IncomingAlert, incident_id: Option<i64>) -> Self {
        let (status, ends_at, resolution_source) = match a.status {
            AlertStatus::Firing => ("firing", a.ends_at, None),
            AlertStatus::Resolved => (
                "resolved",
                Some(a.ends_at.unwrap_or(p.now)),
                Some("alertmanager"),
            ),
        };
        AlertRow {
            team_id: p.team_id,
            fingerprint: &a.fingerprint,
            status,
            labels: serde_json::to_string(&a.labels).unwrap_or_default(),
            annotations: serde_json::to_string(&a.annotations).unwrap_or_default(),
            starts_at: a.starts_at,
            ends_at,
            received_at: p.now,
            resolution_source,
            integration_id: p.integration_id,
            alertname: a.labels.get("alertname").cloned().unwrap_or_default(),
            incident_id,
            generator_url: a.generator_url.as_deref(),
        }
    }
}

/// Inserts `rows` in one statement, skipping any a concurrent delivery stored first; returns the
/// fingerprints inserted.
async fn insert_alerts(tx: &mut Tx, rows: &[&AlertRow<'_>]) -> Result<HashSet<String>> {
    if rows.is_empty() {
        return Ok(HashSet::new());
    }
    // `WHERE true`: SQLite reads the `ON` of an upsert after a bare `SELECT … FROM` as a join's.
    let sql = format!(
        "{} WHERE true ON CONFLICT DO NOTHING RETURNING fingerprint",
        insert_rows(
            tx.backend,
            "alerts",
            &[
                Int("team_id"),
                Text("fingerprint"),
                Text("status"),
                Text("labels"),
                Text("annotations"),
                Int("starts_at"),
                Int("ends_at"),
                Int("received_at"),
                Text("resolution_source"),
                Int("integration_id"),
                Text("alertname"),
                Int("incident_id"),
                Text("generator_url"),
            ],
        )
    );
    let json = serde_json::to_string(rows)
        .map_err(|e| Error::Internal(format!("cannot encode alerts: {e}")))?;
    let inserted: Vec<(String,)> = sqlx::query_as(&sql).bind(json).fetch_all(&mut **tx).await?;
    Ok(inserted.into_iter().map(|r| r.0).collect())
}

/// Applies alerts with no stored row: opens or joins the group's incident for those that fire,
/// inserts them all at once, and returns the decisions applied and the alerts a concurrent
/// delivery stored first (to apply as known).
pub(super) async fn insert_new<'a>(
    tx: &mut Tx,
    p: &mut Applied<'_>,
    alerts: &[&'a IncomingAlert],
    beats: &HashMap<String, Vec<(i64, String)>>,
) -> Result<(Vec<(&'a IncomingAlert, Ingest)>, Vec<&'a IncomingAlert>)> {
    let mut rows = Vec::with_capacity(alerts.len());
    for a in alerts {
        let heartbeat = beats.contains_key(&a.fingerprint);
        let decision = ingest(None, a.status, a.starts_at);
        let incident = match decision {
            Ingest::Fire if !heartbeat => Some(p.group_incident(tx, a).await?),
            _ => None,
        };
        rows.push((decision, heartbeat, AlertRow::of(p, a, incident)));
    }
    let rows_only: Vec<&AlertRow> = rows.iter().map(|r| &r.2).collect();
    let inserted = insert_alerts(tx, &rows_only).await?;
    let mut applied = Vec::with_capacity(alerts.len());
    let mut raced = Vec::new();
    for (a, (decision, heartbeat, row)) in alerts.iter().zip(&rows) {
        if inserted.contains(&a.fingerprint) {
            p.record(a, *decision, None, row.incident_id, *heartbeat);
            applied.push((*a, *decision));
        } else {
            raced.push(*a);
        }
    }
    Ok((applied, raced))
}
/// Applies one alert under the seed's transition table. Every write is conditional on the row
/// still being what was read, so a concurrent delivery makes us re-read, never double-apply.
/// A dead man's switch heartbeat is stored like any alert but opens no incident.
pub(super) async fn apply_alert(
    tx: &mut Tx,
    p: &mut Applied<'_>,
    a: &IncomingAlert,
    mut stored: Option<StoredRow>,
    heartbeat: bool,
) -> Result<Ingest> {
    let mut row = AlertRow::of(p, a, None);
    for attempt in 0..5 {
        if attempt > 0 {
            // Lost a race with a concurrent delivery: read the row as it is now.
            stored = sqlx::query_as(&format!(
                "SELECT {STORED_COLUMNS} FROM alerts WHERE team_id = $1 AND fingerprint = $2"
            ))
            .bind(p.team_id)
            .bind(&a.fingerprint)
            .fetch_optional(&mut **tx)
            .await?;
        }
        let previous = stored.as_ref().map(StoredRow::previous);
        let decision = ingest(previous, a.status, a.starts_at);
        if decision == Ingest::Discard {
            return Ok(decision);
        }
        let previous_incident = stored.as_ref().and_then(|s| s.incident_id);
        // A new occurrence belongs to the group's incident; otherwise the alert keeps its own.
        row.incident_id = match decision {
            Ingest::Fire if heartbeat => None,
            Ingest::Fire => Some(p.group_incident(tx, a).await?),
            _ => previous_incident,
        };
        let written = match &stored {
            None => !insert_alerts(tx, &[&row]).await?.is_empty(),
            Some(old) => {
                // Firing again clears the archive mark; the last sender wins on integration_id.
                let done = sqlx::query(
                    "UPDATE alerts SET status = $1, labels = $2, annotations = $3, starts_at = $4, ends_at = $5, \
                     received_at = $6, resolution_source = $7, integration_id = COALESCE($8, integration_id), alertname = $9, \
                     incident_id = $10, archived_at = CASE WHEN $1 = 'firing' THEN NULL ELSE archived_at END, \
                     generator_url = COALESCE($14, generator_url) \
                     WHERE id = $11 AND status = $12 AND starts_at = $13",
                )
                .bind(row.status)
                .bind(&row.labels)
                .bind(&row.annotations)
                .bind(row.starts_at)
                .bind(row.ends_at)
                .bind(row.received_at)
                .bind(row.resolution_source)
                .bind(row.integration_id)
                .bind(&row.alertname)
                .bind(row.incident_id)
                .bind(old.id)
                .bind(old.status.as_str())
                .bind(old.starts_at)
                .bind(row.generator_url)
                .execute(&mut **tx)
                .await?;
                done.rows_affected() == 1
            }
        };
        if !written {
            continue;
        }
        p.record(a, decision, previous_incident, row.incident_id, heartbeat);
        return Ok(decision);
    }
    Err(Error::Busy)
}
