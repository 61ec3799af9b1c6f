//! The sweeper: expires firing alerts that stopped being refreshed, resolving incidents left
//! with nothing firing, archives old resolved alerts, and watches the dead man's switches.
//! Reads the settings on every tick.

use crate::incidents::lifecycle;
use crate::{Core, Result};
use serde::Serialize;

/// An alert whose `ends_at` passed this long ago is expired, even if re-sent since.
pub const GRACE: i64 = 5 * 60;
/// Alerts handled per transaction, so one tick never holds a long write lock.
const BATCH: i64 = 500;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    pub expired: u64,
    pub incidents_resolved: u64,
    pub archived: u64,
    /// Dead man's switch sources that fell silent and got an incident, and that were heard again.
    pub deadman: crate::deadman::WatchReport,
}

impl Core {
    pub async fn sweep(&self) -> Result<SweepReport> {
        let settings = self.settings().await?;
        let now = self.now();
        let stale_before = now - settings.stale_after.as_secs();
        let mut report = SweepReport::default();
        loop {
            let mut tx = self.db.begin().await?;
            // Two index range scans, so the cost follows the expired alerts, not the firing ones.
            let due: Vec<(i64, Option<i64>, String)> = sqlx::query_as(
                "SELECT id, incident_id, alertname FROM alerts WHERE status = 'firing' AND ends_at < $1 \
                 UNION SELECT id, incident_id, alertname FROM alerts WHERE status = 'firing' AND received_at < $2 \
                 ORDER BY id LIMIT $3",
            )
            .bind(now - GRACE)
            .bind(stale_before)
            .bind(BATCH)
            .fetch_all(&mut *tx)
            .await?;
            let mut incidents = std::collections::BTreeSet::new();
            for (id, incident, alertname) in &due {
                let done = sqlx::query(
                    "UPDATE alerts SET status = 'resolved', resolution_source = 'expiry', ends_at = COALESCE(ends_at, $1) \
                     WHERE id = $2 AND status = 'firing'",
                )
                .bind(now)
                .bind(id)
                .execute(&mut *tx)
                .await?;
                report.expired += done.rows_affected();
                if let (1, Some(incident)) = (done.rows_affected(), incident) {
                    lifecycle::timeline(
                        &mut tx,
                        *incident,
                        now,
                        "alert_resolved",
                        None,
                        &format!("{alertname} expired: no longer reported"),
                    )
                    .await?;
                    incidents.insert(*incident);
                }
            }
            for incident in incidents {
                if lifecycle::cascade(
                    &mut tx,
                    incident,
                    now,
                    "every alert stopped firing (expired)",
                )
                .await?
                {
                    report.incidents_resolved += 1;
                }
            }
            tx.commit().await?;
            if (due.len() as i64) < BATCH {
                break;
            }
        }
        let archived = sqlx::query(
            "UPDATE alerts SET archived_at = $1 WHERE status = 'resolved' AND archived_at IS NULL AND COALESCE(ends_at, received_at) < $2",
        )
        .bind(now)
        .bind(now - settings.archive_after.as_secs())
        .execute(&self.db.pool)
        .await?;
        report.archived = archived.rows_affected();
        report.deadman = self.watch_switches().await?;
        // Acknowledge tokens are useless a day after expiry; keep the table small.
        sqlx::query("DELETE FROM ack_tokens WHERE expires_at < $1")
            .bind(now - 86_400)
            .execute(&self.db.pool)
            .await?;
        if report.incidents_resolved > 0 {
            // Resolved incidents may have queued all-clears.
            self.wake_notifier();
        }
        Ok(report)
    }

    /// Takes or renews the named loop's lease for `holder`; true when this replica holds it.
    /// A lease not renewed expires on its own, so a dead replica is replaced within `ttl`.
    pub async fn take_lease(&self, name: &str, holder: &str, ttl: i64) -> Result<bool> {
        let now = self.now();
        let done = sqlx::query("UPDATE leases SET holder = $1, expires_at = $2 WHERE name = $3 AND (holder = $1 OR expires_at < $4)")
            .bind(holder)
            .bind(now + ttl)
            .bind(name)
            .bind(now)
            .execute(&self.db.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}
