//! Turns to read the record. A replica reads one report at a time (`READS_AT_ONCE`), and reports
//! may read for at most one part in `SHARE` of its time: each turn spends the time it read from a
//! credit that grows by a `SHARE`th of the time that passes, and the next turn begins once the
//! credit is paid back. However many requests come, back to back or from many people at once,
//! intake keeps the rest of the database. The credit holds up to `BURST` of reading, so a page
//! that asks its few reports at once gets them at once; a reader asking in a loop is held to the
//! share (a report of four weeks reads in tens of milliseconds, so the next waits a fraction of a
//! second).
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

/// Reports read for at most one part in this many of a replica's time.
pub const SHARE: u32 = 10;
/// Reading the credit may hold when nobody has read for a while: a page's reports at once.
pub const BURST: Duration = Duration::from_millis(200);

/// How much of the time reports may read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pace {
    pub share: u32,
    pub burst: Duration,
}

impl Pace {
    pub(crate) const REPORTS: Pace = Pace {
        share: SHARE,
        burst: BURST,
    };
}

/// Reading time left to spend, in nanoseconds (below zero: owed), as of `at`.
struct Credit {
    left: i128,
    at: Instant,
}

/// The turns of one replica.
pub(crate) struct Turns {
    open: Arc<Semaphore>,
    pace: Pace,
    credit: Arc<Mutex<Credit>>,
    places: Places,
}

/// A turn to read; when it ends (dropped), the reader's next report may queue, and the next
/// turn begins once the time it read is paid back.
pub(crate) struct Turn {
    permit: Option<OwnedSemaphorePermit>,
    place: Option<OwnedMutexGuard<()>>,
    reader: i64,
    places: Places,
    credit: Arc<Mutex<Credit>>,
    began: Instant,
    share: u32,
}

impl Turns {
    pub(crate) fn new(at_once: usize, pace: Pace) -> Turns {
        Turns {
            open: Arc::new(Semaphore::new(at_once)),
            pace,
            credit: Arc::new(Mutex::new(Credit {
                left: pace.burst.as_nanos() as i128,
                at: Instant::now(),
            })),
            places: Arc::default(),
        }
    }

    /// Waits for `reader`'s earlier report to be read, then for a turn (the queue is fair:
    /// first come, first served).
    pub(crate) async fn take(&self, reader: i64) -> Turn {
        let own = lock(&self.places).entry(reader).or_default().clone();
        let place = own.lock_owned().await;
        let permit = self
            .open
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore of record reads is never closed");
        let began = Instant::now();
        {
            // What the quiet time since the last turn earned, up to the burst.
            let mut credit = lock(&self.credit);
            let earned = (began - credit.at).as_nanos() as i128 / self.pace.share as i128;
            credit.left = (credit.left + earned).min(self.pace.burst.as_nanos() as i128);
            credit.at = began;
        }
        Turn {
            permit: Some(permit),
            place: Some(place),
            reader,
            places: self.places.clone(),
            credit: self.credit.clone(),
            began,
            share: self.pace.share,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for Turn {
    fn drop(&mut self) {
        drop(self.place.take());
        let mut places = lock(&self.places);
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
        let now = Instant::now();
        let share = self.share as i128;
        let owed = {
            // The read spent its time and, like any time passing, earned a share of it.
            let mut credit = lock(&self.credit);
            let read = (now - self.began).as_nanos() as i128;
            credit.left += read / share - read;
            credit.at = now;
            -credit.left
        };
        if owed <= 0 {
            return;
        }
        // Paid back by waiting `share` times what is owed, since time earns a `share`th.
        let rest = Duration::from_nanos((owed * share).min(u64::MAX as i128) as u64);
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

    /// Four times a read's time to rest after it, with nothing saved up.
    const FIFTH: Pace = Pace {
        share: 5,
        burst: Duration::ZERO,
    };

    /// Whether a turn can begin now.
    async fn free(turns: &Turns) -> bool {
        // Lets the task holding the last turn's permit run if its rest is over.
        tokio::task::yield_now().await;
        turns.open.available_permits() > 0
    }

    #[tokio::test(start_paused = true)]
    async fn the_next_turn_begins_after_resting_as_long_again_as_the_last_read_times_rest() {
        let turns = Turns::new(1, FIFTH);
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
        let turns = Arc::new(Turns::new(1, FIFTH));
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

    #[tokio::test(start_paused = true)]
    async fn a_reader_asking_back_to_back_reads_for_a_share_of_the_time() {
        let turns = Turns::new(1, Pace::REPORTS);
        let start = Instant::now();
        let mut reads = 0u32;
        while start.elapsed() < Duration::from_secs(60) {
            let turn = turns.take(1).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(turn);
            reads += 1;
        }
        // A minute at a tenth is 6 s of reading (120 reads of 50 ms), and the burst's 200 ms
        // saved up before: 4 more, each paying back only 45 ms of it.
        assert!(
            (123..=126).contains(&reads),
            "{reads} reads of 50 ms in a minute"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_page_asking_its_few_reports_at_once_gets_them_at_once() {
        let turns = Arc::new(Turns::new(1, Pace::REPORTS));
        // A reader held to the share a while ago; since then nobody has read for a minute.
        for _ in 0..10 {
            let turn = turns.take(1).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(turn);
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
        let asked = Instant::now();
        for _ in 0..3 {
            let turn = turns.take(2).await;
            tokio::time::sleep(Duration::from_millis(80)).await;
            drop(turn);
        }
        assert_eq!(
            asked.elapsed(),
            Duration::from_millis(240),
            "no wait between them"
        );
        let turn = turns.take(2).await;
        assert!(
            asked.elapsed() > Duration::from_millis(240),
            "the saved-up time spent, a fourth report waits"
        );
        drop(turn);
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
        let turns = Arc::new(Turns::new(1, FIFTH));
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
