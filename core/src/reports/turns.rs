//! Turns to read the record. A replica reads one report at a time (`READS_AT_ONCE`), and after
//! each it rests `REST` times as long as the report read before the next turn begins: however
//! many requests come, back to back or from many people at once, reports take at most a fifth
//! of this replica's time on the database, and intake keeps the rest. A lone reader barely
//! notices: a report of four weeks reads in tens of milliseconds, so the next waits a fraction
//! of a second.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// How many times as long as a report read the record rests after it.
pub const REST: u32 = 4;

/// The turns of one replica.
pub(crate) struct Turns {
    open: Arc<Semaphore>,
    rest: u32,
}

/// A turn to read; when it ends (dropped), the next begins after the rest.
pub(crate) struct Turn {
    permit: Option<OwnedSemaphorePermit>,
    began: Instant,
    rest: u32,
}

impl Turns {
    pub(crate) fn new(at_once: usize, rest: u32) -> Turns {
        Turns {
            open: Arc::new(Semaphore::new(at_once)),
            rest,
        }
    }

    /// Waits for a turn (the queue is fair: first come, first served).
    pub(crate) async fn take(&self) -> Turn {
        let permit = self
            .open
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore of record reads is never closed");
        Turn {
            permit: Some(permit),
            began: Instant::now(),
            rest: self.rest,
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let Some(permit) = self.permit.take() else {
            return;
        };
        let rest: Duration = self.began.elapsed() * self.rest;
        // Without a runtime (the process is ending) there is nobody left to wait.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                tokio::time::sleep(rest).await;
                drop(permit);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a turn can begin now.
    async fn free(turns: &Turns) -> bool {
        // Lets the task holding the last turn's permit run if its rest is over.
        tokio::task::yield_now().await;
        turns.open.available_permits() > 0
    }

    #[tokio::test(start_paused = true)]
    async fn the_next_turn_begins_after_resting_as_long_again_as_the_last_read_times_rest() {
        let turns = Turns::new(1, 4);
        let turn = turns.take().await;
        assert!(!free(&turns).await, "one turn at a time");
        tokio::time::advance(Duration::from_millis(100)).await;
        drop(turn);
        assert!(!free(&turns).await, "resting right after the read");
        tokio::time::advance(Duration::from_millis(399)).await;
        assert!(
            !free(&turns).await,
            "still resting just before four times the read"
        );
        tokio::time::advance(Duration::from_millis(2)).await;
        assert!(free(&turns).await, "the rest is over");
    }

    #[tokio::test(start_paused = true)]
    async fn a_reader_waiting_gets_the_turn_when_the_rest_ends() {
        let turns = Arc::new(Turns::new(1, 4));
        let first = turns.take().await;
        let asked = Instant::now();
        let waiting = {
            let turns = turns.clone();
            tokio::spawn(async move {
                drop(turns.take().await);
                asked.elapsed()
            })
        };
        tokio::time::advance(Duration::from_millis(50)).await;
        drop(first);
        // The paused clock jumps through the rest: 50 ms read, 200 ms rest.
        let waited = waiting.await.unwrap();
        assert_eq!(waited, Duration::from_millis(250));
    }
}
