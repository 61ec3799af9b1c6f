//! The pager watching itself. `/healthz` stays 200 while the database answers, but says
//! `degraded` with reasons when paging is stuck, so the Alertmanager that feeds Klaxon can
//! page someone another way. Each reason is logged once when it appears.

use crate::leases::{lease_age, Lease};
use crate::paging::notifier::STALLED_AFTER;
use crate::sweeper::SWEEP_EVERY;
use crate::{Core, Result};
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Mutex;

/// A page due this long and still unsent is overdue.
pub const OVERDUE_AFTER: i64 = 60;

/// `{"status": "ok"}` or `{"status": "degraded", "reasons": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok` or `degraded`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// What this replica remembers between checks.
#[derive(Default)]
pub struct Watch {
    /// When this replica's notifier last finished a pass (clock seconds; 0 before the first).
    notifier_pass: AtomicI64,
    /// The kinds of reason already logged, so each is logged once per episode.
    logged: Mutex<BTreeSet<&'static str>>,
    /// Whether the listener is turning connections away (its cap is reached).
    connections_full: AtomicBool,
}

impl Watch {
    pub(crate) fn notifier_passed(&self, now: i64) {
        self.notifier_pass.store(now, Ordering::Relaxed);
    }
}

impl Core {
    /// Told by the listener when its connection cap is reached (`true`) and left (`false`).
    pub fn connections_full(&self, full: bool) {
        self.watch.connections_full.store(full, Ordering::Relaxed);
    }

    /// Checks the outbox, the sweeper's lease and this replica's notifier.
    pub async fn health(&self) -> Result<Health> {
        self.check_health(&self.leases().await?).await
    }

    /// `health` with the lease rows already read.
    pub(crate) async fn check_health(&self, leases: &[Lease]) -> Result<Health> {
        let now = self.now();
        let mut found: Vec<(&'static str, String)> = Vec::new();
        let (overdue, oldest): (i64, Option<i64>) = sqlx::query_as(
            // A retried page counts from when it was first due (never later than its due_at), so
            // one failing for minutes is overdue although each retry moves due_at forward.
            "SELECT COUNT(*), MIN(COALESCE(first_due_at, due_at)) FROM pages \
             WHERE state = 'pending' AND (due_at < $1 OR first_due_at < $1)",
        )
        .bind(now - OVERDUE_AFTER)
        .fetch_one(&self.db.pool)
        .await?;
        if let (true, Some(oldest)) = (overdue > 0, oldest) {
            found.push((
                "pages_overdue",
                format!(
                    "{overdue} page(s) due but not sent, the oldest for {} s",
                    now - oldest
                ),
            ));
        }
        let stale = 2 * SWEEP_EVERY.as_secs() as i64;
        for lease in leases {
            match lease_age(lease.expires_at, now) {
                Some(age) if age > stale => found.push((
                    "lease_stale",
                    format!("the {} lease has not been renewed for {age} s", lease.name),
                )),
                _ => {}
            }
        }
        let last = self.watch.notifier_pass.load(Ordering::Relaxed);
        let idle = now - last;
        if last > 0 && idle > STALLED_AFTER {
            found.push((
                "notifier_stalled",
                format!("this replica's notifier has not finished a pass for {idle} s"),
            ));
        }
        if self.watch.connections_full.load(Ordering::Relaxed) {
            found.push((
                "connections_full",
                "every connection place is taken: new clients are turned away".to_string(),
            ));
        }
        self.log_changes(&found);
        self.metrics.degraded.set(i64::from(!found.is_empty()));
        Ok(Health {
            status: if found.is_empty() { "ok" } else { "degraded" },
            reasons: found.into_iter().map(|(_, r)| r).collect(),
        })
    }

    fn log_changes(&self, found: &[(&'static str, String)]) {
        let mut logged = self.watch.logged.lock().unwrap_or_else(|e| e.into_inner());
        for (kind, reason) in found {
            if logged.insert(kind) {
                tracing::error!(%reason, "Klaxon is degraded");
            }
        }
        let now: BTreeSet<&'static str> = found.iter().map(|(k, _)| *k).collect();
        for gone in logged.difference(&now).copied().collect::<Vec<_>>() {
            logged.remove(gone);
            tracing::info!(reason = gone, "no longer degraded");
        }
    }
}
