//! Dead man's switches: members read them, owners change them; intake records heartbeats; the
//! sweeper opens an incident for each source that fell silent and resolves it when heartbeats
//! return; the environment's default switch is seeded once per install.

use crate::db::Tx;
use crate::incidents::lifecycle::{self, Group};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::alerting::{AlertStatus, IncidentState, IncomingAlert, Severity};
use klaxon_domain::deadman::{
    self, matcher::Matcher, ClusterHeartbeat, DeadmanSwitch, SwitchIncident, SwitchSpec,
    SwitchStatus, CLUSTER_LABEL, MAX_SWITCHES,
};
use klaxon_domain::{Duration, Timestamp};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// The settings row that records the one seeding of the environment's default switch.
pub const SEEDED_KEY: &str = "deadman_seeded_at";

/// Parsed matchers by their text: intake matches every alert against its team's switches, and
/// parsing (with its regular expressions) on every payload would cost more than the match.
#[derive(Default)]
pub struct MatcherCache(Mutex<HashMap<String, Arc<Matcher>>>);

impl MatcherCache {
    fn get(&self, text: &str) -> Option<Arc<Matcher>> {
        let mut cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = cache.get(text) {
            return Some(m.clone());
        }
        // Stored matchers were checked when saved; one that no longer parses watches nothing.
        let m = Arc::new(Matcher::parse(text).ok()?);
        if cache.len() >= 10_000 {
            cache.clear();
        }
        cache.insert(text.to_string(), m.clone());
        Some(m)
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WatchReport {
    /// Sources found dead that got an incident.
    pub opened: u64,
    /// Sources whose heartbeats returned, their incidents resolved.
    pub recovered: u64,
}

/// (switch, team, name, matcher, timeout, severity, created_at, last incident, its state, its created_at)
type SwitchRow = (
    i64,
    i64,
    String,
    String,
    i64,
    String,
    i64,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

const SELECT: &str = "SELECT s.id, s.team_id, s.name, s.matcher, s.timeout, s.severity, s.created_at, \
     i.id, i.state, i.created_at FROM deadman_switches s LEFT JOIN incidents i ON i.id = s.last_incident_id";

impl Core {
    pub async fn list_switches(&self, actor: &Actor, team_id: i64) -> Result<Vec<DeadmanSwitch>> {
        self.require_team_member(actor, team_id).await?;
        let rows: Vec<SwitchRow> =
            sqlx::query_as(&format!("{SELECT} WHERE s.team_id = $1 ORDER BY s.name"))
                .bind(team_id)
                .fetch_all(&self.db.pool)
                .await?;
        let beats: Vec<(i64, String, i64)> = sqlx::query_as(
            "SELECT h.switch_id, h.cluster, h.last_seen_at FROM deadman_heartbeats h \
             JOIN deadman_switches s ON s.id = h.switch_id WHERE s.team_id = $1 ORDER BY h.cluster",
        )
        .bind(team_id)
        .fetch_all(&self.db.pool)
        .await?;
        let mut by_switch: HashMap<i64, Vec<(String, i64)>> = HashMap::new();
        for (id, cluster, at) in beats {
            by_switch.entry(id).or_default().push((cluster, at));
        }
        Ok(rows
            .into_iter()
            .map(|r| {
                let beats = by_switch.remove(&r.0).unwrap_or_default();
                self.switch(r, beats)
            })
            .collect())
    }

    async fn get_switch(&self, team_id: i64, id: i64) -> Result<DeadmanSwitch> {
        let row: SwitchRow =
            sqlx::query_as(&format!("{SELECT} WHERE s.team_id = $1 AND s.id = $2"))
                .bind(team_id)
                .bind(id)
                .fetch_optional(&self.db.pool)
                .await?
                .ok_or(Error::NotFound)?;
        let beats: Vec<(String, i64)> = sqlx::query_as(
            "SELECT cluster, last_seen_at FROM deadman_heartbeats WHERE switch_id = $1 ORDER BY cluster",
        )
        .bind(id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(self.switch(row, beats))
    }

    /// The wire shape, with every status from `deadman::status`, the rule the sweeper uses.
    fn switch(&self, r: SwitchRow, beats: Vec<(String, i64)>) -> DeadmanSwitch {
        let now = self.now();
        let timeout = Duration::seconds(r.4);
        let clusters: Vec<ClusterHeartbeat> = beats
            .iter()
            .map(|(cluster, at)| ClusterHeartbeat {
                cluster: Some(cluster.clone()).filter(|c| !c.is_empty()),
                status: deadman::status(Some(*at), timeout, now),
                last_heartbeat_at: Timestamp(*at),
            })
            .collect();
        let last_incident = match (r.7, r.8.as_deref().and_then(IncidentState::parse), r.9) {
            (Some(id), Some(state), Some(created_at)) => Some(SwitchIncident {
                id,
                state,
                created_at: Timestamp(created_at),
            }),
            _ => None,
        };
        DeadmanSwitch {
            id: r.0,
            team_id: r.1,
            name: r.2,
            matcher: r.3,
            timeout,
            severity: Severity::parse(&r.5).unwrap_or(Severity::Critical),
            status: deadman::overall(clusters.iter().map(|c| c.status)),
            last_heartbeat_at: beats.iter().map(|b| b.1).max().map(Timestamp),
            last_incident,
            clusters: if clusters.len() > 1 {
                clusters
            } else {
                Vec::new()
            },
            created_at: Timestamp(r.6),
        }
    }

    pub async fn create_switch(
        &self,
        actor: &Actor,
        team_id: i64,
        spec: &SwitchSpec,
    ) -> Result<DeadmanSwitch> {
        self.require_team_owner(actor, team_id).await?;
        let spec = checked(spec)?;
        let mut tx = self.db.begin().await?;
        // The team row is the lock that makes the count and the insert one step on PostgreSQL.
        sqlx::query("UPDATE teams SET name = name WHERE id = $1")
            .bind(team_id)
            .execute(&mut *tx)
            .await?;
        let (count,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM deadman_switches WHERE team_id = $1")
                .bind(team_id)
                .fetch_one(&mut *tx)
                .await?;
        if count >= MAX_SWITCHES {
            return Err(Error::Invalid(format!(
                "a team may have at most {MAX_SWITCHES} dead man's switches"
            )));
        }
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO deadman_switches (team_id, name, matcher, timeout, severity, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(team_id)
        .bind(&spec.name)
        .bind(&spec.matcher)
        .bind(spec.timeout.as_secs())
        .bind(spec.severity.as_str())
        .bind(self.now())
        .fetch_one(&mut *tx)
        .await
        .map_err(name_taken(&spec.name))?;
        tx.commit().await?;
        self.get_switch(team_id, id).await
    }

    /// Replaces a switch's settings in place (same id). A new matcher forgets the heartbeats
    /// heard under the old one: they may not satisfy it, and a source that no longer exists
    /// (a removed cluster) stops counting as dead.
    pub async fn update_switch(
        &self,
        actor: &Actor,
        team_id: i64,
        id: i64,
        spec: &SwitchSpec,
    ) -> Result<DeadmanSwitch> {
        self.require_team_owner(actor, team_id).await?;
        let spec = checked(spec)?;
        let mut tx = self.db.begin().await?;
        let old: Option<(String,)> =
            sqlx::query_as("SELECT matcher FROM deadman_switches WHERE id = $1 AND team_id = $2")
                .bind(id)
                .bind(team_id)
                .fetch_optional(&mut *tx)
                .await?;
        let (old_matcher,) = old.ok_or(Error::NotFound)?;
        sqlx::query(
            "UPDATE deadman_switches SET name = $1, matcher = $2, timeout = $3, severity = $4 WHERE id = $5",
        )
        .bind(&spec.name)
        .bind(&spec.matcher)
        .bind(spec.timeout.as_secs())
        .bind(spec.severity.as_str())
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(name_taken(&spec.name))?;
        if old_matcher != spec.matcher {
            sqlx::query("DELETE FROM deadman_heartbeats WHERE switch_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        self.get_switch(team_id, id).await
    }

    /// Stops the watching. An incident the switch opened stays open for a human to resolve.
    pub async fn delete_switch(&self, actor: &Actor, team_id: i64, id: i64) -> Result<()> {
        self.require_team_owner(actor, team_id).await?;
        let mut tx = self.db.begin().await?;
        let done = sqlx::query("DELETE FROM deadman_switches WHERE id = $1 AND team_id = $2")
            .bind(id)
            .bind(team_id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound);
        }
        sqlx::query("DELETE FROM deadman_heartbeats WHERE switch_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await
    }

    /// Creates the environment's default switch in every team that has none, once per install:
    /// the settings row `deadman_seeded_at` is written in the same transaction, so a later start
    /// (or a second replica starting at once) never seeds again.
    pub(crate) async fn seed_switches(&self) -> Result<()> {
        let Some(spec) = &self.config.deadman_seed else {
            return Ok(());
        };
        let spec = checked(spec)?;
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let marked = sqlx::query(
            "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
        )
        .bind(SEEDED_KEY)
        .bind(now.to_string())
        .execute(&mut *tx)
        .await?;
        if marked.rows_affected() == 0 {
            return Ok(());
        }
        let seeded = sqlx::query(
            "INSERT INTO deadman_switches (team_id, name, matcher, timeout, severity, created_at) \
             SELECT t.id, $1, $2, $3, $4, $5 FROM teams t \
             WHERE NOT EXISTS (SELECT 1 FROM deadman_switches d WHERE d.team_id = t.id)",
        )
        .bind(&spec.name)
        .bind(&spec.matcher)
        .bind(spec.timeout.as_secs())
        .bind(spec.severity.as_str())
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        tracing::info!(
            teams = seeded.rows_affected(),
            "dead man's switch seeded from the environment"
        );
        Ok(())
    }

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
            "SELECT h.switch_id, h.cluster, h.last_seen_at, h.incident_id, s.team_id, s.name, s.timeout, s.severity \
             FROM deadman_heartbeats h JOIN deadman_switches s ON s.id = h.switch_id ORDER BY h.switch_id, h.cluster",
        )
        .fetch_all(&self.db.pool)
        .await?;
        let mut report = WatchReport::default();
        for source in rows {
            let status = deadman::status(Some(source.2), Duration::seconds(source.6), now);
            match (status, source.3) {
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
        let (switch_id, cluster, last_seen, _, team_id, name, timeout, severity) = s;
        let timeout = Duration::seconds(*timeout);
        let mut labels = BTreeMap::from([
            ("alertname".to_string(), name.clone()),
            ("severity".to_string(), severity.clone()),
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
                format!("no heartbeat{from} for {timeout}"),
            )]),
            starts_at: now,
            ends_at: None,
        };
        let no_labels = BTreeMap::new();
        let group = Group {
            key: &key,
            labels: &no_labels,
        };
        let mut tx = self.db.begin().await?;
        let (incident, _) = lifecycle::open_or_join(&mut tx, *team_id, &group, &alert, now).await?;
        let claimed = sqlx::query(
            "UPDATE deadman_heartbeats SET incident_id = $1 \
             WHERE switch_id = $2 AND cluster = $3 AND last_seen_at = $4 AND incident_id IS NULL",
        )
        .bind(incident)
        .bind(switch_id)
        .bind(cluster)
        .bind(last_seen)
        .execute(&mut *tx)
        .await?;
        if claimed.rows_affected() == 0 {
            // A heartbeat arrived since the read: dropping the transaction undoes the incident.
            return Ok(false);
        }
        lifecycle::timeline(
            &mut tx,
            incident,
            now,
            "alert_firing",
            None,
            &format!(
                "dead man's switch {name}: last heartbeat{from} at {}",
                Timestamp(*last_seen).to_rfc3339()
            ),
        )
        .await?;
        sqlx::query("UPDATE deadman_switches SET last_incident_id = $1 WHERE id = $2")
            .bind(incident)
            .bind(switch_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn source_recovered(&self, s: &Source, incident: i64, now: i64) -> Result<bool> {
        let (switch_id, cluster, last_seen, _, _, name, _, _) = s;
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
        if state != IncidentState::Resolved.as_str() {
            lifecycle::timeline(
                &mut tx,
                incident,
                now,
                "alert_resolved",
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

/// (switch, cluster, last seen, open incident, team, name, timeout, severity)
type Source = (i64, String, i64, Option<i64>, i64, String, i64, String);

/// The whole check of a switch's settings, matcher syntax included.
fn checked(spec: &SwitchSpec) -> Result<SwitchSpec> {
    let spec = spec.validate().map_err(Error::Invalid)?;
    Matcher::parse(&spec.matcher).map_err(Error::Invalid)?;
    Ok(spec)
}

fn name_taken(name: &str) -> impl FnOnce(sqlx::Error) -> Error {
    Error::unique(format!(
        "this team already has a dead man's switch named “{name}”"
    ))
}

/// Inside intake's transaction: which of the payload's firing alerts are heartbeats of the
/// team's switches. Heartbeats are stored like any alert but never open an incident: the
/// always-firing Watchdog must not page anyone.
pub(crate) async fn heartbeat_sources<'a>(
    core: &Core,
    tx: &mut Tx,
    team_id: i64,
    alerts: impl Iterator<Item = &'a IncomingAlert>,
) -> Result<HashMap<String, Vec<(i64, String)>>> {
    let switches: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, matcher FROM deadman_switches WHERE team_id = $1")
            .bind(team_id)
            .fetch_all(&mut **tx)
            .await?;
    let mut out: HashMap<String, Vec<(i64, String)>> = HashMap::new();
    if switches.is_empty() {
        return Ok(out);
    }
    let matchers: Vec<(i64, Arc<Matcher>)> = switches
        .into_iter()
        .filter_map(|(id, text)| Some((id, core.matchers.get(&text)?)))
        .collect();
    for alert in alerts.filter(|a| a.status == AlertStatus::Firing) {
        let cluster = alert.labels.get(CLUSTER_LABEL).cloned().unwrap_or_default();
        for (id, m) in &matchers {
            if m.matches(&alert.labels) {
                out.entry(alert.fingerprint.clone())
                    .or_default()
                    .push((*id, cluster.clone()));
            }
        }
    }
    Ok(out)
}

/// Records heartbeats heard in one payload, in (switch, cluster) order so concurrent payloads
/// lock rows in one order. The time only moves forward.
pub(crate) async fn record_heartbeats(
    tx: &mut Tx,
    sources: &BTreeSet<(i64, String)>,
    now: i64,
) -> Result<()> {
    for (switch_id, cluster) in sources {
        sqlx::query(
            "INSERT INTO deadman_heartbeats (switch_id, cluster, first_seen_at, last_seen_at) VALUES ($1, $2, $3, $3) \
             ON CONFLICT (switch_id, cluster) DO UPDATE SET last_seen_at = $3 WHERE deadman_heartbeats.last_seen_at < $3",
        )
        .bind(switch_id)
        .bind(cluster)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}
