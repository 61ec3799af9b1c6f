//! Heartbeats, inside intake's transaction: which firing alerts match a switch, and when each
//! (switch, cluster) source was last heard.

use crate::db::Tx;
use crate::{Core, Result};
use klaxon_domain::alerting::{AlertStatus, IncomingAlert};
use klaxon_domain::deadman::{matcher::Matcher, CLUSTER_LABEL};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// Inside intake's transaction: which of the payload's firing alerts are heartbeats of the
/// team's switches. Heartbeats are stored like any alert but never open an incident: the
/// always-firing Watchdog must not page anyone.
pub(crate) async fn heartbeat_sources<'a>(
    core: &Core,
    tx: &mut Tx,
    team_id: i64,
    alerts: impl Iterator<Item = &'a IncomingAlert>,
) -> Result<HashMap<String, Vec<(i64, String)>>> {
    let switches: Vec<(i64, String)> = sqlx::query_as(
        "SELECT id, matcher FROM deadman_switches WHERE team_id = $1 AND ping_key_hash IS NULL",
    )
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
