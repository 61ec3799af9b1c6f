//! Live updates. Triggers (migration 0013) write an `events` row in the transaction of every change
//! a page shows, so no write path can forget one and every replica sees what any replica
//! committed. `Core::run_event_feed` reads the rows after the last it saw (woken by PostgreSQL's
//! `NOTIFY`, or every 250 ms on SQLite) and broadcasts them to this replica's streams, which filter
//! them by `EventScope`.

use crate::db::Arg;
use crate::{Actor, Backend, Core, Error, Result};
use klaxon_domain::live::{EventData, EventKind, LiveEvent};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, watch};

/// Events kept for `Last-Event-ID` replay; the sweeper deletes older ones.
pub const KEEP: i64 = 50_000;
/// Rows read per query.
const PAGE: usize = 1000;
/// A replay longer than this is cut to its newest events: the browser refetches what it shows
/// whenever its stream (re)opens, so an old backlog says nothing it will not read anyway.
const REPLAY_MAX: usize = 5 * PAGE;
/// Ids handed out last that `resume_point` looks for among the committed events.
const RECENT: i64 = 256;
/// SQLite has no notifications: the feed reads every this often.
const POLL_SQLITE: Duration = Duration::from_millis(250);
/// PostgreSQL's notifications wake the feed; this read catches late commits and a lost listener.
const POLL_POSTGRES: Duration = Duration::from_secs(1);
/// Reads at most this often, however many notifications arrive (one per committing transaction).
const MIN_GAP_BETWEEN_READS: Duration = Duration::from_millis(50);
/// On PostgreSQL a transaction that took an id can commit after one that took a later id, so an
/// id skipped over is looked for again this long (a rolled-back one never appears).
const GAP_LIFE: Duration = Duration::from_secs(10);
const MAX_GAPS: usize = 10_000;
const CHANNEL: &str = "klaxon_events";

/// This replica's fan-out of events to its open streams.
pub struct Feed {
    sender: broadcast::Sender<Arc<[LiveEvent]>>,
    /// Set when the server stops, so streams end and the graceful shutdown is not held open.
    closed: watch::Sender<bool>,
    /// Open streams per account (`MAX_STREAMS_PER_USER`).
    streams: Arc<std::sync::Mutex<HashMap<i64, usize>>>,
}

impl Default for Feed {
    fn default() -> Self {
        Feed {
            sender: broadcast::channel(256).0,
            closed: watch::channel(false).0,
            streams: Arc::default(),
        }
    }
}

/// The teams whose events one caller receives: what their incident list and team pages show.
#[derive(Debug, Clone)]
pub struct EventScope(HashSet<i64>);

impl EventScope {
    pub fn admits(&self, e: &LiveEvent) -> bool {
        self.0.contains(&e.data.team_id)
    }
}

/// Live-update streams one account may hold open on one replica: a tab each, and a person has
/// a few phones and browsers, not hundreds.
pub const MAX_STREAMS_PER_USER: usize = 20;

/// An open stream, counted against its account until it is dropped.
pub struct StreamPlace {
    counts: Arc<std::sync::Mutex<HashMap<i64, usize>>>,
    user_id: i64,
}

impl Drop for StreamPlace {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().expect("not poisoned");
        if let Some(n) = counts.get_mut(&self.user_id) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.user_id);
            }
        }
    }
}

#[derive(sqlx::FromRow)]
struct EventRow {
    id: i64,
    #[sqlx(try_from = "String")]
    kind: EventKind,
    subject_id: i64,
    team_id: i64,
}

impl From<EventRow> for LiveEvent {
    fn from(r: EventRow) -> Self {
        LiveEvent {
            seq: r.id,
            kind: r.kind,
            data: EventData {
                id: r.subject_id,
                team_id: r.team_id,
            },
        }
    }
}

const COLUMNS: &str = "id, kind, subject_id, team_id";

/// One event per (kind, subject), the newest: a storm that touches one incident a hundred times
/// makes a browser refetch it once.
pub fn coalesce(events: Vec<LiveEvent>) -> Vec<LiveEvent> {
    let mut newest: HashMap<(EventKind, i64), LiveEvent> = HashMap::new();
    for e in events {
        let slot = newest.entry((e.kind, e.data.id)).or_insert(e);
        if e.seq > slot.seq {
            *slot = e;
        }
    }
    let mut out: Vec<LiveEvent> = newest.into_values().collect();
    out.sort_by_key(|e| e.seq);
    out
}

impl Core {
    /// Whose events the caller may hear, decided as their incident list is.
    pub async fn event_scope(&self, actor: &Actor) -> Result<EventScope> {
        Ok(EventScope(
            self.readable_teams(actor, None)
                .await?
                .into_iter()
                .collect(),
        ))
    }

    /// Counts a stream the caller opens, refused past `MAX_STREAMS_PER_USER` on this replica.
    pub fn open_stream(&self, actor: &Actor) -> Result<StreamPlace> {
        let mut counts = self.events.streams.lock().expect("not poisoned");
        let open = counts.entry(actor.user_id).or_insert(0);
        if *open >= MAX_STREAMS_PER_USER {
            return Err(Error::RateLimited {
                retry_after: 30,
                message: format!(
                    "at most {MAX_STREAMS_PER_USER} live-update streams per account; close a tab and try again"
                ),
            });
        }
        *open += 1;
        Ok(StreamPlace {
            counts: self.events.streams.clone(),
            user_id: actor.user_id,
        })
    }

    /// The events after `after` that `scope` admits, coalesced, for a stream resumed with
    /// `Last-Event-ID`.
    pub async fn events_after(&self, scope: &EventScope, after: i64) -> Result<Vec<LiveEvent>> {
        let mut found = Vec::new();
        let mut last = after;
        loop {
            let rows = self.read_events_after(last).await?;
            let full = rows.len() == PAGE;
            last = rows.last().map_or(last, |r| r.seq);
            found.extend(rows.into_iter().filter(|e| scope.admits(e)));
            if !full {
                break;
            }
            if found.len() > REPLAY_MAX {
                found.drain(..found.len() - REPLAY_MAX);
            }
        }
        Ok(coalesce(found))
    }

    /// Where the stream of a page rendered now resumes (`GET /api/events?after=`), read before
    /// the page's own reads: every change with an event up to it is committed, so the page shows
    /// it, and every later change is an event after it, which the stream replays. The page then
    /// needs no reload once its stream opens. On PostgreSQL a transaction still open may hold an
    /// id below ids already committed: the point stops below the first id handed out and not yet
    /// seen among the newest `RECENT` (one rolled back only makes the point earlier).
    pub async fn resume_point(&self) -> Result<i64> {
        if self.db.backend == Backend::Sqlite {
            // One writer: an id taken by a write still open is above every committed one.
            return self.latest_event().await;
        }
        let (handed,): (i64,) = sqlx::query_as(
            "SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM events_id_seq",
        )
        .fetch_one(&self.db.pool)
        .await?;
        let since = (handed - RECENT).max(0);
        let seen: Vec<(i64,)> =
            sqlx::query_as("SELECT id FROM events WHERE id > $1 AND id <= $2 ORDER BY id")
                .bind(since)
                .bind(handed)
                .fetch_all(&self.db.pool)
                .await?;
        Ok(first_unseen(since, handed, seen.into_iter().map(|r| r.0)) - 1)
    }

    /// Whether a stream can start after `after` with nothing left out: no event after it was
    /// pruned (`KEEP`) and its replay would not be cut (`REPLAY_MAX`).
    pub async fn can_resume_after(&self, after: i64) -> Result<bool> {
        let (oldest, newer): (Option<i64>, i64) = sqlx::query_as(&format!(
            "SELECT (SELECT MIN(id) FROM events), \
             (SELECT COUNT(*) FROM (SELECT 1 FROM events WHERE id > $1 LIMIT {}) AS newer)",
            REPLAY_MAX + 1
        ))
        .bind(after)
        .fetch_one(&self.db.pool)
        .await?;
        Ok(oldest.is_none_or(|o| after >= o - 1) && newer <= REPLAY_MAX as i64)
    }

    /// The newest event's id (0 when there is none): where a fresh stream starts.
    pub async fn latest_event(&self) -> Result<i64> {
        let (max,): (Option<i64>,) = sqlx::query_as("SELECT MAX(id) FROM events")
            .fetch_one(&self.db.pool)
            .await?;
        Ok(max.unwrap_or(0))
    }

    /// This replica's events as they are read, in batches.
    pub fn subscribe_events(&self) -> broadcast::Receiver<Arc<[LiveEvent]>> {
        self.events.sender.subscribe()
    }

    /// Changes to `true` when the server stops.
    pub fn events_closed(&self) -> watch::Receiver<bool> {
        self.events.closed.subscribe()
    }

    /// Ends every open stream (the server is stopping).
    pub fn close_events(&self) {
        let _ = self.events.closed.send(true);
    }

    async fn read_events_after(&self, after: i64) -> Result<Vec<LiveEvent>> {
        let rows: Vec<EventRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM events WHERE id > $1 ORDER BY id LIMIT {PAGE}"
        ))
        .bind(after)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(LiveEvent::from).collect())
    }

    /// Keeps the newest `KEEP` events (called by the sweeper).
    pub(crate) async fn prune_events(&self) -> Result<u64> {
        let done = sqlx::query("DELETE FROM events WHERE id <= (SELECT MAX(id) FROM events) - $1")
            .bind(KEEP)
            .execute(&self.db.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// Reads new events and broadcasts them until `stopped` changes. Runs on every replica.
    pub async fn run_event_feed(&self, mut stopped: watch::Receiver<bool>) {
        let mut cursor = Cursor::default();
        let mut listener: Option<sqlx::postgres::PgListener> = None;
        let mut started = false;
        let mut last_read = Instant::now();
        loop {
            tokio::time::sleep_until((last_read + MIN_GAP_BETWEEN_READS).into()).await;
            if !started {
                match self.latest_event().await {
                    Ok(id) => {
                        cursor.restart(id);
                        started = true;
                    }
                    Err(e) => tracing::debug!(error = %e, "event feed cannot start yet"),
                }
            }
            let wait = async {
                match self.db.backend {
                    Backend::Sqlite => tokio::time::sleep(POLL_SQLITE).await,
                    Backend::Postgres => {
                        if listener.is_none() {
                            listener = self.listen().await;
                        }
                        let Some(l) = listener.as_mut() else {
                            return tokio::time::sleep(POLL_POSTGRES).await;
                        };
                        tokio::select! {
                            r = l.recv() => {
                                if r.is_err() {
                                    listener = None;
                                }
                            }
                            _ = tokio::time::sleep(POLL_POSTGRES) => {}
                        }
                        // One read answers every notification already here.
                        if let Some(l) = listener.as_mut() {
                            while l.next_buffered().is_some() {}
                        }
                    }
                }
            };
            tokio::select! {
                _ = wait => {}
                _ = stopped.changed() => return,
            }
            last_read = Instant::now();
            if !started {
                continue;
            }
            if self.events.sender.receiver_count() == 0 {
                // Nobody is watching: move past what is there without reading it.
                if let Ok(id) = self.latest_event().await {
                    cursor.restart(id);
                }
                continue;
            }
            match cursor.read(self).await {
                Ok(batch) if !batch.is_empty() => {
                    let _ = self.events.sender.send(batch.into());
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(error = %e, "event feed read failed"),
            }
        }
    }

    async fn listen(&self) -> Option<sqlx::postgres::PgListener> {
        let mut l = sqlx::postgres::PgListener::connect(&self.db.url)
            .await
            .ok()?;
        l.listen(CHANNEL).await.ok()?;
        Some(l)
    }
}

/// Where the feed has read up to, and the ids it skipped that may still commit.
#[derive(Default)]
struct Cursor {
    last: i64,
    gaps: VecDeque<(i64, Instant)>,
}

impl Cursor {
    fn restart(&mut self, last: i64) {
        self.last = last;
        self.gaps.clear();
    }

    async fn read(&mut self, core: &Core) -> Result<Vec<LiveEvent>> {
        let now = Instant::now();
        while self
            .gaps
            .front()
            .is_some_and(|(_, seen)| now.duration_since(*seen) > GAP_LIFE)
        {
            self.gaps.pop_front();
        }
        let mut found: Vec<LiveEvent> = Vec::new();
        if !self.gaps.is_empty() {
            let ids: Vec<i64> = self.gaps.iter().map(|(id, _)| *id).collect();
            let late: Vec<EventRow> = core
                .db
                .fetch_in(
                    &format!("SELECT {COLUMNS} FROM events WHERE id IN ({{ids}})"),
                    &[] as &[Arg],
                    &ids,
                )
                .await?;
            let late: HashSet<i64> = late
                .into_iter()
                .map(|r| {
                    let id = r.id;
                    found.push(r.into());
                    id
                })
                .collect();
            self.gaps.retain(|(id, _)| !late.contains(id));
        }
        loop {
            let rows = core.read_events_after(self.last).await?;
            let full = rows.len() == PAGE;
            for e in rows {
                let skipped = e.seq - self.last - 1;
                if skipped > 0 && (skipped as usize) <= MAX_GAPS {
                    self.gaps.extend((self.last + 1..e.seq).map(|id| (id, now)));
                }
                self.last = e.seq;
                found.push(e);
            }
            if !full {
                break;
            }
        }
        if self.gaps.len() > MAX_GAPS {
            self.gaps.drain(..self.gaps.len() - MAX_GAPS);
        }
        Ok(coalesce(found))
    }
}

/// The first id in `(since, handed]` not among `seen` (ascending), or `handed + 1`.
fn first_unseen(since: i64, handed: i64, seen: impl Iterator<Item = i64>) -> i64 {
    let mut next = since + 1;
    for id in seen {
        if id != next {
            break;
        }
        next += 1;
    }
    next.min(handed + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(seq: i64, kind: EventKind, id: i64) -> LiveEvent {
        LiveEvent {
            seq,
            kind,
            data: EventData { id, team_id: 1 },
        }
    }

    #[test]
    fn a_render_resumes_below_the_first_id_not_yet_committed() {
        assert_eq!(first_unseen(10, 14, [11, 12, 13, 14].into_iter()), 15);
        assert_eq!(first_unseen(10, 14, [11, 13, 14].into_iter()), 12);
        assert_eq!(first_unseen(10, 14, [12, 13].into_iter()), 11);
        assert_eq!(first_unseen(0, 0, std::iter::empty()), 1);
    }

    #[test]
    fn coalescing_keeps_the_newest_event_per_subject_in_order() {
        let out = coalesce(vec![
            ev(1, EventKind::Incident, 7),
            ev(2, EventKind::Team, 7),
            ev(3, EventKind::Incident, 8),
            ev(4, EventKind::Incident, 7),
        ]);
        let seqs: Vec<i64> = out.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, vec![2, 3, 4]);
    }
}
