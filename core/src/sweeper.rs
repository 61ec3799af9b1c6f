//! The sweeper: expires firing alerts that stopped being refreshed, resolving incidents left
//! with nothing firing, archives old resolved alerts, and watches the dead man's switches.
//! Reads the settings on every tick.

use crate::incidents::lifecycle;
use crate::timeline::{self, Entry};
use crate::{Core, Result};
use klaxon_domain::incident::TimelineKind;
use serde::Serialize;

/// How often the sweeper runs.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(30);
/// A lease not renewed for this long (seconds) passes to another replica.
pub const LEASE_TTL: i64 = 8;
/// How often every replica takes or renews the leases, sweeping or not: the holder keeps its
/// lease through a long sweep, and a survivor takes a dead holder's within `LEASE_TTL` + 1 +
/// this (11 s).
pub const LEASE_RENEW: std::time::Duration = std::time::Duration::from_secs(2);
/// The loops that run on one replica at a time.
pub const LEASES: [&str; 1] = ["sweeper"];

/// A loop's lease row: who holds it and until when.
#[derive(Debug, Clone, Default, sqlx::FromRow)]
pub struct Lease {
    pub name: String,
    pub holder: String,
    pub expires_at: i64,
}

/// Seconds since a lease was last taken or renewed; `None` when it never was.
pub fn lease_age(expires_at: i64, now: i64) -> Option<i64> {
    (expires_at > 0).then(|| now - (expires_at - LEASE_TTL))
}

/// An alert whose `ends_at` passed this long ago is expired, even if re-sent since.
pub const GRACE: i64 = 5 * 60;
/// Alerts handled per transaction: a few statements each, so a tick's fixed cost stays small,
/// and a transaction holds the writer for tens of milliseconds at most.
const BATCH: i64 = 1000;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    pub expired: u64,
    pub incidents_resolved: u64,
    pub archived: u64,
    /// Dead man's switch sources that fell silent and got an incident, and that were heard again.
    pub deadman: crate::deadman::WatchReport,
    /// Hand-off notices queued.
    pub handoffs: u64,
}

impl Core {
    pub async fn sweep(&self) -> Result<SweepReport> {
        let started = std::time::Instant::now();
        let settings = self.settings().await?;
        let now = self.now();
        let stale_before = now - settings.stale_after.as_secs();
        let mut report = SweepReport::default();
        loop {
            let mut tx = self.db.begin().await?;
            // Two index range scans, so the cost follows the expired alerts, not the firing ones.
            let due: Vec<(i64,)> = sqlx::query_as(
                "SELECT id FROM alerts WHERE status = 'firing' AND ends_at < $1 \
                 UNION SELECT id FROM alerts WHERE status = 'firing' AND received_at < $2 \
                 ORDER BY id LIMIT $3",
            )
            .bind(now - GRACE)
            .bind(stale_before)
            .bind(BATCH)
            .fetch_all(&mut *tx)
            .await?;
            if due.is_empty() {
                tx.commit().await?;
                break;
            }
            // The whole batch in one conditional update: an alert refreshed or resolved
            // meanwhile is no longer firing-and-due and is left alone.
            let ids: Vec<i64> = due.iter().map(|r| r.0).collect();
            let mut expired: Vec<(i64, Option<i64>, String)> = tx
                .fetch_in(
                    "UPDATE alerts SET status = 'resolved', resolution_source = 'expiry', ends_at = COALESCE(ends_at, $1) \
                     WHERE status = 'firing' AND (ends_at < $2 OR received_at < $3) AND id IN ({ids}) \
                     RETURNING id, incident_id, alertname",
                    &[now.into(), (now - GRACE).into(), stale_before.into()],
                    &ids,
                )
                .await?;
            expired.sort_unstable();
            report.expired += expired.len() as u64;
            let entries: Vec<Entry> = expired
                .iter()
                .filter_map(|(_, incident, alertname)| {
                    Some(Entry {
                        incident_id: (*incident)?,
                        at: now,
                        kind: TimelineKind::AlertResolved,
                        actor_id: None,
                        text: format!("{alertname} expired: no longer reported"),
                    })
                })
                .collect();
            timeline::timelines(&mut tx, &entries).await?;
            let mut incidents: Vec<i64> = expired.iter().filter_map(|r| r.1).collect();
            incidents.sort_unstable();
            incidents.dedup();
            let resolved = lifecycle::cascade_many(
                &mut tx,
                &incidents,
                now,
                "every alert stopped firing (expired)",
            )
            .await?;
            report.incidents_resolved += resolved.len() as u64;
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
        report.handoffs = self.queue_handoffs().await?;
        // Acknowledge tokens are useless a day after expiry; keep the table small.
        sqlx::query("DELETE FROM ack_tokens WHERE expires_at < $1")
            .bind(now - 86_400)
            .execute(&self.db.pool)
            .await?;
        self.prune_events().await?;
        self.forget_old_attempts().await?;
        if report.incidents_resolved > 0 {
            // Resolved incidents may have queued all-clears.
            self.wake_notifier();
        }
        self.metrics
            .sweeper_pass
            .observe(started.elapsed().as_secs_f64());
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

    /// Every loop's lease, in one read (the metrics and the health check share it).
    pub async fn leases(&self) -> Result<Vec<Lease>> {
        Ok(
            sqlx::query_as("SELECT name, holder, expires_at FROM leases ORDER BY name")
                .fetch_all(&self.db.pool)
                .await?,
        )
    }

    /// Gives up `holder`'s leases and its claims on unsent pages, so another replica takes
    /// over at once instead of after they expire (a rolling update, a stop).
    pub async fn release(&self, holder: &str) -> Result<()> {
        sqlx::query("UPDATE leases SET expires_at = 0 WHERE holder = $1")
            .bind(holder)
            .execute(&self.db.pool)
            .await?;
        sqlx::query(
            "UPDATE pages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND state = 'pending'",
        )
        .bind(holder)
        .execute(&self.db.pool)
        .await?;
        sqlx::query(
            "UPDATE channel_posts SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND state = 'pending'",
        )
        .bind(holder)
        .execute(&self.db.pool)
        .await?;
        Ok(())
    }
}
