//! The second half of a notifier pass: claim due pages, plan them (`plan`), write their tokens
//! and cancellations, publish, and record the outcomes — a few statements per batch, not per
//! page, because SQLite has one writer and every PostgreSQL statement is a round trip.

use super::bundle::Push;
use super::failover::{fail_over, forget_gone};
use super::message::{compose_summary, Listed};
use super::notifier::BATCH;
use super::plan::{Claimed, Plan};
use super::publish::Outcome;
use super::record::{
    record_cancelled, record_failure, record_held, record_recovered, record_sent, record_summaries,
    record_waiting, topic_backoff,
};
use super::send::methods_of;
use super::tokens::TOKEN_TTL;
use crate::db::{insert_json, insert_rows, Col::*, Tx};
use crate::metrics::{PageLabel, RoadLabel};
use crate::outbox::{Claim, Hold, Outbox};
use crate::roads::{Page, Roads};
use crate::secrets::{hash_token, new_token};
use crate::{Core, Result};
use klaxon_domain::paging::retry_delay;

/// What one delivery batch did.
#[derive(Default)]
pub(super) struct Delivered {
    pub sent: u64,
    pub failed: u64,
    pub cancelled: u64,
    /// Pages held for a maintenance window.
    pub held: u64,
    /// Whether the batch came back full (more may be due).
    pub more: bool,
    /// Time spent waiting on the push service.
    pub publishing: std::time::Duration,
}

/// An acknowledge token row, written before its page is published.
#[derive(serde::Serialize)]
struct Token {
    token_hash: String,
    incident_id: i64,
    user_id: Option<i64>,
    expires_at: i64,
    /// Set for a summary's Acknowledge all.
    bundle_id: Option<i64>,
}

impl Core {
    /// Claims due pages, plans them, writes their tokens and cancellations in one
    /// transaction, publishes them in parallel, and records the outcomes in one transaction.
    pub(super) async fn deliver_due(&self, holder: &str) -> Result<Delivered> {
        let now = self.now();
        let claim: Claim<Claimed> = self
            .claim_due(
                Outbox::Pages,
                &self.page_lanes,
                holder,
                now,
                BATCH,
                Claimed::COLUMNS,
            )
            .await?;
        let (pages, claimed, more) = (claim.rows, claim.ids, claim.full);
        if pages.is_empty() {
            return Ok(Delivered {
                more,
                ..Delivered::default()
            });
        }
        let hold = std::sync::Arc::new(Hold::new(now));
        // The claims are renewed until the outcomes are written (see `claim`); a lane still
        // sending when this pass goes on renews its own (`publish::finish_alone`).
        let mut done = tokio::select! {
            done = self.deliver_claimed(holder, pages, &hold, &claimed, now) => done?,
            never = self.keep_claims(Outbox::Pages, holder, &claimed, &hold) => match never {},
        };
        done.more = more;
        Ok(done)
    }

    /// Plans the claimed pages and bundles them (`bundle`); writes their tokens, summaries,
    /// cancellations and waits in one transaction; publishes while the hold is valid; and
    /// records the outcomes in one transaction.
    async fn deliver_claimed(
        &self,
        holder: &str,
        pages: Vec<Claimed>,
        hold: &std::sync::Arc<Hold>,
        claimed: &[i64],
        now: i64,
    ) -> Result<Delivered> {
        let mut done = Delivered::default();
        let mut sends = Vec::new();
        let mut others = Vec::new();
        for plan in self.plan(pages, now).await? {
            match plan {
                Plan::Send(send) => sends.push(*send),
                other => others.push(other),
            }
        }
        let bundled = self.bundle(sends, now).await?;

        // Its statements find their rows by id (`begin_indexed`): their plans are kept.
        let mut tx = self.db.begin_indexed().await?;
        done.cancelled = record_cancelled(&mut tx, holder, &others).await?;
        done.held = record_held(&mut tx, holder, &others, now).await?;
        record_waiting(
            &mut tx,
            holder,
            &bundled.waiting,
            now,
            self.config.page_bundle_after,
        )
        .await?;
        let pushes = self.prepare(&mut tx, holder, bundled.pushes, now).await?;
        let methods = methods_of(&mut tx, pushes.iter().map(|(p, _)| p.first())).await?;
        tx.commit().await?;

        let started = std::time::Instant::now();
        let (finished, running) = self.publish(pushes, methods, hold).await;
        done.publishing = started.elapsed();
        let (outcomes, lanes): (Vec<_>, Vec<_>) = finished.into_iter().unzip();
        let recorded = self
            .record_outcomes(holder, outcomes.into_iter().flatten().collect())
            .await?;
        drop(lanes);
        self.finish_alone(holder, running, claimed, hold);
        done.sent = recorded.sent;
        done.failed = recorded.failed;
        Ok(done)
    }

    /// Writes what became of a lane's (or a batch's) pushes, in one transaction.
    pub(super) async fn record_outcomes(
        &self,
        holder: &str,
        outcomes: Vec<(Push, Outcome)>,
    ) -> Result<Delivered> {
        let mut done = Delivered::default();
        let now = self.now();
        let mut sent = Vec::new();
        let mut summaries = Vec::new();
        let mut failed = Vec::new();
        let mut backing_off = Vec::new();
        let mut replan = Vec::new();
        // A failure brought a person's next road forward, or paged someone else instead.
        let mut moved_on = false;
        let mut tx = self.db.begin_indexed().await?;
        for (push, outcome) in &outcomes {
            match outcome {
                Outcome::Sent => {
                    sent.extend(push.pages());
                    if let Push::Summary(pages) = push {
                        summaries.push(pages);
                    }
                }
                Outcome::Failed(e) => {
                    if e.rate_limited {
                        // As asked (at most a day; 5 s when the service said nothing).
                        let wait = retry_delay(1, e.retry_after);
                        topic_backoff(&mut tx, push.topic(), now + wait).await?;
                    }
                    if let Some(id) = push.first().method_id.filter(|_| e.gone) {
                        forget_gone(&mut tx, id).await?;
                    }
                    for page in push.pages() {
                        done.failed += 1;
                        let given_up = record_failure(&mut tx, holder, page, e, now).await?;
                        if let Some(given_up) = given_up {
                            moved_on |=
                                fail_over(&mut tx, &self.roads, page, e, given_up, now).await?;
                        }
                        failed.push((label(&self.roads, page), given_up));
                    }
                }
                Outcome::BackingOff => backing_off.extend(push.pages().map(|p| p.id)),
                Outcome::Replan => replan.extend(push.pages().map(|p| p.id)),
                // The claim lapsed: the page is another replica's now, or this one's next pass.
                Outcome::Lapsed => {}
            }
        }
        done.sent = sent.len() as u64;
        let all_clears = record_sent(&mut tx, holder, &sent, now).await?;
        record_recovered(&mut tx, &sent, now).await?;
        record_summaries(&mut tx, &summaries, now).await?;
        // Not tried, because their topic was refused earlier in the batch: they wait for the
        // topic's Retry-After (the due query skips a topic backing off) and count as late.
        tx.execute_in(
            "UPDATE pages SET first_due_at = COALESCE(first_due_at, due_at), claimed_by = NULL, claimed_until = NULL \
             WHERE claimed_by = $1 AND id IN ({ids})",
            &[holder.into()],
            &backing_off,
        )
        .await?;
        // Owned while they waited: released, so the next pass cancels them or sends the rest.
        tx.execute_in(
            "UPDATE pages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND id IN ({ids})",
            &[holder.into()],
            &replan,
        )
        .await?;
        let recovered = self.bring_back(&mut tx, &sent, now).await?;
        tx.commit().await?;
        let m = &self.metrics;
        for page in &sent {
            m.pages_sent.get_or_create(&label(&self.roads, page)).inc();
            m.page_latency
                .get_or_create(&road_label(&self.roads, page))
                .observe((now - page.first_due_at).max(0) as f64);
        }
        m.page_summaries.inc_by(summaries.len() as u64);
        for (page, given_up) in failed {
            m.pages_failed.get_or_create(&page).inc();
            match given_up {
                Some(true) => m.pages_given_up.get_or_create(&page).inc(),
                Some(false) => m.pages_retried.get_or_create(&page).inc(),
                None => 0,
            };
        }
        if all_clears > 0 || recovered > 0 || !replan.is_empty() || moved_on {
            self.wake_notifier();
        }
        Ok(done)
    }

    /// A shared service (the ntfy server, the mail server, the homeserver) answers again: what
    /// waited for it goes now, not at its backoff. Only that road's pages: another road's outage,
    /// or another subscription's push service, is not over because this one answered. Returns
    /// how many pages it brought forward.
    async fn bring_back(&self, tx: &mut Tx, sent: &[&Claimed], now: i64) -> Result<u64> {
        let shared = |road: &str| {
            self.roads
                .get(road)
                .is_some_and(|r| r.info().shared_service)
        };
        let back: Vec<&str> = sent
            .iter()
            .map(|p| p.road.as_str())
            .filter(|r| shared(r))
            .collect();
        if back.is_empty() {
            return Ok(0);
        }
        let waiting: Vec<(i64, String)> = sqlx::query_as(
            "SELECT id, road FROM pages WHERE state = 'pending' AND outage = 1 AND due_at > $1",
        )
        .bind(now)
        .fetch_all(&mut **tx)
        .await?;
        let ids: Vec<i64> = waiting
            .into_iter()
            .filter(|(_, road)| back.contains(&road.as_str()))
            .map(|(id, _)| id)
            .collect();
        tx.execute_in(
            "UPDATE pages SET due_at = $1 WHERE state = 'pending' AND outage = 1 AND due_at > $1 AND id IN ({ids})",
            &[now.into()],
            &ids,
        )
        .await
    }

    /// Writes what the pushes carry before they go: each page's acknowledge token, and for a
    /// summary its bundle row (the link and the Acknowledge-all token name it), its pages'
    /// membership, and its message.
    async fn prepare(
        &self,
        tx: &mut Tx,
        holder: &str,
        pushes: Vec<Push>,
        now: i64,
    ) -> Result<Vec<(Push, Page)>> {
        let mut tokens: Vec<Token> = Vec::new();
        let mut prepared = Vec::with_capacity(pushes.len());
        for push in pushes {
            match push {
                Push::One(send) => {
                    if let (Some(token), Some(incident_id)) = (&send.token, send.page.incident_id) {
                        tokens.push(Token {
                            token_hash: hash_token(token),
                            incident_id,
                            user_id: send.page.user_id,
                            expires_at: now + TOKEN_TTL,
                            bundle_id: None,
                        });
                    }
                    let message = send.message.clone();
                    prepared.push((Push::One(send), message));
                }
                Push::Summary(sends) => {
                    let first = &sends[0].page;
                    let user_id = first
                        .user_id
                        .filter(|u| sends.iter().all(|s| s.page.user_id == Some(*u)));
                    let (bundle_id,): (i64,) = sqlx::query_as(
                        "INSERT INTO page_bundles (topic, user_id, created_at) VALUES ($1, $2, $3) RETURNING id",
                    )
                    .bind(&first.topic)
                    .bind(user_id)
                    .bind(now)
                    .fetch_one(&mut **tx)
                    .await?;
                    let ids: Vec<i64> = sends.iter().map(|s| s.page.id).collect();
                    tx.execute_in(
                        "UPDATE pages SET bundle_id = $1, bundled = 1 WHERE claimed_by = $2 AND id IN ({ids})",
                        &[bundle_id.into(), holder.into()],
                        &ids,
                    )
                    .await?;
                    // One token for the whole summary, when one of its pages would have carried
                    // Acknowledge and it is for one person.
                    let acknowledged = sends.iter().find(|s| s.token.is_some());
                    let token = match (user_id, acknowledged.and_then(|s| s.page.incident_id)) {
                        (Some(user), Some(incident_id)) => {
                            let token = new_token();
                            tokens.push(Token {
                                token_hash: hash_token(&token),
                                incident_id,
                                user_id: Some(user),
                                expires_at: now + TOKEN_TTL,
                                bundle_id: Some(bundle_id),
                            });
                            Some(token)
                        }
                        _ => None,
                    };
                    let listed: Vec<Listed> = sends
                        .iter()
                        .filter_map(|s| {
                            let gist = s.gist.as_ref()?;
                            Some(Listed {
                                kind: s.page.kind,
                                severity: gist.severity,
                                title: &gist.title,
                                team: &gist.team,
                            })
                        })
                        .collect();
                    let message =
                        compose_summary(&self.config.public_url, bundle_id, &listed, token);
                    prepared.push((Push::Summary(sends), message));
                }
            }
        }
        let sql = insert_rows(
            tx.backend,
            "ack_tokens",
            &[
                Text("token_hash"),
                Int("incident_id"),
                Int("user_id"),
                Int("expires_at"),
                Int("bundle_id"),
            ],
        );
        insert_json(tx, &sql, &tokens).await?;
        Ok(prepared)
    }
}

/// The metrics labels of a page: its kind and road.
fn label(roads: &Roads, page: &Claimed) -> PageLabel {
    PageLabel {
        kind: page.kind.as_str(),
        road: road_label(roads, page).road,
    }
}

fn road_label(roads: &Roads, page: &Claimed) -> RoadLabel {
    RoadLabel {
        road: roads.get(&page.road).map_or("other", |r| r.info().name),
    }
}
