//! Schedules the background loops. Each is a tick function in `core`.
//! - The sweeper runs every `SWEEP_EVERY` on one replica at a time: a lease row decides which.
//! - The notifier runs on every replica, woken at once when this replica queues a page and
//!   every 30 s otherwise (for pages queued elsewhere, retries, reminders and the ladder). Its
//!   claims are conditional updates, so replicas running it together still send each page once.

use klaxon_core::paging::notifier::TICK;
use klaxon_core::Core;
use std::time::Duration;

/// How often the sweeper runs.
pub const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// A lease not renewed for this long passes to another replica.
const LEASE_TTL: i64 = 90;

/// Starts the sweeper, the notifier and, with single sign-on, discovery of the provider.
pub fn spawn(core: Core) {
    if let Some(sso) = core.sso.clone() {
        let clock = core.clock.clone();
        tokio::spawn(async move { sso.keep_discovering(&*clock).await });
    }
    let holder = format!(
        "{}-{}",
        std::process::id(),
        klaxon_core::secrets::new_token()
            .get(..12)
            .unwrap_or_default()
    );
    spawn_notifier(core.clone(), holder.clone());
    tokio::spawn(async move {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            match core.take_lease("sweeper", &holder, LEASE_TTL).await {
                Ok(true) => match core.sweep().await {
                    Ok(r) if r != Default::default() => tracing::info!(
                        expired = r.expired,
                        resolved = r.incidents_resolved,
                        archived = r.archived,
                        "sweep"
                    ),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "sweep failed"),
                },
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "sweeper lease"),
            }
        }
    });
}

/// Runs a notifier pass whenever woken, and at least every `TICK`.
pub fn spawn_notifier(core: Core, holder: String) {
    tokio::spawn(async move {
        loop {
            match core.notify_tick(&holder).await {
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
            let _ = tokio::time::timeout(TICK, core.wake.notified()).await;
        }
    });
}
