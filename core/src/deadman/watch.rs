//! The sweeper's watch over the switches: a source silent past its timeout gets an incident,
//! opened like any other so it is assigned and paged; a source heard again has it resolved.

use crate::incidents::lifecycle::{self, Group};
use crate::timeline::{self, Entry};
use crate::{Core, Result};
use klaxon_domain::alerting::{AlertStatus, IncidentState, IncomingAlert, Severity};
use klaxon_domain::deadman::{self, SwitchStatus, CLUSTER_LABEL};
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::{Duration, Timestamp};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WatchReport {
    /// Sources found dead that got an incident.
    pub opened: u64,
    /// Sources whose heartbeats returned, their incidents resolved.
    pub recovered: u64,
}

/// One source of one switch: its last heartbeat and open incident, with the switch's settings.
#[derive(sqlx::FromRow)]
struct Source {
    switch_id: i64,
    cluster: String,
    last_seen_at: i64,
    /// A heartbeat URL's `/fail` that no heartbeat followed, and what it said.
    failed_at: Option<i64>,
    failure: Option<String>,
    incident_id: Option<i64>,
    team_id: i64,
    name: String,
    timeout: i64,
    #[sqlx(try_from = "String")]
    severity: Severity,
}

impl Core {
    /// The sweeper's watch: a silent source without an incident gets one (paged like any other);
    /// a source heard again has its incident resolved. Both are conditional on the heartbeat row
    /// being what was read, so a heartbeat arriving meanwhile wins.
    pub async fn watch_switches(&self) -> Result<WatchReport> {
        let now = self.now();
        sqlx::query(
            "DELETE FROM deadman_heartbeats WHERE switch_id NOT IN (SELECT id FROM deadman_switches)",
        )
        .execute(&self.db.pool)
        .await?;
        let rows: Vec<Source> = sqlx::query_as(
            "SELECT h.switch_id, h.cluster, h.last_seen_at, h.failed_at, h.failure, h.incident_id, \
             s.team_id, s.name, s.timeout, s.severity \
             FROM deadman_heartbeats h JOIN deadman_switches s ON s.id = h.switch_id ORDER BY h.switch_id, h.cluster",
        )
        .fetch_all(&self.db.pool)
        .await?;
        let mut report = WatchReport::default();
        for source in rows {
            let status = deadman::status(
                Some(source.last_seen_at),
                source.failed_at.is_some(),
                Duration::seconds(source.timeout),
                now,
            );
            match (status, source.incident_id) {
                (SwitchStatus::Dead, None) => {
                    report.opened += u64::from(self.source_died(&source, now).await?)
                }
                (SwitchStatus::Healthy, Some(incident)) => {
                    report.recovered +=
                        u64::from(self.source_recovered(&source, incident, now).await?)
                }
                _ => {}
            }
        }
        if report != WatchReport::default() {
            self.wake_notifier();
        }
        Ok(report)
    }

    async fn source_died(&self, s: &Source, now: i64) -> Result<bool> {
        let Source {
            switch_id,
            cluster,
            last_seen_at: last_seen,
            failed_at,
            failure,
            team_id,
            name,
            timeout,
            severity,
            ..
        } = s;
        let timeout = Duration::seconds(*timeout);
        let mut labels = BTreeMap::from([
            ("alertname".to_string(), name.clone()),
            ("severity".to_string(), severity.as_str().to_string()),
        ]);
        let from = if cluster.is_empty() {
            String::new()
        } else {
            labels.insert(CLUSTER_LABEL.into(), cluster.clone());
            format!(" from {cluster}")
        };
        let key = deadman::group_key(*switch_id, cluster);
        let alert = IncomingAlert {
            fingerprint: key.clone(),
            status: AlertStatus::Firing,
            labels,
            annotations: BTreeMap::from([(
                "summary".to_string(),
                match (failed_at, failure) {
                    (Some(_), Some(said)) => format!("the job reported a failure: {said}"),
                    (Some(_), None) => "the job reported a failure".to_string(),
                    _ => format!("no heartbeat{from} for {timeout}"),
                },
            )]),
            starts_at: now,
            ends_at: None,
            generator_url: None,
        };
        let no_labels = BTreeMap::new();
        let group = Group {
            key: &key,
            labels: &no_labels,
            integration_id: None,
        };
        let mut tx = self.db.begin().await?;
        let mut entries = Vec::new();
        let (incident, _) =
            lifecycle::open_or_join(&mut tx, *team_id, &group, &alert, now, &mut entries, None)
                .await?;
        let claimed = sqlx::query(
            "UPDATE deadman_heartbeats SET incident_id = $1 \
             WHERE switch_id = $2 AND cluster = $3 AND last_seen_at = $4 AND incident_id IS NULL \
             AND (failed_at IS NOT NULL OR $5 = 0)",
        )
        .bind(incident)
        .bind(switch_id)
        .bind(cluster)
        .bind(last_seen)
        .bind(i64::from(failed_at.is_some()))
        .execute(&mut *tx)
        .await?;
        if claimed.rows_affected() == 0 {
            // A heartbeat arrived since the read: dropping the transaction undoes the incident.
            return Ok(false);
        }
        entries.push(Entry {
            incident_id: incident,
            at: now,
            kind: TimelineKind::AlertFiring,
            actor_id: None,
            text: match failed_at {
                Some(at) => format!(
                    "dead man's switch {name}: failure reported at {}",
                    Timestamp(*at).to_rfc3339()
                ),
                None => format!(
                    "dead man's switch {name}: last heartbeat{from} at {}",
                    Timestamp(*last_seen).to_rfc3339()
                ),
            },
        });
        timeline::timelines(&mut tx, &entries).await?;
        sqlx::query("UPDATE deadman_switches SET last_incident_id = $1 WHERE id = $2")
            .bind(incident)
            .bind(switch_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn source_recovered(&self, s: &Source, incident: i64, now: i64) -> Result<bool> {
        let Source {
            switch_id,
            cluster,
            last_seen_at: last_seen,
            name,
            ..
        } = s;
        let mut tx = self.db.begin().await?;
        let cleared = sqlx::query(
            "UPDATE deadman_heartbeats SET incident_id = NULL \
             WHERE switch_id = $1 AND cluster = $2 AND incident_id = $3",
        )
        .bind(switch_id)
        .bind(cluster)
        .bind(incident)
        .execute(&mut *tx)
        .await?;
        if cleared.rows_affected() == 0 {
            return Ok(false);
        }
        let from = if cluster.is_empty() {
            String::new()
        } else {
            format!(" from {cluster}")
        };
        let (state,): (String,) = sqlx::query_as("SELECT state FROM incidents WHERE id = $1")
            .bind(incident)
            .fetch_one(&mut *tx)
            .await?;
        // An incident a human already resolved keeps its timeline as it is.
        if IncidentState::try_from(state)? != IncidentState::Resolved {
            timeline::timeline(
                &mut tx,
                incident,
                now,
                TimelineKind::AlertResolved,
                None,
                &format!(
                    "heartbeats of {name}{from} returned at {}",
                    Timestamp(*last_seen).to_rfc3339()
                ),
            )
            .await?;
            lifecycle::cascade(&mut tx, incident, now, "the heartbeats returned").await?;
        }
        tx.commit().await?;
        Ok(true)
    }
}
