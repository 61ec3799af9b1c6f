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
    /// Reported changes past their 90 days, forgotten.
    pub changes_forgotten: u64,
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
        report.changes_forgotten = self.forget_old_changes(now).await?;
        self.forget_old_posts(now).await?;
        // Acknowledge tokens are useless a day after expiry; keep the table small.
        sqlx::query("DELETE FROM ack_tokens WHERE expires_at < $1")
            .bind(now - 86_400)
            .execute(&self.db.pool)
            .await?;
        self.prune_events().await?;
        self.forget_old_attempts().await?;
        self.forget_phone_rows(now).await?;
        if report.incidents_resolved > 0 {
            // Resolved incidents may have queued all-clears.
            self.wake_notifier();
        }
        self.metrics
            .sweeper_pass
            .observe(started.elapsed().as_secs_f64());
        Ok(report)
    }
}
