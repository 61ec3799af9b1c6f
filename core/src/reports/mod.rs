//! What a team's record teaches: on-call health (`health`), alert noise (`noise`) and
//! post-incident reviews with their follow-up items (`review`), read from the stored rows
//! themselves — schedule days, covers, pages, acknowledgements and the timeline — for the team's
//! members, over a range of at most a year.

mod acks;
pub mod health;
mod nights;
pub mod noise;
pub mod review;
mod turns;

pub(crate) use turns::{Pace, Turns};
pub use turns::{BURST, SHARE};

/// Page kinds that ask someone to act, as SQL: an all-clear or a hand-off notice is not counted.
const PAGES_THAT_ASK: &str = "('opening', 'reminder', 'escalation', 'fallback')";

/// Reports this replica reads at once; more wait their turn, and turns read for at most a share
/// of the replica's time (`turns`). A year of the record is a lot of reading, and intake shares the database and
/// its pool: however many people open their reports at once, they hold no more than two
/// connections, because a report reads its independent counts side by side on two (a year's
/// report then takes the time of its longest count rather than of all of them).
pub(crate) const READS_AT_ONCE: usize = 1;

impl crate::Core {
    /// Waits for `actor`'s turn to read the record; the turn ends when it is dropped.
    pub(crate) async fn reading_turn(&self, actor: &crate::Actor) -> turns::Turn {
        self.record_reads.take(actor.user_id).await
    }
}

/// The range a report was asked for, as given (checked by `domain::health::Range::check`).
#[derive(Debug, Clone, Default)]
pub struct ReportQuery {
    pub from: Option<i64>,
    pub to: Option<i64>,
    /// One person's figures only (a username).
    pub person: Option<String>,
}
