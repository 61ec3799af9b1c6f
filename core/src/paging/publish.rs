//! Publishing a batch's pushes, one lane per topic (`crate::lanes`): a topic's pushes go one
//! after another in the order their pages were queued, topics go at once, and a topic that is
//! slow or dead holds up only itself.

use super::bundle::Push;
use super::send::Methods;
use crate::lanes::{gather, Lane};
use crate::outbox::{Hold, Outbox};
use crate::roads::{Failure, Page};
use crate::Core;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use tokio::task::JoinSet;

/// A push goes on a read of its incidents' state at most this old (`Core::owned_now`): one read
/// per push would put a round trip before every push of a flooded topic.
const REREAD_AFTER: std::time::Duration = std::time::Duration::from_millis(50);

/// A failed send that took this long stops its lane (`send_in_order`).
const SLOW_FAILURE: std::time::Duration = std::time::Duration::from_secs(2);

/// What came of one push.
pub(super) enum Outcome {
    Sent,
    Failed(Failure),
    /// Not tried: the claim may have lapsed.
    Lapsed,
    /// Not tried: the topic failed earlier in its lane (a 429, or a failure that took
    /// `SLOW_FAILURE` or more): its pages wait behind that failure.
    BackingOff,
    /// Not tried: an incident of it was owned since it was planned (see `Core::owned_now`), or
    /// its topic's lane was open (or no lane was free) when it was due.
    Replan,
}

/// A topic's outcomes, and its lane, closed once they are recorded.
pub(super) type Finished = (Vec<(Push, Outcome)>, Option<Lane<String>>);

impl Core {
    /// Starts a lane per topic, and returns what the lanes that ended within `Config::lane_wait`
    /// did, and the lanes still sending.
    pub(super) async fn publish(
        &self,
        pushes: Vec<(Push, Page)>,
        methods: Methods,
        hold: &Arc<Hold>,
    ) -> (Vec<Finished>, JoinSet<Finished>) {
        let mut by_topic: BTreeMap<String, Vec<(Push, Page)>> = BTreeMap::new();
        for (push, message) in pushes {
            by_topic
                .entry(push.topic().to_string())
                .or_default()
                .push((push, message));
        }
        let methods = Arc::new(methods);
        let mut running = JoinSet::new();
        let mut not_now = Vec::new();
        for (topic, pushes) in by_topic {
            let Some(lane) = self.page_lanes.open(topic) else {
                let outcomes = pushes.into_iter().map(|(p, _)| (p, Outcome::Replan));
                not_now.push((outcomes.collect(), None));
                continue;
            };
            let (core, methods, hold) = (self.clone(), methods.clone(), hold.clone());
            running.spawn(async move {
                let outcomes = core.send_in_order(pushes, &methods, &hold).await;
                (outcomes, Some(lane))
            });
        }
        let (mut finished, running) = gather(running, self.config.lane_wait).await;
        finished.extend(not_now);
        (finished, running)
    }

    /// One topic's pushes in order. A push whose claim may have lapsed by the time its turn
    /// comes is not sent (`Lapsed`), nor one whose incident was owned meanwhile (`Replan`);
    /// after a 429 or a slow failure, the rest wait behind it (`BackingOff`).
    async fn send_in_order(
        &self,
        pushes: Vec<(Push, Page)>,
        methods: &Methods,
        hold: &Hold,
    ) -> Vec<(Push, Outcome)> {
        let mut outcomes = Vec::with_capacity(pushes.len());
        let mut refused = false;
        // Incidents owned since planning: read before the topic's first push and again
        // whenever the last read is `REREAD_AFTER` old (or from another second of the
        // clock, which tests control), for all of the topic's remaining pushes.
        let mut owned = HashSet::new();
        let mut read_at: Option<(std::time::Instant, i64)> = None;
        for i in 0..pushes.len() {
            let outcome = if refused {
                Outcome::BackingOff
            } else if !hold.valid(self.now()) {
                Outcome::Lapsed
            } else {
                let stale = |(at, second): (std::time::Instant, i64)| {
                    at.elapsed() >= REREAD_AFTER || second != self.now()
                };
                if read_at.is_none_or(stale) {
                    let rest = || pushes[i..].iter().flat_map(|(p, _)| p.pages());
                    // Unreadable: nothing goes that the next pass cannot re-check.
                    owned = self
                        .owned_now(rest(), self.now())
                        .await
                        .unwrap_or_else(|_| rest().filter_map(|p| p.incident_id).collect());
                    read_at = Some((std::time::Instant::now(), self.now()));
                }
                let (push, message) = &pushes[i];
                let owned_meanwhile = push.pages().any(|p| {
                    p.kind.wants_owner() && p.incident_id.is_some_and(|id| owned.contains(&id))
                });
                if owned_meanwhile {
                    Outcome::Replan
                } else {
                    let started = std::time::Instant::now();
                    match self.send_by_road(push, message, methods).await {
                        Ok(()) => Outcome::Sent,
                        Err(e) => {
                            // A 429, or a failure that took its time (a service that does not
                            // answer), is not asked again in this lane: the rest wait behind it.
                            // A quick failure costs little, and the rest are tried.
                            refused =
                                e.rate_limited || (e.outage && started.elapsed() >= SLOW_FAILURE);
                            Outcome::Failed(e)
                        }
                    }
                }
            };
            outcomes.push(outcome);
        }
        let pushes = pushes.into_iter().map(|(push, _)| push);
        pushes.zip(outcomes).collect()
    }

    /// Lets the lanes still sending after their pass finish on their own: each records its
    /// outcomes when it ends, and the batch's claims are renewed until the last has.
    pub(super) fn finish_alone(
        &self,
        holder: &str,
        mut running: JoinSet<Finished>,
        claimed: &[i64],
        hold: &Arc<Hold>,
    ) {
        if running.is_empty() {
            return;
        }
        let (core, holder, claimed, hold) = (
            self.clone(),
            holder.to_string(),
            claimed.to_vec(),
            hold.clone(),
        );
        tokio::spawn(async move {
            let record = async {
                while let Some(ended) = running.join_next().await {
                    let Ok((outcomes, lane)) = ended else {
                        continue;
                    };
                    if let Err(e) = core.record_outcomes(&holder, outcomes).await {
                        tracing::warn!(error = %e, "could not record a lane's pages");
                    }
                    drop(lane);
                    // Its destination's pages queued meanwhile go now, not at the next tick.
                    core.wake_delivery();
                }
            };
            tokio::select! {
                () = record => {}
                never = core.keep_claims(Outbox::Pages, &holder, &claimed, &hold) => match never {},
            }
        });
    }
}
