//! Requests per integration key: at most `KLAXON_INTAKE_RATE` a minute each (default 120, as
//! PagerDuty's per-key limit; `0` lifts it), with ten minutes' worth at once, so a storm passes
//! whole while a sender that loops or is misconfigured gets 429 and `Retry-After` instead of
//! filling the database, and the other keys are not slowed. The count is the crate `governor`'s GCRA, per replica and in memory (a key
//! costs one small entry; nothing is written per request, so intake keeps its speed), on
//! Klaxon's own clock so that tests move time instead of waiting. Behind N replicas a key may
//! send N times the rate.

use crate::clock::Clock;
use crate::{Error, Result};
use governor::clock::Clock as GovernorClock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

/// The default of `KLAXON_INTAKE_RATE`.
pub const PER_MINUTE: u32 = 120;
/// Minutes' worth of requests a key may send at once: a storm (a thousand groups firing together,
/// each one request) passes whole; a sender looping for longer is held to the rate.
pub const BURST_MINUTES: u32 = 10;

/// Klaxon's clock as `governor` reads time (whole seconds, as Klaxon keeps it).
#[derive(Clone)]
struct Seconds(Arc<dyn Clock>);

impl GovernorClock for Seconds {
    type Instant = Nanos;

    fn now(&self) -> Nanos {
        Nanos::from(Duration::from_secs(self.0.now().max(0) as u64))
    }
}

/// What sends: an integration's key, or a dead man's switch's heartbeat URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Keyed {
    Integration(i64),
    Switch(i64),
}

/// Counts per key, on Klaxon's clock.
type Limiter = RateLimiter<Keyed, HashMapStateStore<Keyed>, Seconds, NoOpMiddleware<Nanos>>;

/// Each integration key's allowance; `None` when there is no limit.
pub struct KeyRate {
    limiter: Option<Limiter>,
    clock: Arc<dyn Clock>,
    per_minute: u32,
}

impl KeyRate {
    pub fn new(per_minute: u32, clock: Arc<dyn Clock>) -> KeyRate {
        let limiter = NonZeroU32::new(per_minute).map(|n| {
            let burst = n.saturating_mul(NonZeroU32::new(BURST_MINUTES).unwrap_or(NonZeroU32::MIN));
            let quota = Quota::per_minute(n).allow_burst(burst);
            RateLimiter::new(quota, HashMapStateStore::default(), Seconds(clock.clone()))
        });
        KeyRate {
            limiter,
            clock,
            per_minute,
        }
    }

    /// Counts one request for `key`, or refuses it with the seconds to wait.
    pub fn check(&self, key: Keyed) -> Result<()> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        limiter.check_key(&key).map_err(|not_until| {
            let now = Seconds(self.clock.clone()).now();
            let wait = not_until.wait_time_from(now).as_secs_f64().ceil() as i64;
            Error::RateLimited {
                retry_after: wait.max(1),
                message: format!(
                    "this key sent more than {} requests a minute; try again in {} seconds",
                    self.per_minute,
                    wait.max(1)
                ),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    #[test]
    fn a_key_past_its_rate_waits_and_others_go_on() {
        let clock = Arc::new(ManualClock::new(1_795_000_000));
        let rate = KeyRate::new(120, clock.clone());
        for _ in 0..1200 {
            rate.check(Keyed::Integration(1)).unwrap();
        }
        let Err(Error::RateLimited { retry_after, .. }) = rate.check(Keyed::Integration(1)) else {
            panic!("past ten minutes' worth at once, a request is refused");
        };
        assert_eq!(retry_after, 1, "one more every half second");
        rate.check(Keyed::Switch(1))
            .expect("another key is not held by the first");
        clock.advance(1);
        rate.check(Keyed::Integration(1)).unwrap();
        rate.check(Keyed::Integration(1)).unwrap();
        assert!(
            rate.check(Keyed::Integration(1)).is_err(),
            "two a second after the burst"
        );
        clock.advance(600);
        for _ in 0..1200 {
            rate.check(Keyed::Integration(1)).unwrap();
        }
    }

    #[test]
    fn the_highest_rate_holds_no_one() {
        let rate = KeyRate::new(u32::MAX, Arc::new(ManualClock::new(1_795_000_000)));
        for _ in 0..100_000 {
            rate.check(Keyed::Integration(1)).unwrap();
        }
    }

    #[test]
    fn zero_lifts_the_limit() {
        let rate = KeyRate::new(0, Arc::new(ManualClock::new(0)));
        for _ in 0..10_000 {
            rate.check(Keyed::Integration(1)).unwrap();
        }
    }
}
