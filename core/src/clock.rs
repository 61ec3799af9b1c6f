//! Time as data: production reads the system clock, tests move a manual one.

use std::sync::atomic::{AtomicI64, Ordering};

pub trait Clock: Send + Sync {
    /// Unix seconds.
    fn now(&self) -> i64;

    /// The longest a background loop waits between passes, given its usual interval. A clock
    /// that jumps when a test moves it wants the loops to notice within moments.
    fn tick(&self, usual: std::time::Duration) -> std::time::Duration {
        usual
    }
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to.
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start: i64) -> Self {
        ManualClock(AtomicI64::new(start))
    }
    pub fn set(&self, t: i64) {
        self.0.store(t, Ordering::SeqCst);
    }
    pub fn advance(&self, secs: i64) {
        self.0.fetch_add(secs, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Debug builds only (the test binaries): time read from a file holding Unix seconds, so a
/// test moves the clock of several `klaxon serve` processes at once. `KLAXON_TEST_CLOCK_FILE`
/// names it; release builds have no such clock. The loops then tick every 100 ms, so a move
/// is acted on at once.
#[cfg(debug_assertions)]
pub struct FileClock(pub std::path::PathBuf);

#[cfg(debug_assertions)]
impl Clock for FileClock {
    fn now(&self) -> i64 {
        std::fs::read_to_string(&self.0)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| SystemClock.now())
    }

    fn tick(&self, _usual: std::time::Duration) -> std::time::Duration {
        std::time::Duration::from_millis(100)
    }
}

/// The clock `klaxon serve` runs on: the system's, or in a debug build the test's file clock.
pub fn serving_clock() -> std::sync::Arc<dyn Clock> {
    #[cfg(debug_assertions)]
    if let Some(path) = std::env::var_os("KLAXON_TEST_CLOCK_FILE") {
        return std::sync::Arc::new(FileClock(path.into()));
    }
    std::sync::Arc::new(SystemClock)
}
