//! The notifier pass: resume ended snoozes, enter due ladder levels, queue due reminders
//! (`due`), then deliver due pages (`delivery`) — escalation runs before delivery, so a due
//! level is paged on the same pass. Every step claims its rows with a conditional update, so
//! any number of replicas may run passes at once and each page is still sent once.

use crate::{Core, Error, Result};
use serde::Serialize;

/// The safety-net interval; a queued page wakes the notifier at once. Short, so a page whose
/// replica died is taken soon after its claim lapses (`claim`), and a retry goes when due; an
/// idle pass is a few indexed reads outside any transaction.
pub const TICK: std::time::Duration = std::time::Duration::from_secs(2);
/// A replica whose notifier has not finished a pass for this long (seconds) is degraded: a
/// pass may wait on a slow push service for a while, so this is not a small multiple of `TICK`.
pub const STALLED_AFTER: i64 = 60;
/// Rows claimed per transaction: a few statements each, so a pass's fixed cost stays small,
/// and a transaction holds its locks for tens of milliseconds at most.
pub(super) const BATCH: i64 = 1000;
/// Batches per phase in one pass; the rest waits for the next pass.
const MAX_BATCHES: usize = 20;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NotifyReport {
    pub resumed: u64,
    pub escalated: u64,
    pub reminded: u64,
    pub sent: u64,
    pub failed: u64,
    pub cancelled: u64,
    /// Held for a maintenance window.
    pub held: u64,
}

impl NotifyReport {
    pub fn is_idle(&self) -> bool {
        *self == NotifyReport::default()
    }
}

/// What one phase's batch did: how many rows it acted on, and whether it came back full
/// (more may be due).
pub(super) struct Batch {
    pub done: u64,
    pub full: bool,
}

impl Core {
    /// One notifier pass. `holder` names this replica in page claims.
    pub async fn notify_tick(&self, holder: &str) -> Result<NotifyReport> {
        self.notify_pass(holder, true).await
    }

    /// A notifier pass, with the due work (`schedule_due`) or delivery alone.
    pub async fn notify_pass(&self, holder: &str, due: bool) -> Result<NotifyReport> {
        let started = std::time::Instant::now();
        let mut report = match due {
            true => self.schedule_due().await?,
            false => NotifyReport::default(),
        };
        let delivered = self.deliver_pending(holder).await?;
        if self
            .phone_reports_waiting
            .load(std::sync::atomic::Ordering::Acquire)
        {
            self.apply_phone_reports().await?;
        }
        report.sent = delivered.sent;
        report.failed = delivered.failed;
        report.cancelled = delivered.cancelled;
        report.held = delivered.held;
        self.metrics
            .notifier_pass
            .observe(started.elapsed().as_secs_f64());
        self.watch.notifier_passed(self.now());
        Ok(report)
    }

    /// The first half of a pass: resume ended snoozes, enter due ladder steps and queue due
    /// reminders. Each phase reads `BATCH` rows at a time and goes on while batches come back full.
    pub async fn schedule_due(&self) -> Result<NotifyReport> {
        Ok(NotifyReport {
            resumed: batches(|| retry_lost_race(|| self.resume_snoozes())).await?,
            escalated: batches(|| retry_lost_race(|| self.escalate_due())).await?,
            reminded: batches(|| retry_lost_race(|| self.remind_due())).await?,
            ..NotifyReport::default()
        })
    }

    /// The second half of a pass: deliver every due page.
    pub async fn deliver_pending(&self, holder: &str) -> Result<NotifyReport> {
        Ok(self.deliver_pending_timed(holder).await?.0)
    }

    /// `deliver_pending`, also returning the time spent waiting on the push service, which
    /// bounds delivery however little the rest costs (`klaxon bench ticks` reports it apart).
    pub async fn deliver_pending_timed(
        &self,
        holder: &str,
    ) -> Result<(NotifyReport, std::time::Duration)> {
        let mut report = NotifyReport::default();
        let mut publishing = std::time::Duration::ZERO;
        for _ in 0..MAX_BATCHES {
            let done = self.deliver_due(holder).await?;
            report.sent += done.sent;
            report.failed += done.failed;
            report.cancelled += done.cancelled;
            report.held += done.held;
            publishing += done.publishing;
            if !done.more {
                return Ok((report, publishing));
            }
        }
        // Still more: the next pass continues at once.
        self.wake_delivery();
        Ok((report, publishing))
    }

    /// The ids of up to `BATCH` due rows (`$1` the bound, `$2` the limit), read outside any
    /// transaction so an idle pass never takes the writer; the claim that follows re-checks
    /// the same conditions.
    pub(super) async fn due_ids(&self, sql: &str, bound: i64) -> Result<Vec<i64>> {
        let rows: Vec<(i64,)> = sqlx::query_as(sql)
            .bind(bound)
            .bind(BATCH)
            .fetch_all(&self.db.pool)
            .await?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }
}

/// Runs a phase's batches until one comes back short (at most `MAX_BATCHES`); returns the
/// rows acted on.
async fn batches<F, Fut>(batch: F) -> Result<u64>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Batch>>,
{
    let mut done = 0;
    for _ in 0..MAX_BATCHES {
        let b = batch().await?;
        done += b.done;
        if !b.full {
            break;
        }
    }
    Ok(done)
}

/// Runs a phase again when its transaction lost a race: two replicas claiming overlapping
/// batches can deadlock on PostgreSQL, and the loser's rollback leaves nothing half done.
async fn retry_lost_race<T, F, Fut>(phase: F) -> Result<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut attempt = 0;
    loop {
        match phase().await {
            Err(Error::Busy) if attempt < 3 => attempt += 1,
            result => return result,
        }
    }
}
