//! A replica's claim on the pages it is delivering: short, renewed while it works, and trusted
//! only while it cannot have lapsed.
//!
//! A claim is `claimed_by`/`claimed_until` on the page row. It lasts `CLAIM_FOR` seconds and
//! the replica renews it every second until the batch's outcomes are written, so a replica
//! that is alive but slow (a push service taking its time) keeps its pages. A replica that dies,
//! is frozen or loses the database stops renewing, and another replica's pass (every 2 s) takes
//! the pages once the claim has lapsed: within `CLAIM_FOR` + 1 + 2 s of the last renewal.
//!
//! Why not a row lock held in an open PostgreSQL transaction, which the database drops with a
//! dead connection? A frozen process keeps its connection open (the kernel still answers for
//! it), so the lock would never pass, and SQLite has no such lock; a lapse in time covers kill,
//! freeze and a cut network alike, on both databases.
//!
//! It cannot send twice outside the publish itself: before each publish the replica checks
//! that its last renewal is recent enough that the claim has a second left (`Hold::valid`);
//! when not, it does not start the publish and writes no outcome. A frozen replica that wakes
//! finds its hold lapsed on its clock and sends nothing more; every outcome it writes is
//! conditional on `claimed_by` still naming it. What remains is a publish already in flight
//! when its replica froze or lost the database and that outlives the claim: the publish
//! itself. (Abandoning it when the hold lapses would not close that window, since the push
//! service may already have the message, and would turn a test's clock jump into a resend.)

use crate::{Core, Result};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// Seconds a claim lasts without renewal.
pub const CLAIM_FOR: i64 = 5;
/// How often a replica renews the claims of the batch it works on.
const RENEW_EVERY: Duration = Duration::from_secs(1);

/// The two outboxes whose rows are claimed this way.
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
    /// Renews the batch's claims every second, for ever: run beside the work on the batch and
    /// dropped with it. A renewal that fails leaves the hold to lapse.
    pub(super) async fn keep_claims(
        &self,
        holder: &str,
        ids: &[i64],
        hold: &Hold,
    ) -> std::convert::Infallible {
        self.keep_claims_of(Outbox::Pages, holder, ids, hold).await
    }

    /// `keep_claims` for either outbox: the team channels' posts are claimed the same way.
    pub(crate) async fn keep_claims_of(
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
                Err(e) => tracing::warn!(error = %e, "could not renew page claims"),
            }
        }
    }

    /// Claims the rows `ids` of `outbox` that are still pending, due and unclaimed (or whose
    /// claim lapsed), returning `columns` of each claimed one. Each claim stands alone: a row is
    /// claimed or not, whatever becomes of the others. The due rows are read first, outside any
    /// transaction (an idle pass never takes the writer), by each outbox's own order rules.
    pub(crate) async fn claim_rows<T>(
        &self,
        outbox: Outbox,
        holder: &str,
        ids: &[i64],
        now: i64,
        columns: &str,
    ) -> Result<Vec<T>>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
    {
        let table = outbox.table();
        self.db
            .write_in(
                &format!(
                    "UPDATE {table} SET claimed_by = $1, claimed_until = $2 WHERE state = 'pending' AND due_at <= $3 \
                     AND (claimed_until IS NULL OR claimed_until < $3) AND id IN ({{ids}}) RETURNING {columns}"
                ),
                &[holder.into(), (now + CLAIM_FOR).into(), now.into()],
                ids,
            )
            .await
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
