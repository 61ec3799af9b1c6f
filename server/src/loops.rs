//! Schedules the background loops. Each is a tick function in `core`; a lease row decides which
//! replica runs it, so several replicas on one database run each loop once.

use klaxon_core::Core;
use std::time::Duration;

/// How often the sweeper runs.
pub const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// A lease not renewed for this long passes to another replica.
const LEASE_TTL: i64 = 90;

/// Runs the sweeper every `SWEEP_EVERY` while this replica holds its lease.
pub fn spawn(core: Core) {
    let holder = format!(
        "{}-{}",
        std::process::id(),
        klaxon_core::secrets::new_token()
            .get(..12)
            .unwrap_or_default()
    );
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
