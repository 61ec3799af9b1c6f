//! Writing what became of a pass's (or a lane's) channel messages, in one transaction: sent
//! posts and their carriers, failures with their backoff and the channel's state, posts put off
//! for the channel's next summary. And the lanes a pass leaves to finish alone.

use super::deliver::{ChannelOutcome, Running};
use crate::db::Arg;
use crate::metrics::ChannelLabel;
use crate::outbox::{Hold, Outbox};
use crate::{Core, Result};
use klaxon_domain::paging::{retry_delay, GIVE_UP_AFTER};
use std::sync::Arc;

impl Core {
    /// Records the outcomes of finished lanes and the posts `postponed` (id, new due time).
    pub(super) async fn record_posts(
        &self,
        holder: &str,
        postponed: &[(i64, i64)],
        outcomes: &[ChannelOutcome],
        mut report: super::AnnounceReport,
    ) -> Result<super::AnnounceReport> {
        let now = self.now();
        let mut tx = self.db.begin().await?;
        for (post, due_at) in postponed {
            sqlx::query(
                "UPDATE channel_posts SET waited = 1, due_at = $1, claimed_by = NULL, claimed_until = NULL \
                 WHERE id = $2 AND claimed_by = $3 AND state = 'pending'",
            )
            .bind(due_at)
            .bind(post)
            .bind(holder)
            .execute(&mut *tx)
            .await?;
        }
        for o in outcomes {
            let label = ChannelLabel { kind: o.kind };
            for posts in &o.sent {
                let carrier = posts[0];
                tx.fetch_in::<(i64,)>(
                    "UPDATE channel_posts SET state = 'sent', sent_at = $1, claimed_by = NULL, claimed_until = NULL, error = NULL, \
                     carried_by = CASE WHEN id = $2 THEN NULL ELSE $2 END \
                     WHERE claimed_by = $3 AND state = 'pending' AND id IN ({ids}) RETURNING id",
                    &[Arg::Int(now), Arg::Int(carrier), Arg::Text(holder)],
                    posts,
                )
                .await?;
                self.metrics.channel_messages.get_or_create(&label).inc();
                if posts.len() > 1 {
                    self.metrics.channel_summaries.get_or_create(&label).inc();
                    report.summarised += posts.len() as u64;
                }
                report.sent += 1;
            }
            if !o.sent.is_empty() {
                sqlx::query(
                    "UPDATE channels SET last_sent_at = $1, failing_since = NULL, last_error = NULL WHERE id = $2",
                )
                .bind(now)
                .bind(o.channel_id)
                .execute(&mut *tx)
                .await?;
            }
            if let Some((posts, attempts, sentence, retry_after)) = &o.failed {
                let due_at = now + retry_delay(attempts + 1, *retry_after);
                let settled: Vec<(i64, String)> = tx
                    .fetch_in(
                        "UPDATE channel_posts SET attempts = attempts + 1, error = $1, due_at = $2, \
                         claimed_by = NULL, claimed_until = NULL, \
                         state = CASE WHEN at <= $3 THEN 'failed' ELSE 'pending' END \
                         WHERE claimed_by = $4 AND state = 'pending' AND id IN ({ids}) RETURNING id, state",
                        &[
                            Arg::Text(sentence),
                            Arg::Int(due_at),
                            Arg::Int(now - GIVE_UP_AFTER),
                            Arg::Text(holder),
                        ],
                        posts,
                    )
                    .await?;
                let gave_up = settled
                    .iter()
                    .filter(|(_, state)| state == "failed")
                    .count() as u64;
                sqlx::query(
                    "UPDATE channels SET failing_since = COALESCE(failing_since, $1), last_error = $2, retry_at = $3 WHERE id = $4",
                )
                .bind(now)
                .bind(sentence)
                .bind(retry_after.map(|r| now + r))
                .bind(o.channel_id)
                .execute(&mut *tx)
                .await?;
                tracing::warn!(channel = o.channel_id, kind = o.kind, error = %sentence, "channel post failed");
                self.metrics.channel_failures.get_or_create(&label).inc();
                self.metrics
                    .channel_given_up
                    .get_or_create(&label)
                    .inc_by(gave_up);
                report.failed += 1;
            }
        }
        tx.commit().await?;
        Ok(report)
    }

    /// Hands claimed posts back for the next pass (those not settled by their lane).
    pub(super) async fn release_posts(&self, holder: &str, ids: &[i64]) -> Result<()> {
        self.db
            .write_in::<(i64,)>(
                "UPDATE channel_posts SET claimed_by = NULL, claimed_until = NULL \
                 WHERE claimed_by = $1 AND state = 'pending' AND id IN ({ids}) RETURNING id",
                &[holder.into()],
                ids,
            )
            .await?;
        Ok(())
    }

    /// Lets the channels still sending after their pass finish on their own: each lane records
    /// its outcome when it ends and hands back the posts it did not settle; their claims are
    /// renewed until the last lane has.
    pub(super) fn finish_channels_alone(
        &self,
        holder: &str,
        running: Running,
        held: Vec<i64>,
        hold: Arc<Hold>,
    ) {
        let mut running = running;
        if running.is_empty() {
            return;
        }
        let (core, holder) = (self.clone(), holder.to_string());
        tokio::spawn(async move {
            let record = async {
                while let Some(ended) = running.join_next().await {
                    let Ok((outcome, lane)) = ended else {
                        continue;
                    };
                    let done = core
                        .record_posts(
                            &holder,
                            &[],
                            std::slice::from_ref(&outcome),
                            Default::default(),
                        )
                        .await;
                    let released = core.release_posts(&holder, &outcome.posts).await;
                    if let Err(e) = done.and(released) {
                        tracing::warn!(error = %e, "could not record a channel's messages");
                    }
                    drop(lane);
                }
            };
            tokio::select! {
                () = record => {}
                never = core.keep_claims(Outbox::ChannelPosts, &holder, &held, &hold) => match never {},
            }
        });
    }
}
