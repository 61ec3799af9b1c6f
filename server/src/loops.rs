//! Schedules the background loops. Each is a tick function in `core`.
//! - The sweeper runs every `SWEEP_EVERY` on one replica at a time: a lease row decides which,
//!   taken or renewed every `LEASE_RENEW` (through a long sweep too), so a dead holder is
//!   replaced within seconds.
//! - The notifier runs on every replica, woken at once when this replica queues a page and
//!   every `TICK` otherwise (for pages queued elsewhere or whose claim lapsed, retries, reminders
//!   and the ladder). Its claims are conditional updates, so replicas running it together still
//!   send each page once.
//!
//! - The announcer runs on every replica beside the notifier, never inside its pass, so a slow
//!   chat service cannot hold a page back: woken at once when this replica queues team-channel
//!   messages and every `TICK` otherwise, it posts those due (`core::channels`), claimed like
//!   pages.
//!
//! - The event feed runs on every replica: it reads the `events` rows other transactions wrote
//!   and hands them to this replica's live streams (`core::events`).
//!
//! - With a Matrix bot, the Matrix listener runs on every replica: it long-polls the bot's rooms
//!   and acts on commands, replies and reactions (`core::chat::matrix`); a batch is claimed
//!   before it is acted on, so replicas reading alike act once.
//!
//! On stop, each loop finishes the pass it is in, then the replica gives up its lease and its
//! page claims, so another replica takes over at once.

use klaxon_core::db::Backend;
use klaxon_core::leases::{LEASE_RENEW, LEASE_TTL};
use klaxon_core::paging::notifier::TICK;
use klaxon_core::sweeper::SWEEP_EVERY;
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
    let announcer = spawn_announcer(core.clone(), stopped.clone());
    let feed = {
        let core = core.clone();
        tokio::spawn(async move { core.run_event_feed(stopped).await })
    };
    let mut passes = vec![notifier, sweeper, announcer, feed];
    passes.extend(spawn_matrix_listener(core.clone(), stop.subscribe()));
    Loops {
        core,
        stop,
        passes,
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
            // Sends a pass left to finish alone (`klaxon_core::lanes`) are bounded in time: their
            // outcomes are written before the claims go back.
            self.core.deliveries_settled().await;
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
        let mut due_at: Option<tokio::time::Instant> = None;
        let mut timed_out = true;
        loop {
            let started = tokio::time::Instant::now();
            let due = due_pass(
                timed_out,
                core.take_due_wanted(),
                due_at.map(|t| started - t),
            );
            if due {
                due_at = Some(started);
            }
            let pass = core.notify_pass(&holder, due).await;
            let pages = match &pass {
                Ok(r) => r.sent + r.failed + r.cancelled,
                Err(_) => 0,
            };
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
                woken = tokio::time::timeout(core.clock.tick(TICK), core.wake.notified()) => {
                    timed_out = woken.is_err();
                }
                _ = stopped.changed() => return,
            }
            // Woken soon after a pass with pages, or after one that found its rows' lanes still
            // sending: what is queued until its gap has passed goes with the next one.
            let gap = pass_gap(pages, core.pages_sending(), core.db.backend);
            if !gap.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep_until(started + gap) => {}
                    _ = stopped.changed() => return,
                }
            }
        }
    })
}

/// Runs an announcer pass every `TICK`, at once when this replica queued channel posts
/// (`Db::announcer`), and at once again while passes find work, until `stopped` changes.
pub(crate) fn spawn_announcer(core: Core, mut stopped: watch::Receiver<bool>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let busy = match core.announce_tick(&core.holder).await {
                Ok(r) if !r.is_idle() => {
                    tracing::info!(
                        sent = r.sent,
                        summarised = r.summarised,
                        failed = r.failed,
                        waiting = r.waiting,
                        "announcer"
                    );
                    r.sent > 0
                }
                Ok(_) => false,
                Err(e) => {
                    tracing::warn!(error = %e, "announcer pass failed");
                    false
                }
            };
            let wait = if busy {
                Duration::ZERO
            } else {
                core.clock.tick(TICK)
            };
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = core.db.announcer.notified() => {}
                _ = stopped.changed() => return,
            }
        }
    })
}

/// How long one read of the Matrix bot's rooms waits for something to be said.
const MATRIX_WAIT: Duration = Duration::from_secs(25);
/// After a failed read, the next waits this long (the homeserver may be down).
const MATRIX_AFTER_FAILURE: Duration = Duration::from_secs(5);

/// Reads what is said in the Matrix bot's rooms and acts on it (`core::chat::matrix`), one long
/// poll after another, until `stopped` changes; a stop ends the read in progress. Nothing
/// without a Matrix bot.
fn spawn_matrix_listener(core: Core, mut stopped: watch::Receiver<bool>) -> Option<JoinHandle<()>> {
    core.roads.matrix_bot()?;
    Some(tokio::spawn(async move {
        loop {
            let read = tokio::select! {
                r = core.matrix_listen(MATRIX_WAIT) => r,
                _ = stopped.changed() => return,
            };
            let wait = match read {
                Ok(n) => {
                    if n > 0 {
                        tracing::info!(messages = n, "acted on Matrix messages");
                    }
                    Duration::ZERO
                }
                Err(e) => {
                    tracing::warn!(error = %e, "reading the Matrix rooms failed");
                    MATRIX_AFTER_FAILURE
                }
            };
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stopped.changed() => return,
            }
        }
    }))
}

/// Whether a pass does the due work (snoozes, ladder levels, reminders) before delivering: when
/// the timer woke it, when a wake asked for it (`Core::wake_notifier`), or when it last ran
/// `DUE_EVERY` ago or more. Woken only for queued pages (`Core::wake_delivery`) a pass just
/// delivers: in a storm, one pass a page or two read every due list again and planned each read
/// afresh on PostgreSQL, taking turns from intake.
fn due_pass(timed_out: bool, wanted: bool, since_due: Option<Duration>) -> bool {
    timed_out || wanted || since_due.is_none_or(|d| d >= DUE_EVERY)
}

/// The longest a storm of queued pages puts the due work off.
const DUE_EVERY: Duration = Duration::from_millis(500);

/// The least time from the start of a pass that handled `pages` pages to the next pass's start:
/// none after a lone page, else `GAP_PER_PAGE` a page, at most the backend's most. In a storm
/// the gap grows with the passes until pages go in batches, rather than a pass (a dozen
/// statements, three write transactions) for every page or two. Measured with `klaxon bench
/// paging --road webpush` (64 senders, PostgreSQL, two cores): with 20 ms at most storm intake
/// ran at 0.73–0.74 of the same storm with nobody to page (p99 76–101 ms), with 100 ms at
/// 0.84 (p99 126–127 ms, under the 250 ms goal), each pass's fixed statements shared by four
/// times the pages; a lone page still goes at once. On SQLite passes of one or two pages cost
/// intake 23 % of its rate, and its three transactions a pass take the one writer from intake.
///
/// A pass that handled nothing while lanes were still `sending` waits the most too: the pages
/// queued meanwhile are mostly for those lanes' destinations, which no pass claims until they
/// close (a closing lane wakes the notifier), and a pass for each of them read the due rows
/// again for nothing — nine passes in ten of a Web Push storm on PostgreSQL. A page for another
/// destination waits that gap at most (beside 20 dead destinations, `--tarpits 20`, a team's
/// quiet pages still arrive in 3–4 ms at the median).
fn pass_gap(pages: u64, sending: bool, backend: Backend) -> Duration {
    let most = match backend {
        Backend::Sqlite => Duration::from_millis(40),
        Backend::Postgres => Duration::from_millis(100),
    };
    if pages == 0 && sending {
        return most;
    }
    if pages <= 1 {
        return Duration::ZERO;
    }
    most.min(GAP_PER_PAGE * u32::try_from(pages).unwrap_or(u32::MAX))
}

const GAP_PER_PAGE: Duration = Duration::from_millis(2);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_pages_put_the_due_work_off_for_half_a_second_at_most() {
        let ms = Duration::from_millis;
        assert!(due_pass(false, false, None), "the first pass");
        assert!(
            !due_pass(false, false, Some(ms(20))),
            "a storm's pages only"
        );
        assert!(due_pass(false, false, Some(ms(500))), "not put off longer");
        assert!(due_pass(true, false, Some(ms(20))), "the timer");
        assert!(due_pass(false, true, Some(ms(20))), "asked for");
    }

    #[test]
    fn a_lone_page_waits_for_nobody_and_a_storm_goes_in_batches() {
        let ms = |pages, backend| pass_gap(pages, false, backend).as_millis();
        assert_eq!(ms(0, Backend::Postgres), 0);
        assert_eq!(ms(1, Backend::Sqlite), 0);
        assert_eq!(ms(2, Backend::Postgres), 4);
        assert_eq!(ms(5, Backend::Postgres), 10);
        assert_eq!(ms(40, Backend::Postgres), 80);
        assert_eq!(ms(500, Backend::Postgres), 100);
        assert_eq!(ms(500, Backend::Sqlite), 40);
        assert_eq!(ms(u64::MAX, Backend::Sqlite), 40);
    }

    #[test]
    fn a_pass_that_found_only_sending_lanes_waits_before_the_next() {
        let ms = |pages, sending, backend| pass_gap(pages, sending, backend).as_millis();
        assert_eq!(ms(0, true, Backend::Postgres), 100);
        assert_eq!(ms(0, true, Backend::Sqlite), 40);
        assert_eq!(
            ms(0, false, Backend::Postgres),
            0,
            "idle: the next page goes at once"
        );
        assert_eq!(ms(1, true, Backend::Postgres), 0, "a lone page was sent");
    }
}
