//! Lanes: no destination can hold another. Each destination (a page's topic, a team channel)
//! has at most one lane on a replica: its sends go one after another in their own task, bounded
//! in time by the outbound policy. A pass starts its destinations' lanes, waits a short moment
//! (`WAIT_FOR_LANES`) so the usual quick sends are recorded together in one transaction, and
//! goes on; a lane still sending then records its own outcomes when it ends. While a lane is
//! open its destination's later rows are not claimed on this replica, so a destination's sends
//! stay in order and one slow or dead destination holds up only itself.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinSet;

/// How long a pass waits for its lanes before leaving the slow ones to finish alone: long
/// enough for a push service on the same network, short enough that a page queued meanwhile
/// is not noticeably late.
pub const WAIT_FOR_LANES: Duration = Duration::from_millis(100);
/// Lanes open at once on a replica (each is one outbound request at a time): beyond them, due
/// rows wait for the next pass.
pub const MAX_LANES: usize = 256;

/// The destinations with a lane open, of one outbox.
pub struct Lanes<K> {
    open: Mutex<HashSet<K>>,
    closed: tokio::sync::Notify,
}

/// An open lane; dropping it closes the lane (after its outcomes are recorded).
pub struct Lane<K: Eq + Hash> {
    lanes: Arc<Lanes<K>>,
    key: K,
}

impl<K: Eq + Hash + Clone> Lanes<K> {
    pub fn new() -> Arc<Lanes<K>> {
        Arc::new(Lanes {
            open: Mutex::new(HashSet::new()),
            closed: tokio::sync::Notify::new(),
        })
    }

    fn set(&self) -> std::sync::MutexGuard<'_, HashSet<K>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `key`'s lane is open (its rows are not to be claimed now).
    pub fn is_open(&self, key: &K) -> bool {
        self.set().contains(key)
    }

    /// Room for this many more lanes.
    pub fn room(&self) -> usize {
        MAX_LANES.saturating_sub(self.set().len())
    }

    /// Of due rows `(id, destination)`, the ids whose destination has no lane open, of as many
    /// destinations as lanes are free (the notifier's and the announcer's due reads).
    pub fn claimable(&self, due: Vec<(i64, K)>) -> Vec<i64> {
        let mut room = self.room();
        let mut taken = HashSet::new();
        let mut ids = Vec::with_capacity(due.len());
        for (id, key) in due {
            if self.is_open(&key) {
                continue;
            }
            if !taken.contains(&key) {
                if room == 0 {
                    continue;
                }
                room -= 1;
                taken.insert(key);
            }
            ids.push(id);
        }
        ids
    }

    /// Opens `key`'s lane, unless it is open already.
    pub fn open(self: &Arc<Self>, key: K) -> Option<Lane<K>> {
        self.set().insert(key.clone()).then(|| Lane {
            lanes: self.clone(),
            key,
        })
    }

    /// Waits until no lane is open (tests, and a stopping replica).
    pub async fn settled(&self) {
        loop {
            let closed = self.closed.notified();
            if self.set().is_empty() {
                return;
            }
            closed.await;
        }
    }
}

impl<K: Eq + Hash> Drop for Lane<K> {
    fn drop(&mut self) {
        self.lanes
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.key);
        self.lanes.closed.notify_waiters();
    }
}

/// The results of the lanes that ended within `wait`, and the lanes still running.
pub async fn gather<T: Send + 'static>(
    mut running: JoinSet<T>,
    wait: Duration,
) -> (Vec<T>, JoinSet<T>) {
    let mut done = Vec::new();
    let deadline = tokio::time::Instant::now() + wait;
    while !running.is_empty() {
        match tokio::time::timeout_at(deadline, running.join_next()).await {
            Ok(Some(Ok(result))) => done.push(result),
            // A lane that panicked wrote nothing: its rows' claims lapse and are taken again.
            Ok(Some(Err(e))) => tracing::error!(error = %e, "a delivery lane failed"),
            Ok(None) | Err(_) => break,
        }
    }
    (done, running)
}
