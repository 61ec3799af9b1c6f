//! Turns to read the record. A replica reads one report at a time (`READS_AT_ONCE`), and after
//! each it rests `REST` times as long as the report read before the next turn begins: however
//! many requests come, back to back or from many people at once, reports take at most a fifth
//! of this replica's time on the database, and intake keeps the rest. A lone reader barely
//! notices: a report of four weeks reads in tens of milliseconds, so the next waits a fraction
//! of a second.
//!
//! Each person has one place in the queue at a time: their next report waits until the one
//! before it was read, so whoever asks many at once (a script, a dashboard refreshing every
//! panel) takes turns with the others instead of lining up ahead of them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Each reader's place in the queue, by user id; an entry nobody holds is removed.
type Places = Arc<Mutex<HashMap<i64, Arc<tokio::sync::Mutex<()>>>>>;

/// How many times as long as a report read the record rests after it.
pub const REST: u32 = 4;

/// The turns of one replica.
pub(crate) struct Turns {
    open: Arc<Semaphore>,
    rest: u32,
    places: Places,
}

/// A turn to read; when it ends (dropped), the reader's next report may queue, and the next
/// turn begins after the rest.
pub(crate) struct Turn {
    permit: Option<OwnedSemaphorePermit>,
    place: Option<OwnedMutexGuard<()>>,
    reader: i64,
    places: Places,
    began: Instant,
    rest: u32,
}

impl Turns {
    pub(crate) fn new(at_once: usize, rest: u32) -> Turns {
        Turns {
            open: Arc::new(Semaphore::new(at_once)),
            rest,
            places: Arc::default(),
        }
    }

    /// Waits for `reader`'s earlier report to be read, then for a turn (the queue is fair:
    /// first come, first served).
    pub(crate) async fn take(&self, reader: i64) -> Turn {
        let own = self
            .places
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(reader)
            .or_default()
            .clone();
        let place = own.lock_owned().await;
        let permit = self
            .open
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore of record reads is never closed");
        Turn {
            permit: Some(permit),
            place: Some(place),
            reader,
            places: self.places.clone(),
            began: Instant::now(),
            rest: self.rest,
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        drop(self.place.take());
        let mut places = self.places.lock().unwrap_or_else(|e| e.into_inner());
        if places
            .get(&self.reader)
            .is_some_and(|own| Arc::strong_count(own) == 1)
        {
            places.remove(&self.reader);
        }
        drop(places);
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
        let turn = turns.take(1).await;
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
        let first = turns.take(1).await;
        let asked = Instant::now();
        let waiting = {
            let turns = turns.clone();
            tokio::spawn(async move {
                drop(turns.take(1).await);
                asked.elapsed()
            })
        };
        tokio::time::advance(Duration::from_millis(50)).await;
        drop(first);
        // The paused clock jumps through the rest: 50 ms read, 200 ms rest.
        let waited = waiting.await.unwrap();
        assert_eq!(waited, Duration::from_millis(250));
    }

    /// The order in which readers' reports were read, one tag each.
    async fn read_in_order(turns: Arc<Turns>, asks: &[(i64, &'static str)]) -> Vec<&'static str> {
        let order = Arc::new(Mutex::new(Vec::new()));
        let first = turns.take(0).await;
        let mut tasks = Vec::new();
        for &(reader, tag) in asks {
            let (turns, order) = (turns.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let _turn = turns.take(reader).await;
                order.lock().unwrap().push(tag);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }));
            // Each asks after the one before it is queued.
            tokio::task::yield_now().await;
        }
        drop(first);
        for task in tasks {
            task.await.unwrap();
        }
        let order = order.lock().unwrap().clone();
        order
    }

    #[tokio::test(start_paused = true)]
    async fn a_reader_asking_many_at_once_takes_turns_with_the_others() {
        let turns = Arc::new(Turns::new(1, 4));
        // Reader 1 asks three reports at once, then reader 2 asks one.
        let order =
            read_in_order(turns.clone(), &[(1, "1a"), (1, "1b"), (1, "1c"), (2, "2")]).await;
        assert_eq!(order, ["1a", "2", "1b", "1c"]);
        assert!(
            turns.places.lock().unwrap().is_empty(),
            "no reader's place outlives their reports"
        );
    }
}
