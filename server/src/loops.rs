//! Schedules the background loops. Each is a tick function in `core`.
//! - The sweeper runs every `SWEEP_EVERY` on one replica at a time: a lease row decides which,
//!   taken or renewed every `LEASE_RENEW` (through a long sweep too), so a dead holder is
//!   replaced within seconds.
//! - The notifier runs on every replica, woken at once when this replica queues a page and
//!   every `TICK` otherwise (for pages queued elsewhere or whose claim lapsed, retries, reminders
//!   and the ladder). Its claims are conditional updates, so replicas running it together still
//!   send each page once.
//!
//! - The event feed runs on every replica: it reads the `events` rows other transactions wrote
//!   and hands them to this replica's live streams (`core::events`).
//!
//! On stop, each loop finishes the pass it is in, then the replica gives up its lease and its
//! page claims, so another replica takes over at once.

use klaxon_core::paging::notifier::TICK;
use klaxon_core::sweeper::{LEASE_RENEW, LEASE_TTL, SWEEP_EVERY};
use klaxon_core::Core;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The running loops of this replica.
pub struct Loops {
    core: Core,
    stop: watch::Sender<bool>,
    passes: Vec<JoinHandle<()>>,
    discovery: Option<JoinHandle<()>>,
}

/// Starts the sweeper, the notifier and, with single sign-on, discovery of the provider.
pub fn spawn(core: Core) -> Loops {
    let discovery = core.sso.clone().map(|sso| {
        let clock = core.clock.clone();
        tokio::spawn(async move { sso.keep_discovering(&*clock).await })
    });
    let (stop, stopped) = watch::channel(false);
    let notifier = spawn_notifier(core.clone(), core.holder.to_string(), stopped.clone());
    let sweeper = spawn_sweeper(core.clone(), stopped.clone());
    let feed = {
        let core = core.clone();
        tokio::spawn(async move { core.run_event_feed(stopped).await })
    };
    Loops {
        core,
        stop,
        passes: vec![notifier, sweeper, feed],
        discovery,
    }
}

impl Loops {
    /// Lets each loop finish its pass (at most `within`), then releases the lease and claims.
    pub async fn stop(self, within: Duration) {
        let _ = self.stop.send(true);
        if let Some(d) = self.discovery {
            d.abort();
        }
        let finished = async {
            for pass in self.passes {
                let _ = pass.await;
            }
        };
        if tokio::time::timeout(within, finished).await.is_err() {
            tracing::warn!("a loop did not finish its pass in time");
        }
        match self.core.release(&self.core.holder).await {
            Ok(()) => tracing::info!("leases and page claims released"),
            Err(e) => tracing::warn!(error = %e, "could not release the leases"),
        }
    }
}

fn spawn_sweeper(core: Core, mut stopped: watch::Receiver<bool>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(core.clock.tick(LEASE_RENEW));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_sweep: Option<tokio::time::Instant> = None;
        loop {
            tokio::select! {
                _ = every.tick() => {}
                _ = stopped.changed() => return,
            }
            match core.take_lease("sweeper", &core.holder, LEASE_TTL).await {
                Ok(true) => {}
                Ok(false) => {
                    last_sweep = None;
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "sweeper lease");
                    continue;
                }
            }
            if last_sweep.is_some_and(|t| t.elapsed() < core.clock.tick(SWEEP_EVERY)) {
                continue;
            }
            last_sweep = Some(tokio::time::Instant::now());
            // The lease is renewed while the sweep runs; every step of a sweep is a
            // conditional update, so a sweep that outlives the lease does no harm.
            let renewing = async {
                loop {
                    tokio::time::sleep(core.clock.tick(LEASE_RENEW)).await;
                    if let Err(e) = core.take_lease("sweeper", &core.holder, LEASE_TTL).await {
                        tracing::warn!(error = %e, "sweeper lease");
                    }
                }
            };
            let swept = tokio::select! {
                r = core.sweep() => r,
                () = renewing => unreachable!("renews until the sweep ends"),
            };
            match swept {
                Ok(r) if r != Default::default() => tracing::info!(
                    expired = r.expired,
                    resolved = r.incidents_resolved,
                    archived = r.archived,
                    "sweep"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "sweep failed"),
            }
        }
    })
}

/// Runs a notifier pass whenever woken, and at least every `TICK`, until `stopped` changes,
/// on the database's paging lane.
pub fn spawn_notifier(
    core: Core,
    holder: String,
    mut stopped: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let core = core.paging_lane();
    tokio::spawn(async move {
        loop {
            let started = tokio::time::Instant::now();
            let pass = core.notify_tick(&holder).await;
            // Many pages in one pass: a storm, whose pages are better sent in batches.
            let busy = matches!(&pass, Ok(r) if r.sent + r.failed + r.cancelled >= BUSY_PASS);
            match pass {
                Ok(r) if !r.is_idle() => tracing::info!(
                    resumed = r.resumed,
                    escalated = r.escalated,
                    reminded = r.reminded,
                    sent = r.sent,
                    failed = r.failed,
                    cancelled = r.cancelled,
                    "notifier"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "notifier pass failed"),
            }
            tokio::select! {
                _ = tokio::time::timeout(core.clock.tick(TICK), core.wake.notified()) => {}
                _ = stopped.changed() => return,
            }
            // Woken sooner in a storm: what is queued until `PASS_GAP` after this pass began
            // goes with the next one.
            if busy {
                tokio::select! {
                    _ = tokio::time::sleep_until(started + PASS_GAP) => {}
                    _ = stopped.changed() => return,
                }
            }
        }
    })
}

/// Pages a pass handles that mark a storm (a quiet server's pass has one or two).
const BUSY_PASS: u64 = 8;
/// After a pass of `BUSY_PASS` pages or more, the least time from its start to the next pass's. In
/// a storm, pages then go in batches rather than a pass (a dozen statements on the paging lane)
/// for every page or two (`klaxon bench paging` on PostgreSQL, 64 senders: p50 48 ms, p99
/// 126 ms without it; 41 ms and 70 ms with it). A page after a quiet pass waits for no one.
const PASS_GAP: Duration = Duration::from_millis(20);
