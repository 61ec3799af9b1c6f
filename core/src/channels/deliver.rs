//! The announcer pass: claim due channel posts, in order per channel, render them (a storm
//! becomes one summary), post them, and record the outcomes. Every replica runs it beside its
//! notifier (never inside the notifier's pass, so a slow chat service cannot delay a page).
//!
//! - Due rows, claims and lanes are the pages' (`outbox`): a dead replica's posts pass on
//!   within seconds; a replica starts a post only while its claim has a second to run, and writes
//!   an outcome only where the claim still names it.
//! - Order: a post waits while an earlier post of its channel waits for a retry or is in another
//!   replica's hands, so a channel hears an incident's events in the order they happened.
//! - Failures are retried with the pages' backoff (5 s doubling to 10 minutes) for a day, then
//!   given up; a `Retry-After` (Slack's 429, Matrix's `retry_after_ms`) holds the whole channel.
//!   The channel shows as failing with the last sentence until a post gets through.
//! - A storm: a channel gets at most `BUNDLE_AFTER` messages a minute; beyond them, posts go as
//!   one summary, by the pages' bundling rule (`domain::paging::bundling`).

use super::send::Target;
use crate::db::Arg;
use crate::incidents::reads::{IncidentRow, INCIDENT_COLUMNS};
use crate::lanes::{gather, Lane};
use crate::outbox::{Claim, Hold, Outbox, OutboxRow};
use crate::roads::announcement::{Announcement, Body, Item};
use crate::{Core, Result};
use klaxon_domain::channel::ChannelEvent;
use klaxon_domain::incident::Incident;
use klaxon_domain::paging::{bundling, Bundling, BUNDLE_AFTER, BUNDLE_WINDOW};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use tokio::task::JoinSet;

/// Posts claimed per pass.
const BATCH: i64 = 500;

/// The channels' lanes still sending when their pass went on, and the posts they hold.
pub(super) type Running = JoinSet<(ChannelOutcome, Lane<i64>)>;

/// What one announcer pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct AnnounceReport {
    /// Messages that got through (a summary is one).
    pub sent: u64,
    /// Posts that went inside a summary.
    pub summarised: u64,
    /// Messages that failed (to be retried, or given up).
    pub failed: u64,
    /// Posts held back to go in the channel's next summary.
    pub waiting: u64,
}

impl AnnounceReport {
    pub fn is_idle(&self) -> bool {
        *self == AnnounceReport::default()
    }
}

#[derive(sqlx::FromRow, Clone)]
struct Claimed {
    id: i64,
    channel_id: i64,
    incident_id: i64,
    #[sqlx(try_from = "String")]
    event: ChannelEvent,
    at: i64,
    actor_id: Option<i64>,
    text: String,
    attempts: i64,
    waited: i64,
    /// An event the channel does not hear: its messages are edited, nothing is posted.
    quiet: i64,
}

impl OutboxRow for Claimed {
    fn id(&self) -> i64 {
        self.id
    }
}

const CLAIMED: &str =
    "id, channel_id, incident_id, event, at, actor_id, text, attempts, waited, quiet";

/// What rendering a pass's posts needs (`Core::context`).
struct Context {
    incidents: HashMap<i64, Incident>,
    actors: HashMap<i64, String>,
    /// Per channel: messages in the bundling window, and when the oldest of them went.
    window: HashMap<i64, (i64, i64)>,
}

/// One message to send: the posts it stands for, the first carrying it.
struct Outgoing {
    message: Announcement,
    posts: Vec<i64>,
    attempts: i64,
    /// The channel's messages are edited (`Message::Update`): quiet posts.
    update: bool,
}

/// What became of one channel's messages.
pub(super) struct ChannelOutcome {
    pub channel_id: i64,
    pub kind: &'static str,
    /// Every post the lane was given.
    pub posts: Vec<i64>,
    /// The posts of each message that got through.
    pub sent: Vec<Vec<i64>>,
    /// The message that failed: its posts, attempts so far, the sentence, the wait asked for.
    pub failed: Option<(Vec<i64>, i64, String, Option<i64>)>,
}

impl Core {
    /// One announcer pass. `holder` names this replica in claims.
    pub async fn announce_tick(&self, holder: &str) -> Result<AnnounceReport> {
        let now = self.now();
        let claim: Claim<Claimed> = self
            .claim_due(
                Outbox::ChannelPosts,
                &self.channel_lanes,
                holder,
                now,
                BATCH,
                CLAIMED,
            )
            .await?;
        let (posts, claimed) = (claim.rows, claim.ids);
        if posts.is_empty() {
            return Ok(AnnounceReport::default());
        }
        let hold = Arc::new(Hold::new(now));
        let (report, (running, held)) = tokio::select! {
            r = self.announce_claimed(holder, posts, &hold, now) => r?,
            never = self.keep_claims(Outbox::ChannelPosts, holder, &claimed, &hold) => match never {},
        };
        // Whatever was claimed and not settled goes back, for the next pass; a channel still
        // sending keeps its posts until its lane ends (`finish_channels_alone`).
        let settled: Vec<i64> = claimed
            .iter()
            .copied()
            .filter(|id| !held.contains(id))
            .collect();
        self.release_posts(holder, &settled).await?;
        self.finish_channels_alone(holder, running, held.into_iter().collect(), hold);
        Ok(report)
    }

    /// Renders the claimed posts per channel, starts a lane per channel, and records what the
    /// lanes that ended within `Config::lane_wait` did; returns the lanes still sending and the
    /// posts they hold.
    async fn announce_claimed(
        &self,
        holder: &str,
        posts: Vec<Claimed>,
        hold: &Arc<Hold>,
        now: i64,
    ) -> Result<(AnnounceReport, (Running, HashSet<i64>))> {
        let mut report = AnnounceReport::default();
        let mut by_channel: BTreeMap<i64, Vec<Claimed>> = BTreeMap::new();
        for p in posts {
            by_channel.entry(p.channel_id).or_default().push(p);
        }
        let Context {
            incidents,
            actors,
            window,
        } = self.context(&by_channel, now).await?;
        let mut plans = Vec::new();
        let mut postponed: Vec<(i64, i64)> = Vec::new();
        for (channel_id, posts) in by_channel {
            let Ok(target) = self.channel_target_of(channel_id).await else {
                continue; // Deleted since: its posts went with it.
            };
            let (pushed, oldest) = window.get(&channel_id).copied().unwrap_or((0, now));
            let waiting = posts.iter().any(|p| p.waited == 1);
            let item = |p: &Claimed| {
                let incident = incidents.get(&p.incident_id)?.clone();
                Some(Item {
                    post_id: p.id,
                    event: p.event,
                    at: p.at,
                    incident,
                    actor: p.actor_id.and_then(|a| actors.get(&a).cloned()),
                    text: p.text.clone(),
                })
            };
            let (quiet, posts): (Vec<Claimed>, Vec<Claimed>) =
                posts.into_iter().partition(|p| p.quiet == 1);
            let quiet: Vec<Item> = quiet.iter().filter_map(item).collect();
            let items: Vec<(Item, i64)> = posts
                .iter()
                .filter_map(|p| Some((item(p)?, p.attempts)))
                .collect();
            let message = |body: Body| Announcement {
                team_id: target.team_id,
                team: target.team.clone(),
                public_url: self.config.public_url.clone(),
                body,
                interactive: self.config.roads.slack_signing_secret.is_some(),
            };
            let mut outgoing = Vec::new();
            // Edits go after the channel's messages, in one update, and never wait for a summary.
            let update = (!quiet.is_empty()).then(|| Outgoing {
                posts: quiet.iter().map(|i| i.post_id).collect(),
                attempts: 0,
                message: message(Body::Summary(quiet)),
                update: true,
            });
            let split = match bundling(items.len(), pushed, waiting, BUNDLE_AFTER) {
                _ if items.is_empty() => 0,
                Bundling::Wait => {
                    postponed.extend(
                        items
                            .iter()
                            .map(|(i, _)| (i.post_id, oldest + BUNDLE_WINDOW)),
                    );
                    report.waiting += items.len() as u64;
                    plans.extend(update.map(|u| (target, vec![u])));
                    continue;
                }
                Bundling::Alone => items.len(),
                Bundling::Split { alone } => alone,
            };
            let (alone, rest) = items.split_at(split.min(items.len()));
            for (item, attempts) in alone {
                outgoing.push(Outgoing {
                    posts: vec![item.post_id],
                    attempts: *attempts,
                    message: message(Body::One(Box::new(item.clone()))),
                    update: false,
                });
            }
            if !rest.is_empty() {
                outgoing.push(Outgoing {
                    posts: rest.iter().map(|(i, _)| i.post_id).collect(),
                    attempts: rest.iter().map(|(_, a)| *a).max().unwrap_or(0),
                    message: message(Body::Summary(rest.iter().map(|(i, _)| i.clone()).collect())),
                    update: false,
                });
            }
            outgoing.extend(update);
            plans.push((target, outgoing));
        }

        let mut lanes = JoinSet::new();
        // The posts each channel's lane holds until it ends.
        let mut in_lanes: HashMap<i64, Vec<i64>> = HashMap::new();
        for (target, outgoing) in plans {
            let Some(lane) = self.channel_lanes.open(target.id) else {
                continue; // Not sent: released for the next pass.
            };
            let posts = outgoing.iter().flat_map(|o| o.posts.iter().copied());
            in_lanes.insert(target.id, posts.collect());
            let (core, hold) = (self.clone(), hold.clone());
            lanes.spawn(async move { (core.post_in_order(target, outgoing, &hold).await, lane) });
        }
        let (finished, running) = gather(lanes, self.config.lane_wait).await;
        for (outcome, _) in &finished {
            in_lanes.remove(&outcome.channel_id);
        }
        let (outcomes, lanes): (Vec<_>, Vec<_>) = finished.into_iter().unzip();
        let report = self
            .record_posts(holder, &postponed, &outcomes, report)
            .await?;
        drop(lanes);
        let still = in_lanes.into_values().flatten().collect();
        Ok((report, (running, still)))
    }

    /// What rendering a pass's posts needs, in three queries: their incidents, the people who
    /// acted, and how many messages each channel had in the bundling window (and when the oldest
    /// of them went).
    async fn context(&self, by_channel: &BTreeMap<i64, Vec<Claimed>>, now: i64) -> Result<Context> {
        let channel_ids: Vec<i64> = by_channel.keys().copied().collect();
        let incident_ids: Vec<i64> = by_channel
            .values()
            .flatten()
            .map(|p| p.incident_id)
            .collect();
        let actor_ids: Vec<i64> = by_channel
            .values()
            .flatten()
            .filter_map(|p| p.actor_id)
            .collect();
        let incidents: HashMap<i64, Incident> = self
            .db
            .fetch_in::<IncidentRow>(
                &format!("SELECT {INCIDENT_COLUMNS} FROM incidents i WHERE i.id IN ({{ids}})"),
                &[],
                &dedup(incident_ids),
            )
            .await?
            .into_iter()
            .map(|r| {
                let i = Incident::from(r);
                (i.id, i)
            })
            .collect();
        let actors: HashMap<i64, String> = self
            .db
            .fetch_in::<(i64, String)>(
                "SELECT id, username FROM users WHERE id IN ({ids})",
                &[],
                &dedup(actor_ids),
            )
            .await?
            .into_iter()
            .collect();
        // Messages each channel had in the window, and when the oldest of them went.
        let window: HashMap<i64, (i64, i64)> = self
            .db
            .fetch_in::<(i64, i64, i64)>(
                "SELECT channel_id, COUNT(*), MIN(sent_at) FROM channel_posts WHERE state = 'sent' \
                 AND carried_by IS NULL AND quiet = 0 AND sent_at > $1 AND channel_id IN ({ids}) \
                 GROUP BY channel_id",
                &[Arg::Int(now - BUNDLE_WINDOW)],
                &channel_ids,
            )
            .await?
            .into_iter()
            .map(|(c, n, oldest)| (c, (n, oldest)))
            .collect();
        Ok(Context {
            incidents,
            actors,
            window,
        })
    }

    /// Sends one channel's messages in order, stopping at the first failure (the rest wait
    /// behind it) or when the claim may have lapsed.
    async fn post_in_order(
        &self,
        target: Target,
        outgoing: Vec<Outgoing>,
        hold: &Hold,
    ) -> ChannelOutcome {
        let mut outcome = ChannelOutcome {
            channel_id: target.id,
            kind: target.kind.as_str(),
            posts: outgoing.iter().flat_map(|o| o.posts.clone()).collect(),
            sent: Vec::new(),
            failed: None,
        };
        for o in outgoing {
            if !hold.valid(self.now()) {
                break;
            }
            let delivery = format!("klaxon-{}", o.posts[0]);
            match self.post_to(&target, &o.message, &delivery, o.update).await {
                Ok(()) => outcome.sent.push(o.posts),
                Err(failure) => {
                    let (sentence, wait) = (failure.reason, failure.retry_after);
                    outcome.failed = Some((o.posts, o.attempts, sentence, wait));
                    break;
                }
            }
        }
        outcome
    }
}

fn dedup(mut ids: Vec<i64>) -> Vec<i64> {
    ids.sort_unstable();
    ids.dedup();
    ids
}
