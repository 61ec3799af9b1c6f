//! Alert intake: one Alertmanager payload is one transaction. Alerts are upserted by (team,
//! fingerprint); a transition into firing opens or joins an incident; incidents whose alerts
//! have all stopped firing resolve. Idempotent, because HA Alertmanager delivers at least once.

use crate::db::Tx;
use crate::incidents::lifecycle::{self, Group};
use crate::{Core, Error, Result};
use klaxon_domain::alerting::{
    ingest, AlertStatus, IncomingAlert, Ingest, StoredAlert, WebhookPayload,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// How a payload arrived.
pub enum Route<'a> {
    /// `POST /api/alertmanager/webhook/{key}`.
    Key(&'a str),
    /// The deprecated key-less path: the oldest team.
    Legacy,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct IntakeOutcome {
    /// Alerts stored or refreshed.
    pub accepted: usize,
    /// Alerts that were unusable or an older instance of a stored alert.
    pub ignored: usize,
}

/// Most alerts one payload may carry; Alertmanager's own default cap is far lower.
pub const MAX_ALERTS: usize = 10_000;

impl Core {
    pub async fn intake(&self, route: Route<'_>, payload: WebhookPayload) -> Result<IntakeOutcome> {
        let (integration_id, team_id) = match route {
            Route::Key(key) => {
                let (i, t) = self.integration_by_key(key).await?;
                (Some(i), t)
            }
            Route::Legacy => {
                let oldest: Option<(i64,)> =
                    sqlx::query_as("SELECT id FROM teams ORDER BY id LIMIT 1")
                        .fetch_optional(&self.db.pool)
                        .await?;
                (
                    None,
                    oldest
                        .ok_or_else(|| {
                            Error::Invalid(
                                "no team exists to receive alerts; create one first".into(),
                            )
                        })?
                        .0,
                )
            }
        };
        if payload.alerts.len() > MAX_ALERTS {
            return Err(Error::Invalid(format!(
                "a payload may carry at most {MAX_ALERTS} alerts"
            )));
        }
        // Unusable alerts are counted and skipped; the rest of the payload still counts.
        let mut usable: BTreeMap<String, IncomingAlert> = BTreeMap::new();
        let mut ignored = 0;
        for a in &payload.alerts {
            match a.validate() {
                // A fingerprint twice in one payload: the later copy wins.
                Ok(a) => {
                    if usable.insert(a.fingerprint.clone(), a).is_some() {
                        ignored += 1;
                    }
                }
                Err(_) => ignored += 1,
            }
        }
        let group_key = payload
            .group_key
            .clone()
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| format!("labels:{:?}", payload.group_labels));
        let group = Group {
            key: &group_key,
            labels: &payload.group_labels,
        };
        // Alerts are applied in fingerprint order, so concurrent payloads lock rows in one order;
        // a deadlock or busy database that still happens is retried whole.
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self
                .apply_payload(team_id, integration_id, &group, &usable)
                .await
            {
                Err(Error::Busy) if attempt < 5 => continue,
                Err(e) => return Err(e),
                Ok(discarded) => {
                    return Ok(IntakeOutcome {
                        accepted: usable.len() - discarded,
                        ignored: ignored + discarded,
                    })
                }
            }
        }
    }

    /// One transaction for the whole payload. Returns how many alerts were discarded as stale.
    async fn apply_payload(
        &self,
        team_id: i64,
        integration_id: Option<i64>,
        group: &Group<'_>,
        alerts: &BTreeMap<String, IncomingAlert>,
    ) -> Result<usize> {
        let now = self.now();
        let mut tx = self.db.begin().await?;
        if let Some(id) = integration_id {
            // The last webhook time moves on every payload, the last alert time only with a usable alert.
            let sql = if alerts.is_empty() {
                "UPDATE integrations SET last_webhook_at = $1 WHERE id = $2"
            } else {
                "UPDATE integrations SET last_webhook_at = $1, last_alert_at = $1 WHERE id = $2"
            };
            sqlx::query(sql)
                .bind(now)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        let mut touched = BTreeSet::new();
        let mut discarded = 0;
        for alert in alerts.values() {
            let decision = apply_alert(
                &mut tx,
                team_id,
                integration_id,
                group,
                alert,
                now,
                &mut touched,
            )
            .await?;
            if decision == Ingest::Discard {
                discarded += 1;
            }
        }
        for incident in touched {
            lifecycle::cascade(&mut tx, incident, now, "every alert stopped firing").await?;
        }
        tx.commit().await?;
        Ok(discarded)
    }
}

type StoredRow = (i64, String, i64, Option<i64>);

/// Applies one alert under the seed's transition table. Every write is conditional on the row
/// still being what was read, so a concurrent delivery makes us re-read, never double-apply.
async fn apply_alert(
    tx: &mut Tx,
    team_id: i64,
    integration_id: Option<i64>,
    group: &Group<'_>,
    a: &IncomingAlert,
    now: i64,
    touched: &mut BTreeSet<i64>,
) -> Result<Ingest> {
    let labels = serde_json::to_string(&a.labels).unwrap_or_default();
    let annotations = serde_json::to_string(&a.annotations).unwrap_or_default();
    let alertname = a.labels.get("alertname").cloned().unwrap_or_default();
    for _ in 0..5 {
        let stored: Option<StoredRow> =
            sqlx::query_as("SELECT id, status, starts_at, incident_id FROM alerts WHERE team_id = $1 AND fingerprint = $2")
                .bind(team_id)
                .bind(&a.fingerprint)
                .fetch_optional(&mut **tx)
                .await?;
        let previous = stored
            .as_ref()
            .map(|(_, status, starts_at, _)| StoredAlert {
                status: AlertStatus::parse(status).unwrap_or(AlertStatus::Resolved),
                starts_at: *starts_at,
            });
        let decision = ingest(previous, a.status, a.starts_at);
        let (status, ends_at, source) = match a.status {
            AlertStatus::Firing => ("firing", a.ends_at, None),
            AlertStatus::Resolved => (
                "resolved",
                Some(a.ends_at.unwrap_or(now)),
                Some("alertmanager"),
            ),
        };
        let alert_id = match (decision, &stored) {
            (Ingest::Discard, _) => return Ok(decision),
            (_, None) => {
                let inserted: Option<(i64,)> = sqlx::query_as(
                    "INSERT INTO alerts (team_id, fingerprint, status, labels, annotations, starts_at, ends_at, received_at, \
                     resolution_source, integration_id, alertname) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
                     ON CONFLICT DO NOTHING RETURNING id",
                )
                .bind(team_id)
                .bind(&a.fingerprint)
                .bind(status)
                .bind(&labels)
                .bind(&annotations)
                .bind(a.starts_at)
                .bind(ends_at)
                .bind(now)
                .bind(source)
                .bind(integration_id)
                .bind(&alertname)
                .fetch_optional(&mut **tx)
                .await?;
                match inserted {
                    Some((id,)) => id,
                    None => continue, // a concurrent delivery inserted it first: decide again
                }
            }
            (_, Some((id, old_status, old_starts, _))) => {
                // Firing again clears the archive mark; a refresh of a firing alert keeps its
                // resolution fields empty; the last sender wins on integration_id.
                let done = sqlx::query(
                    "UPDATE alerts SET status = $1, labels = $2, annotations = $3, starts_at = $4, ends_at = $5, \
                     received_at = $6, resolution_source = $7, integration_id = COALESCE($8, integration_id), alertname = $9, \
                     archived_at = CASE WHEN $1 = 'firing' THEN NULL ELSE archived_at END \
                     WHERE id = $10 AND status = $11 AND starts_at = $12",
                )
                .bind(status)
                .bind(&labels)
                .bind(&annotations)
                .bind(a.starts_at)
                .bind(ends_at)
                .bind(now)
                .bind(source)
                .bind(integration_id)
                .bind(&alertname)
                .bind(id)
                .bind(old_status)
                .bind(old_starts)
                .execute(&mut **tx)
                .await?;
                if done.rows_affected() == 0 {
                    continue;
                }
                *id
            }
        };
        let previous_incident = stored.as_ref().and_then(|s| s.3);
        match decision {
            Ingest::Fire => {
                let (incident, _opened) =
                    lifecycle::open_or_join(tx, team_id, group, a, now).await?;
                sqlx::query("UPDATE alerts SET incident_id = $1 WHERE id = $2")
                    .bind(incident)
                    .bind(alert_id)
                    .execute(&mut **tx)
                    .await?;
                lifecycle::timeline(
                    tx,
                    incident,
                    now,
                    "alert_firing",
                    None,
                    &format!("{alertname} firing ({})", a.fingerprint),
                )
                .await?;
                // An alert that moved on from an older incident may leave it with nothing firing.
                if let Some(old) = previous_incident.filter(|old| *old != incident) {
                    touched.insert(old);
                }
            }
            Ingest::Resolve => {
                if let Some(incident) = previous_incident {
                    lifecycle::timeline(
                        tx,
                        incident,
                        now,
                        "alert_resolved",
                        None,
                        &format!("{alertname} resolved by Alertmanager"),
                    )
                    .await?;
                    touched.insert(incident);
                }
            }
            Ingest::Refresh | Ingest::StoreResolved | Ingest::Discard => {}
        }
        return Ok(decision);
    }
    Err(Error::Busy)
}
