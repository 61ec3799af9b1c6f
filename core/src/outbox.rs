//! The two outboxes, pages and team channels' posts, share one skeleton: which rows are due,
//! the claim on them, its renewal while the rows are being sent, and the lanes that keep one
//! destination from holding another (`lanes`). Each outbox states only its own rules: which
//! earlier row of a destination holds a later one back, and how a destination backs off. What
//! a send's outcome writes stays with each outbox (`paging::record`, `channels::record`); the
//! retry delays are one rule (`domain::paging::retry_delay`).
//!
//! A claim is `claimed_by`/`claimed_until` on the row. It lasts `CLAIM_FOR` seconds and the
//! replica renews it every second until the batch's outcomes are written, so a replica that is
//! alive but slow (a push service taking its time) keeps its rows. A replica that dies, is
//! frozen or loses the database stops renewing, and another replica's pass (every 2 s) takes
//! the rows once the claim has lapsed: within `CLAIM_FOR` + 1 + 2 s of the last renewal.
//!
//! Why not a row lock held in an open PostgreSQL transaction, which the database drops with a
//! dead connection? A frozen process keeps its connection open (the kernel still answers for
//! it), so the lock would never pass, and SQLite has no such lock; a lapse in time covers kill,
//! freeze and a cut network alike, on both databases.
//!
//! It cannot send twice outside the send itself: before each send the replica checks that its
//! last renewal is recent enough that the claim has a second left (`Hold::valid`); when not, it
//! does not start the send and writes no outcome. A frozen replica that wakes finds its hold
//! lapsed on its clock and sends nothing more; every outcome it writes is conditional on
//! `claimed_by` still naming it. What remains is a send already in flight when its replica froze
//! or lost the database and that outlives the claim: the send itself. (Abandoning it when the
//! hold lapses would not close that window, since the service may already have the message, and
//! would turn a test's clock jump into a resend.)

use crate::lanes::Lanes;
use crate::{Core, Result};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// Seconds a claim lasts without renewal.
pub const CLAIM_FOR: i64 = 5;
/// How often a replica renews the claims of the batch it works on.
const RENEW_EVERY: Duration = Duration::from_secs(1);

/// The two outboxes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Outbox {
    Pages,
    ChannelPosts,
}

impl Outbox {
    fn table(self) -> &'static str {
        match self {
            Outbox::Pages => "pages",
            Outbox::ChannelPosts => "channel_posts",
        }
    }

    /// The column naming a row's destination: its lane, its order and its backoff.
    fn destination(self) -> &'static str {
        match self {
            Outbox::Pages => "topic",
            Outbox::ChannelPosts => "channel_id",
        }
    }

    /// The outbox's own rules for a due row `p` that must still wait, at `$1`: behind an earlier
    /// row `e` of its destination, and while its destination backs off.
    fn waits(self) -> &'static str {
        match self {
            // A page waits while an earlier page to its topic waits for the push service to come
            // back, so a person's pages arrive in the order they were queued after an outage; a
            // page that failed for itself (a refused topic) holds nothing back. A topic the
            // service rate-limited (429) waits for its Retry-After; other topics do not.
            Outbox::Pages => {
                "NOT EXISTS (SELECT 1 FROM pages e WHERE e.topic = p.topic AND e.state = 'pending' \
                 AND e.outage = 1 AND e.id < p.id AND e.due_at > $1 LIMIT 1 OFFSET 0) \
                 AND NOT EXISTS (SELECT 1 FROM topic_backoff b WHERE b.topic = p.topic AND b.retry_at > $1)"
            }
            // A post waits while an earlier post of its channel waits for a retry or is in another
            // replica's hands, so a channel hears an incident's events in the order they happened;
            // a `Retry-After` holds the whole channel.
            Outbox::ChannelPosts => {
                "NOT EXISTS (SELECT 1 FROM channel_posts e WHERE e.channel_id = p.channel_id AND e.state = 'pending' \
                 AND e.id < p.id AND (e.due_at > $1 OR e.claimed_until >= $1)) \
                 AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.id = p.channel_id AND c.retry_at > $1)"
            }
        }
    }

    /// The order due rows are taken in.
    fn order(self) -> &'static str {
        match self {
            Outbox::Pages => "due_at, id",
            Outbox::ChannelPosts => "id",
        }
    }
}

/// A row as a claim returns it.
pub(crate) trait OutboxRow:
    for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin
{
    fn id(&self) -> i64;
}

/// The rows one pass claimed, in id order.
pub(crate) struct Claim<T> {
    pub rows: Vec<T>,
    /// Their ids, which the hold renews.
    pub ids: Vec<i64>,
    /// The due read came back full: more may be due.
    pub full: bool,
}

/// This replica's hold on a claimed batch: the clock second of its last renewal.
pub(crate) struct Hold {
    renewed_at: AtomicI64,
}

impl Hold {
    pub fn new(claimed_at: i64) -> Hold {
        Hold {
            renewed_at: AtomicI64::new(claimed_at),
        }
    }

    /// True while the claim has at least a second left, whatever the clock of another replica
    /// says within a second of this one.
    pub fn valid(&self, now: i64) -> bool {
        now < self.renewed_at.load(Ordering::SeqCst) + CLAIM_FOR - 1
    }
}

impl Core {
    /// Reads up to `batch` due rows of `outbox` by its rules, outside the writer's turn (an idle
    /// pass never takes it), keeps those whose destination has no lane open here (of as
    /// many destinations as lanes are free), and claims them by id: each claim re-checks that the
    /// row is pending, due and unclaimed (or its claim lapsed), so another replica's claim of the
    /// same row finds nothing. (One subquery-driven UPDATE let PostgreSQL, with statistics from
    /// an emptier outbox, rescan the due rows once per pending row.) `columns` are returned.
    pub(crate) async fn claim_due<K, T>(
        &self,
        outbox: Outbox,
        lanes: &Lanes<K>,
        holder: &str,
        now: i64,
        batch: i64,
        columns: &str,
    ) -> Result<Claim<T>>
    where
        K: Eq + std::hash::Hash + Clone,
        (i64, K): for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
        T: OutboxRow,
    {
        let (table, destination) = (outbox.table(), outbox.destination());
        // Read in a transaction whose plan is kept (`Db::read_indexed`): planned afresh, this
        // read took longer to plan than to run at every pass. Outside the writer's turn, so an
        // idle pass never takes it.
        let mut read = self.db.read_indexed().await?;
        let due: Vec<(i64, K)> = sqlx::query_as(&format!(
            "SELECT id, {destination} FROM {table} p WHERE state = 'pending' AND due_at <= $1 \
             AND (claimed_until IS NULL OR claimed_until < $1) AND {} ORDER BY {} LIMIT $2",
            outbox.waits(),
            outbox.order()
        ))
        .bind(now)
        .bind(batch)
        .fetch_all(&mut *read)
        .await?;
        read.commit().await?;
        let full = due.len() as i64 == batch;
        let ids = lanes.claimable(due);
        if ids.is_empty() {
            // Every due row waits for a lane still open here: nothing more to do in this pass,
            // however many there are (going on at once would only read them again).
            return Ok(Claim {
                rows: Vec::new(),
                ids: Vec::new(),
                full: false,
            });
        }
        let mut rows: Vec<T> = self
            .db
            .write_in(
                &format!(
                    "UPDATE {table} SET claimed_by = $1, claimed_until = $2 WHERE state = 'pending' AND due_at <= $3 \
                     AND (claimed_until IS NULL OR claimed_until < $3) AND id IN ({{ids}}) RETURNING {columns}"
                ),
                &[holder.into(), (now + CLAIM_FOR).into(), now.into()],
                &ids,
            )
            .await?;
        rows.sort_by_key(|r| r.id());
        let ids = rows.iter().map(|r| r.id()).collect();
        Ok(Claim { rows, ids, full })
    }

    /// Renews the claims on `ids` every second, for ever: run beside the work on the batch and
    /// dropped with it. A renewal that fails leaves the hold to lapse.
    pub(crate) async fn keep_claims(
        &self,
        outbox: Outbox,
        holder: &str,
        ids: &[i64],
        hold: &Hold,
    ) -> std::convert::Infallible {
        loop {
            tokio::time::sleep(self.clock.tick(RENEW_EVERY)).await;
            let now = self.now();
            match self.renew(outbox, holder, ids, now).await {
                Ok(()) => hold.renewed_at.store(now, Ordering::SeqCst),
                Err(e) => {
                    tracing::warn!(error = %e, table = outbox.table(), "could not renew claims")
                }
            }
        }
    }

    async fn renew(&self, outbox: Outbox, holder: &str, ids: &[i64], now: i64) -> Result<()> {
        let table = outbox.table();
        let _renewed: Vec<(i64,)> = self
            .db
            .write_in(
                &format!("UPDATE {table} SET claimed_until = $1 WHERE claimed_by = $2 AND state = 'pending' AND id IN ({{ids}}) RETURNING id"),
                &[(now + CLAIM_FOR).into(), holder.into()],
                ids,
            )
            .await?;
        Ok(())
    }
}
