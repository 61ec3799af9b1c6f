//! Dead man's switches: members read them, owners change them; intake records heartbeats
//! (`heartbeats`); the sweeper opens an incident for each source that fell silent and resolves
//! it when heartbeats return (`watch`); the environment's default switch is seeded once per
//! install.

mod heartbeats;
mod pings;
mod watch;

pub(crate) use heartbeats::{heartbeat_sources, record_heartbeats};
pub use pings::Ping;
pub use watch::WatchReport;

use crate::{Actor, Core, Error, Result};
use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::deadman::{
    self, matcher::Matcher, ClusterHeartbeat, DeadmanSwitch, SwitchIncident, SwitchSpec,
    MAX_SWITCHES,
};
use klaxon_domain::ids::{SwitchId, TeamId};
use klaxon_domain::{Duration, Timestamp};
use std::collections::HashMap;
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

/// A switch with the incident it last opened, if that still exists.
#[derive(sqlx::FromRow)]
struct SwitchRow {
    id: i64,
    team_id: i64,
    name: String,
    matcher: String,
    timeout: i64,
    #[sqlx(try_from = "String")]
    severity: Severity,
    created_at: i64,
    incident_id: Option<i64>,
    incident_state: Option<String>,
    incident_created_at: Option<i64>,
    /// Set for a switch fed by pings (never shown).
    ping_key_hash: Option<String>,
    ping_started_at: Option<i64>,
}

/// One source's heartbeat row as the list shows it.
#[derive(sqlx::FromRow)]
struct Beat {
    switch_id: i64,
    cluster: String,
    last_seen_at: i64,
    failed_at: Option<i64>,
    failure: Option<String>,
}

const SELECT: &str =
    "SELECT s.id, s.team_id, s.name, s.matcher, s.timeout, s.severity, s.created_at, \
     s.ping_key_hash, s.ping_started_at, i.id AS incident_id, i.state AS incident_state, i.created_at AS incident_created_at \
     FROM deadman_switches s LEFT JOIN incidents i ON i.id = s.last_incident_id";

impl Core {
    pub async fn list_switches(&self, actor: &Actor, team_id: i64) -> Result<Vec<DeadmanSwitch>> {
        self.team_access(actor, team_id).await?;
        let rows: Vec<SwitchRow> =
            sqlx::query_as(&format!("{SELECT} WHERE s.team_id = $1 ORDER BY s.name"))
                .bind(team_id)
                .fetch_all(&self.db.pool)
                .await?;
        let beats: Vec<Beat> = sqlx::query_as(
            "SELECT h.switch_id, h.cluster, h.last_seen_at, h.failed_at, h.failure FROM deadman_heartbeats h \
             JOIN deadman_switches s ON s.id = h.switch_id WHERE s.team_id = $1 ORDER BY h.cluster",
        )
        .bind(team_id)
        .fetch_all(&self.db.pool)
        .await?;
        let mut by_switch: HashMap<i64, Vec<Beat>> = HashMap::new();
        for beat in beats {
            by_switch.entry(beat.switch_id).or_default().push(beat);
        }
        rows.into_iter()
            .map(|r| {
                let beats = by_switch.remove(&r.id).unwrap_or_default();
                self.switch(r, beats)
            })
            .collect()
    }

    pub(crate) async fn get_switch(&self, team_id: i64, id: i64) -> Result<DeadmanSwitch> {
        let row: SwitchRow =
            sqlx::query_as(&format!("{SELECT} WHERE s.team_id = $1 AND s.id = $2"))
                .bind(team_id)
                .bind(id)
                .fetch_optional(&self.db.pool)
                .await?
                .ok_or(Error::NotFound)?;
        let beats: Vec<Beat> = sqlx::query_as(
            "SELECT switch_id, cluster, last_seen_at, failed_at, failure FROM deadman_heartbeats \
             WHERE switch_id = $1 ORDER BY cluster",
        )
        .bind(id)
        .fetch_all(&self.db.pool)
        .await?;
        self.switch(row, beats)
    }

    /// The wire shape, with every status from `deadman::status`, the rule the sweeper uses.
    fn switch(&self, r: SwitchRow, beats: Vec<Beat>) -> Result<DeadmanSwitch> {
        let now = self.now();
        let timeout = Duration::seconds(r.timeout);
        let clusters: Vec<ClusterHeartbeat> = beats
            .iter()
            .map(|b| ClusterHeartbeat {
                cluster: Some(b.cluster.clone()).filter(|c| !c.is_empty()),
                status: deadman::status(Some(b.last_seen_at), b.failed_at.is_some(), timeout, now),
                last_heartbeat_at: Timestamp(b.last_seen_at),
            })
            .collect();
        // The left join's columns are all present or all null.
        let last_incident = match (r.incident_id, r.incident_state, r.incident_created_at) {
            (Some(id), Some(state), Some(created_at)) => Some(SwitchIncident {
                id,
                state: IncidentState::try_from(state)?,
                created_at: Timestamp(created_at),
            }),
            _ => None,
        };
        Ok(DeadmanSwitch {
            id: r.id,
            team_id: r.team_id,
            name: r.name,
            matcher: r.matcher,
            pings: r.ping_key_hash.is_some(),
            ping_url: None,
            running_since: r.ping_started_at.map(Timestamp),
            failure: beats.iter().find_map(|b| b.failure.clone()),
            timeout,
            severity: r.severity,
            status: deadman::overall(clusters.iter().map(|c| c.status)),
            last_heartbeat_at: beats.iter().map(|b| b.last_seen_at).max().map(Timestamp),
            last_incident,
            clusters: if clusters.len() > 1 {
                clusters
            } else {
                Vec::new()
            },
            created_at: Timestamp(r.created_at),
        })
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
        let key = spec.pings.then(crate::secrets::new_token);
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO deadman_switches (team_id, name, matcher, timeout, severity, created_at, ping_key_hash) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(team_id)
        .bind(spec.name.as_str())
        .bind(&spec.matcher)
        .bind(spec.timeout.as_secs())
        .bind(spec.severity.as_str())
        .bind(self.now())
        .bind(key.as_deref().map(crate::secrets::hash_token))
        .fetch_one(&mut *tx)
        .await
        .map_err(name_taken(&spec.name))?;
        tx.commit().await?;
        self.switch_with_url(team_id, id, key).await
    }

    /// Replaces a switch's settings in place (same id). A new matcher forgets the heartbeats
    /// heard under the old one: they may not satisfy it, and a source that no longer exists
    /// (a removed cluster) stops counting as dead. Turning a switch to pings makes its URL
    /// (answered this once), turning it back to alerts forgets the URL; either forgets the
    /// heartbeats too.
    pub async fn update_switch(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: SwitchId,
        spec: &SwitchSpec,
    ) -> Result<DeadmanSwitch> {
        let (TeamId(team_id), SwitchId(id)) = (team_id, id);
        self.require_team_owner(actor, team_id).await?;
        let spec = checked(spec)?;
        let mut tx = self.db.begin().await?;
        let old: Option<(String, Option<String>)> = sqlx::query_as(
            "SELECT matcher, ping_key_hash FROM deadman_switches WHERE id = $1 AND team_id = $2",
        )
        .bind(id)
        .bind(team_id)
        .fetch_optional(&mut *tx)
        .await?;
        let (old_matcher, old_hash) = old.ok_or(Error::NotFound)?;
        let key = (spec.pings && old_hash.is_none()).then(crate::secrets::new_token);
        let hash = match &key {
            Some(key) => Some(crate::secrets::hash_token(key)),
            None if spec.pings => old_hash.clone(),
            None => None,
        };
        sqlx::query(
            "UPDATE deadman_switches SET name = $1, matcher = $2, timeout = $3, severity = $4, \
             ping_key_hash = $5, ping_started_at = CASE WHEN $6 THEN ping_started_at END WHERE id = $7",
        )
        .bind(spec.name.as_str())
        .bind(&spec.matcher)
        .bind(spec.timeout.as_secs())
        .bind(spec.severity.as_str())
        .bind(&hash)
        .bind(spec.pings)
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(name_taken(&spec.name))?;
        if old_matcher != spec.matcher || old_hash.is_some() != spec.pings {
            sqlx::query("DELETE FROM deadman_heartbeats WHERE switch_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        self.switch_with_url(team_id, id, key).await
    }

    /// The switch, with its heartbeat URL when `key` was just made.
    async fn switch_with_url(
        &self,
        team_id: i64,
        id: i64,
        key: Option<String>,
    ) -> Result<DeadmanSwitch> {
        let mut switch = self.get_switch(team_id, id).await?;
        switch.ping_url = key.map(|k| format!("{}/api/heartbeat/{k}", self.config.public_url));
        Ok(switch)
    }

    /// Stops the watching. An incident the switch opened stays open for a human to resolve.
    pub async fn delete_switch(&self, actor: &Actor, team_id: TeamId, id: SwitchId) -> Result<()> {
        let (TeamId(team_id), SwitchId(id)) = (team_id, id);
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
        .bind(spec.name.as_str())
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
}

/// The whole check of a switch's settings, matcher syntax included.
fn checked(spec: &SwitchSpec) -> Result<SwitchSpec> {
    let spec = spec.validate().map_err(Error::Invalid)?;
    if !spec.pings {
        Matcher::parse(&spec.matcher).map_err(Error::Invalid)?;
    }
    Ok(spec)
}

fn name_taken(name: &str) -> impl FnOnce(sqlx::Error) -> Error {
    Error::unique(format!(
        "this team already has a dead man's switch named “{name}”"
    ))
}
