//! The second half of a notifier pass: claim due pages, plan them (`plan`), write their tokens
//! and cancellations, publish, and record the outcomes — a few statements per batch, not per
//! page, because SQLite has one writer and every PostgreSQL statement is a round trip.

use super::all_clears;
use super::bundle::Push;
use super::claim::{Hold, CLAIM_FOR};
use super::failover::{fail_over, forget_gone};
use super::message::{compose_summary, Listed};
use super::notifier::BATCH;
use super::plan::{Claimed, Plan, Send};
use super::publish::Outcome;
use super::tokens::TOKEN_TTL;
use super::Cleared;
use crate::db::{insert_json, insert_rows, Col::*, Tx};
use crate::metrics::{PageLabel, RoadLabel};
use crate::roads::{Failure, Page};
use crate::secrets::{hash_token, new_token};
use crate::timeline::{timeline, timelines, Entry};
use crate::{Core, Result};
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::contact::Destination;
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::{retry_delay, PageKind, GIVE_UP_AFTER};
use klaxon_domain::rules::FAIL_OVER_AFTER;
use std::collections::{BTreeMap, HashMap, HashSet};

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

/// An incident whose opening page was just confirmed, with its state.
#[derive(sqlx::FromRow)]
struct Opened {
    #[sqlx(flatten)]
    cleared: Cleared,
    #[sqlx(try_from = "String")]
    state: IncidentState,
}

impl Core {
    /// Claims due pages, plans them, writes their tokens and cancellations in one
    /// transaction, publishes them in parallel, and records the outcomes in one transaction.
    pub(super) async fn deliver_due(&self, holder: &str) -> Result<Delivered> {
        let now = self.now();
        // Read outside any transaction (an idle pass never takes the writer), then claimed by
        // id: one subquery-driven UPDATE let PostgreSQL, with statistics from an emptier
        // outbox, rescan the due pages once per pending page.
        // A page waits while an earlier page to its topic waits for the push service to come
        // back, so a person's pages arrive in the order they were queued after an outage; a page
        // that failed for itself (a refused topic) holds nothing back. A topic the service
        // rate-limited (429) waits for its Retry-After; other topics do not.
        let due: Vec<(i64, String)> = sqlx::query_as(
                "SELECT id, topic FROM pages p WHERE state = 'pending' AND due_at <= $1 \
                 AND (claimed_until IS NULL OR claimed_until < $1) \
                 AND NOT EXISTS (SELECT 1 FROM pages e WHERE e.topic = p.topic AND e.state = 'pending' \
                   AND e.outage = 1 AND e.id < p.id AND e.due_at > $1 LIMIT 1 OFFSET 0) \
                 AND NOT EXISTS (SELECT 1 FROM topic_backoff b WHERE b.topic = p.topic AND b.retry_at > $1) \
                 ORDER BY due_at, id LIMIT $2",
            )
            .bind(now)
            .bind(BATCH)
            .fetch_all(&self.db.pool)
            .await?;
        let full = due.len() as i64 == BATCH;
        let ids = self.page_lanes.claimable(due);
        if ids.is_empty() {
            return Ok(Delivered::default());
        }
        // Each claim stands alone: a row is claimed or not, whatever becomes of the others.
        let mut pages: Vec<Claimed> = self
            .db
            .write_in(
                &format!(
                    "UPDATE pages SET claimed_by = $1, claimed_until = $2 WHERE state = 'pending' AND due_at <= $3 \
                     AND (claimed_until IS NULL OR claimed_until < $3) AND id IN ({{ids}}) RETURNING {}",
                    Claimed::COLUMNS
                ),
                &[holder.into(), (now + CLAIM_FOR).into(), now.into()],
                &ids,
            )
            .await?;
        let more = full;
        if pages.is_empty() {
            return Ok(Delivered {
                more,
                ..Delivered::default()
            });
        }
        pages.sort_by_key(|p| p.id);
        let claimed: Vec<i64> = pages.iter().map(|p| p.id).collect();
        let hold = std::sync::Arc::new(Hold::new(now));
        // The claims are renewed until the outcomes are written (see `claim`); a lane still
        // sending when this pass goes on renews its own (`publish::finish_alone`).
        let mut done = tokio::select! {
            done = self.deliver_claimed(holder, pages, &hold, &claimed, now) => done?,
            never = self.keep_claims(holder, &claimed, &hold) => match never {},
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

        let mut tx = self.db.begin().await?;
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
        tx.commit().await?;

        let methods = self
            .methods_of(pushes.iter().map(|(p, _)| p.topic()))
            .await?;
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
        let mut tx = self.db.begin().await?;
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
                    if let Some(id) = Destination::parse(push.topic())
                        .method_id()
                        .filter(|_| e.gone)
                    {
                        forget_gone(&mut tx, id).await?;
                    }
                    for page in push.pages() {
                        done.failed += 1;
                        let given_up = record_failure(&mut tx, holder, page, e, now).await?;
                        if let Some(given_up) = given_up {
                            moved_on |=
                                fail_over(&mut tx, &self.roads, page, e, given_up, now).await?;
                        }
                        failed.push((label(page), given_up));
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
        // A shared service (the ntfy server, the mail server, the homeserver) answers again:
        // what waited for it goes now, not at its backoff. Only that road's pages: another
        // road's outage, or another subscription's push service, is not over because this
        // one answered.
        let shared = |topic: &str| {
            let road = Destination::parse(topic).kind();
            self.roads
                .get(road.as_str())
                .is_some_and(|r| r.info().shared_service)
                .then_some(road)
        };
        let back: Vec<_> = sent.iter().filter_map(|p| shared(&p.topic)).collect();
        let recovered = if back.is_empty() {
            0
        } else {
            let waiting: Vec<(i64, String)> = sqlx::query_as(
                "SELECT id, topic FROM pages WHERE state = 'pending' AND outage = 1 AND due_at > $1",
            )
            .bind(now)
            .fetch_all(&mut *tx)
            .await?;
            let ids: Vec<i64> = waiting
                .into_iter()
                .filter(|(_, topic)| back.contains(&Destination::parse(topic).kind()))
                .map(|(id, _)| id)
                .collect();
            tx.execute_in(
                "UPDATE pages SET due_at = $1 WHERE state = 'pending' AND outage = 1 AND due_at > $1 AND id IN ({ids})",
                &[now.into()],
                &ids,
            )
            .await?
        };
        tx.commit().await?;
        let m = &self.metrics;
        for page in &sent {
            m.pages_sent.get_or_create(&label(page)).inc();
            m.page_latency
                .get_or_create(&road_label(page))
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

/// A topic refused with 429 waits until `retry_at`; the due query skips its pages until then.
async fn topic_backoff(tx: &mut Tx, topic: &str, retry_at: i64) -> Result<()> {
    sqlx::query(
        "INSERT INTO topic_backoff (topic, retry_at) VALUES ($1, $2) \
         ON CONFLICT (topic) DO UPDATE SET retry_at = excluded.retry_at",
    )
    .bind(topic)
    .bind(retry_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Pages whose topic had its pushes for the minute wait for the topic's next summary; the
/// first time, their timelines say so.
async fn record_waiting(
    tx: &mut Tx,
    holder: &str,
    waiting: &[(Claimed, i64)],
    now: i64,
    after: i64,
) -> Result<()> {
    let mut by_until: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for (page, until) in waiting {
        by_until.entry(*until).or_default().push(page.id);
    }
    for (until, ids) in &by_until {
        tx.execute_in(
            "UPDATE pages SET bundled = 1, due_at = $1, claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $2 AND id IN ({ids})",
            &[(*until).into(), holder.into()],
            ids,
        )
        .await?;
    }
    // Once per page, when it starts waiting; the recipient is read once per topic.
    let mut who: HashMap<&str, String> = HashMap::new();
    let mut entries = Vec::new();
    for (page, _) in waiting.iter().filter(|(p, _)| p.bundled == 0) {
        let Some(incident_id) = page.incident_id else {
            continue;
        };
        if !who.contains_key(page.topic.as_str()) {
            who.insert(&page.topic, recipient(tx, page).await?);
        }
        let text = format!(
            "page to {} waits for a summary push: {after} pushes reached them in the last minute",
            who[page.topic.as_str()]
        );
        entries.push(paged_entry(incident_id, now, text));
    }
    timelines(tx, &entries).await
}

/// A `paged` timeline entry written by the notifier.
fn paged_entry(incident_id: i64, at: i64, text: String) -> Entry {
    Entry {
        incident_id,
        at,
        kind: TimelineKind::Paged,
        actor_id: None,
        text,
    }
}

/// Says on each incident of a sent summary that it was paged in it.
async fn record_summaries(tx: &mut Tx, summaries: &[&Vec<Send>], now: i64) -> Result<()> {
    let mut entries = Vec::new();
    for pages in summaries {
        let who = recipient(tx, &pages[0].page).await?;
        let n = pages.len();
        for send in pages.iter() {
            let Some(incident_id) = send.page.incident_id else {
                continue;
            };
            let text = format!(
                "{} page to {who} went in one summary push with {} other incidents",
                send.page.kind.as_str().replace('_', "-"),
                n - 1
            );
            entries.push(paged_entry(incident_id, now, text));
        }
    }
    timelines(tx, &entries).await
}

/// Marks the pages planned for cancellation cancelled, each with its reason; returns how many.
async fn record_cancelled(tx: &mut Tx, holder: &str, plans: &[Plan]) -> Result<u64> {
    let mut cancels: BTreeMap<&'static str, Vec<i64>> = BTreeMap::new();
    for plan in plans {
        if let Plan::Cancel(page, why) = plan {
            cancels.entry(*why).or_default().push(page.id);
        }
    }
    let mut cancelled = 0;
    for (why, ids) in &cancels {
        cancelled += tx
            .execute_in(
                "UPDATE pages SET state = 'cancelled', last_error = $1, claimed_by = NULL WHERE claimed_by = $2 AND id IN ({ids})",
                &[(*why).into(), holder.into()],
                ids,
            )
            .await?;
    }
    Ok(cancelled)
}

/// Holds pages of teams in maintenance until the window's end, each with a timeline entry, and
/// pushes their incidents' reminders and ladder timeout past the window, so the end brings
/// what was held and not, at once, what fell due meanwhile. Returns how many.
async fn record_held(tx: &mut Tx, holder: &str, plans: &[Plan], now: i64) -> Result<u64> {
    let mut by_end: BTreeMap<i64, Vec<&Claimed>> = BTreeMap::new();
    for plan in plans {
        if let Plan::Hold(page, until) = plan {
            by_end.entry(*until).or_default().push(page);
        }
    }
    let mut held = 0;
    for (until, pages) in &by_end {
        let ids: Vec<i64> = pages.iter().map(|p| p.id).collect();
        held += tx
            .execute_in(
                "UPDATE pages SET due_at = $1, first_due_at = NULL, claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $2 AND id IN ({ids})",
                &[(*until).into(), holder.into()],
                &ids,
            )
            .await?;
        let mut incidents: Vec<i64> = pages.iter().filter_map(|p| p.incident_id).collect();
        incidents.sort_unstable();
        incidents.dedup();
        tx.execute_in(
            "UPDATE incidents SET reminded_at = $1 WHERE reminded_at < $1 AND id IN ({ids})",
            &[(*until).into()],
            &incidents,
        )
        .await?;
        // A level entered meanwhile waits its whole timeout after the window.
        tx.execute_in(
            "UPDATE incidents SET esc_due_at = esc_due_at + $1 WHERE esc_due_at > $2 AND esc_due_at <= $3 AND id IN ({ids})",
            &[(until - now).into(), now.into(), (*until).into()],
            &incidents,
        )
        .await?;
        let end = klaxon_domain::Timestamp(*until).to_rfc3339();
        for page in pages {
            let Some(incident_id) = page.incident_id else {
                continue;
            };
            let who = recipient(tx, page).await?;
            let text = format!(
                "{} page to {who} held: the team is in maintenance until {end}",
                page.kind.as_str().replace('_', "-")
            );
            timeline(tx, incident_id, now, TimelineKind::Held, None, &text).await?;
        }
    }
    Ok(held)
}

/// Marks pages sent. Opening pages mark their incidents' openings as sent; an incident that
/// resolved while its opening page was in flight gets its all-clear now. Returns how many
/// all-clears it queued.
async fn record_sent(tx: &mut Tx, holder: &str, pages: &[&Claimed], now: i64) -> Result<usize> {
    let ids: Vec<i64> = pages.iter().map(|p| p.id).collect();
    let confirmed: HashSet<i64> = tx
        .fetch_in::<(i64,)>(
            "UPDATE pages SET state = 'sent', sent_at = $1, attempts = attempts + 1, last_error = NULL, claimed_by = NULL \
             WHERE claimed_by = $2 AND id IN ({ids}) RETURNING id",
            &[now.into(), holder.into()],
            &ids,
        )
        .await?
        .into_iter()
        .map(|r| r.0)
        .collect();
    let mut opened: Vec<i64> = pages
        .iter()
        .filter(|p| p.kind == PageKind::Opening && confirmed.contains(&p.id))
        .filter_map(|p| p.incident_id)
        .collect();
    opened.sort_unstable();
    opened.dedup();
    // An incident that resolved while its opening page was in flight gets its all-clear now
    // (see `all_clears`); a re-sent opening page finds opening_sent already set.
    let resolved: Vec<Cleared> = tx
        .fetch_in::<Opened>(
            &format!(
                "UPDATE incidents SET opening_sent = 1 WHERE opening_sent = 0 AND id IN ({{ids}}) RETURNING {}, state",
                Cleared::COLUMNS
            ),
            &[],
            &opened,
        )
        .await?
        .into_iter()
        .filter(|r| r.state == IncidentState::Resolved)
        .map(|r| r.cleared)
        .collect();
    Ok(all_clears(tx, &resolved, now).await?.len())
}

/// Writes on the timeline when a page that had failed got through at last, so an incident
/// says what happened during an outage of the push service from start to end.
async fn record_recovered(tx: &mut Tx, pages: &[&Claimed], now: i64) -> Result<()> {
    for page in pages.iter().filter(|p| p.attempts > 0) {
        let Some(incident_id) = page.incident_id else {
            continue;
        };
        let who = recipient(tx, page).await?;
        let late = now - page.created_at;
        let text = format!(
            "page to {who} delivered after {} attempts, {late} s after it was queued",
            page.attempts + 1
        );
        timeline(
            tx,
            incident_id,
            now,
            TimelineKind::PushDelivered,
            None,
            &text,
        )
        .await?;
    }
    Ok(())
}

/// The metrics labels of a page: its kind and road.
fn label(page: &Claimed) -> PageLabel {
    PageLabel {
        kind: page.kind.as_str(),
        road: road_label(page).road,
    }
}

fn road_label(page: &Claimed) -> RoadLabel {
    RoadLabel {
        road: Destination::parse(&page.topic).kind().as_str(),
    }
}

/// Schedules the retry of a failed page, or gives it up after a day; the first failure and
/// the giving up are written on the incident's timeline. `Some(true)` when given up,
/// `Some(false)` when it will be retried, `None` when another replica's claim took it.
async fn record_failure(
    tx: &mut Tx,
    holder: &str,
    page: &Claimed,
    e: &Failure,
    now: i64,
) -> Result<Option<bool>> {
    let attempts = page.attempts + 1;
    let give_up = e.permanent || now - page.created_at >= GIVE_UP_AFTER;
    // A page that may yet hand its person to their next road is tried again by the time it
    // would (`FAIL_OVER_AFTER` after it was first due), however far its backoff has grown.
    let mut retry_at = now + retry_delay(attempts, e.retry_after);
    let hand_over_at = page.first_due_at + FAIL_OVER_AFTER;
    if page.failed_over == 0
        && page.kind.wants_owner()
        && page.user_id.is_some()
        && hand_over_at > now
    {
        retry_at = retry_at.min(hand_over_at);
    }
    // A rate-limited page keeps its place: its topic's backoff holds it, and it goes before
    // the topic's later pages when the backoff ends.
    let done = sqlx::query(
        "UPDATE pages SET state = $1, attempts = $2, last_error = $3, first_due_at = COALESCE(first_due_at, due_at), \
         due_at = CASE WHEN $8 = 1 THEN due_at ELSE $4 END, outage = $5, claimed_by = NULL, claimed_until = NULL \
         WHERE id = $6 AND claimed_by = $7",
    )
    .bind(if give_up { "failed" } else { "pending" })
    .bind(attempts)
    .bind(&e.reason)
    .bind(retry_at)
    .bind(i64::from(e.outage))
    .bind(page.id)
    .bind(holder)
    .bind(i64::from(e.rate_limited))
    .execute(&mut **tx)
    .await?;
    if let (1, true, Some(incident_id)) = (
        done.rows_affected(),
        give_up || attempts == 1,
        page.incident_id,
    ) {
        let who = recipient(tx, page).await?;
        let text = if e.permanent {
            format!("page to {who} failed for good: {}", e.reason)
        } else if give_up {
            format!(
                "gave up paging {who} after {attempts} attempts: {}",
                e.reason
            )
        } else {
            format!("page to {who} failed, retrying: {}", e.reason)
        };
        timeline(tx, incident_id, now, TimelineKind::PushFailed, None, &text).await?;
    }
    Ok((done.rows_affected() == 1).then_some(give_up))
}

/// Who a page is for, in words: a username, or the shared topic.
async fn recipient(tx: &mut Tx, page: &Claimed) -> Result<String> {
    if let Some(user) = page.user_id {
        let row: Option<(String,)> = sqlx::query_as("SELECT username FROM users WHERE id = $1")
            .bind(user)
            .fetch_optional(&mut **tx)
            .await?;
        if let Some((name,)) = row {
            return Ok(name);
        }
    }
    Ok(format!("topic {}", page.topic))
}
