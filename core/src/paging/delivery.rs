//! The second half of a notifier pass: claim due pages, plan them (`plan`), write their tokens
//! and cancellations, publish, and record the outcomes — a few statements per batch, not per
//! page, because SQLite has one writer and every PostgreSQL statement is a round trip.

use super::all_clears;
use super::claim::{Hold, CLAIM_FOR};
use super::notifier::BATCH;
use super::ntfy::{Message, PushError};
use super::plan::{Claimed, Plan};
use super::tokens::TOKEN_TTL;
use super::Cleared;
use crate::db::{insert_json, insert_rows, Col::*, Tx};
use crate::metrics::PageLabel;
use crate::secrets::hash_token;
use crate::timeline::timeline;
use crate::{Core, Result};
use futures::StreamExt;
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::{retry_delay, PageKind, GIVE_UP_AFTER};
use std::collections::{BTreeMap, HashSet};

/// Publishes in flight at once.
const PARALLEL: usize = 16;

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
struct Token<'a> {
    token_hash: &'a str,
    incident_id: i64,
    user_id: Option<i64>,
    expires_at: i64,
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
        // A page waits while an earlier page of its incident waits for the push service to
        // come back, so an incident's pages arrive in order after an outage; a page that failed
        // for itself (a refused topic) holds nothing back.
        let ids = self
            .due_ids(
                "SELECT id FROM pages p WHERE state = 'pending' AND due_at <= $1 \
                 AND (claimed_until IS NULL OR claimed_until < $1) \
                 AND NOT EXISTS (SELECT 1 FROM pages e WHERE e.incident_id = p.incident_id AND e.state = 'pending' \
                   AND e.outage = 1 AND e.id < p.id AND e.due_at > $1 LIMIT 1 OFFSET 0) \
                 ORDER BY due_at, id LIMIT $2",
                now,
            )
            .await?;
        if ids.is_empty() {
            return Ok(Delivered::default());
        }
        let mut claim = self.db.begin().await?;
        let mut pages: Vec<Claimed> = claim
            .fetch_in(
                &format!(
                    "UPDATE pages SET claimed_by = $1, claimed_until = $2 WHERE state = 'pending' AND due_at <= $3 \
                     AND (claimed_until IS NULL OR claimed_until < $3) AND id IN ({{ids}}) RETURNING {}",
                    Claimed::COLUMNS
                ),
                &[holder.into(), (now + CLAIM_FOR).into(), now.into()],
                &ids,
            )
            .await?;
        claim.commit().await?;
        let more = ids.len() as i64 == BATCH;
        if pages.is_empty() {
            return Ok(Delivered {
                more,
                ..Delivered::default()
            });
        }
        pages.sort_by_key(|p| p.id);
        let claimed: Vec<i64> = pages.iter().map(|p| p.id).collect();
        let hold = Hold::new(now);
        // The claims are renewed until the outcomes are written (see `claim`).
        let mut done = tokio::select! {
            done = self.deliver_claimed(holder, pages, &hold, now) => done?,
            never = self.keep_claims(holder, &claimed, &hold) => match never {},
        };
        done.more = more;
        Ok(done)
    }

    /// Plans the claimed pages, writes their tokens and cancellations in one transaction,
    /// publishes them while the hold is valid, and records the outcomes in one transaction.
    async fn deliver_claimed(
        &self,
        holder: &str,
        pages: Vec<Claimed>,
        hold: &Hold,
        now: i64,
    ) -> Result<Delivered> {
        let mut done = Delivered::default();
        let plans = self.plan(pages, now).await?;

        let mut tx = self.db.begin().await?;
        done.cancelled = record_cancelled(&mut tx, holder, &plans).await?;
        done.held = record_held(&mut tx, holder, &plans, now).await?;
        let tokens: Vec<(String, &Claimed, i64)> = plans
            .iter()
            .filter_map(|plan| match plan {
                Plan::Send(page, _, Some(token)) => {
                    Some((hash_token(token), page, page.incident_id?))
                }
                _ => None,
            })
            .collect();
        let tokens: Vec<Token> = tokens
            .iter()
            .map(|(hash, page, incident_id)| Token {
                token_hash: hash,
                incident_id: *incident_id,
                user_id: page.user_id,
                expires_at: now + TOKEN_TTL,
            })
            .collect();
        let sql = insert_rows(
            tx.backend,
            "ack_tokens",
            &[
                Text("token_hash"),
                Int("incident_id"),
                Int("user_id"),
                Int("expires_at"),
            ],
        );
        insert_json(&mut tx, &sql, &tokens).await?;
        tx.commit().await?;

        let started = std::time::Instant::now();
        let outcomes = self.publish(plans, hold).await;
        done.publishing = started.elapsed();

        let now = self.now();
        let mut sent = Vec::new();
        let mut failed = Vec::new();
        let mut tx = self.db.begin().await?;
        for (page, result) in &outcomes {
            match result {
                Some(Ok(())) => sent.push(page),
                Some(Err(e)) => {
                    done.failed += 1;
                    let given_up = record_failure(&mut tx, holder, page, e, now).await?;
                    failed.push((page.kind, given_up));
                }
                // The claim lapsed: the page is another replica's now, or this one's next pass.
                None => {}
            }
        }
        done.sent = sent.len() as u64;
        let all_clears = record_sent(&mut tx, holder, &sent, now).await?;
        record_recovered(&mut tx, &sent, now).await?;
        // The push service answers again: what waited for it goes now, not at its backoff.
        let recovered = if sent.is_empty() {
            0
        } else {
            sqlx::query(
                "UPDATE pages SET due_at = $1 WHERE state = 'pending' AND outage = 1 AND due_at > $1",
            )
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected()
        };
        tx.commit().await?;
        let m = &self.metrics;
        for page in &sent {
            m.pages_sent.get_or_create(&label(page.kind)).inc();
        }
        for (kind, given_up) in failed {
            m.pages_failed.get_or_create(&label(kind)).inc();
            match given_up {
                Some(true) => m.pages_given_up.get_or_create(&label(kind)).inc(),
                Some(false) => m.pages_retried.get_or_create(&label(kind)).inc(),
                None => 0,
            };
        }
        if all_clears > 0 || recovered > 0 {
            self.wake_notifier();
        }
        Ok(done)
    }

    /// Publishes the planned messages: `PARALLEL` incidents at a time, each incident's pages
    /// one after another in the order they were queued. A page whose claim may have lapsed by
    /// the time its turn comes is not sent and has no outcome (`None`).
    async fn publish(
        &self,
        plans: Vec<Plan>,
        hold: &Hold,
    ) -> Vec<(Claimed, Option<std::result::Result<(), PushError>>)> {
        // Hand-off notices (no incident) share one queue.
        let mut by_incident: BTreeMap<Option<i64>, Vec<(Claimed, Message)>> = BTreeMap::new();
        for plan in plans {
            if let Plan::Send(page, message, _) = plan {
                by_incident
                    .entry(page.incident_id)
                    .or_default()
                    .push((page, message));
            }
        }
        let ntfy = self.ntfy.clone();
        let outcomes: Vec<Vec<_>> = futures::stream::iter(by_incident.into_values())
            .map(|pages| {
                let ntfy = ntfy.clone();
                async move {
                    let mut outcomes = Vec::with_capacity(pages.len());
                    for (page, message) in pages {
                        if !hold.valid(self.now()) {
                            outcomes.push((page, None));
                            continue;
                        }
                        let result = match &ntfy {
                            Some(ntfy) => Some(ntfy.publish(&message).await),
                            None => Some(Err(PushError {
                                reason: "no push service is configured (KLAXON_NTFY_URL)".into(),
                                retry_after: None,
                                outage: false,
                            })),
                        };
                        outcomes.push((page, result));
                    }
                    outcomes
                }
            })
            .buffer_unordered(PARALLEL)
            .collect()
            .await;
        outcomes.into_iter().flatten().collect()
    }
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

/// The metrics label of a page kind.
fn label(kind: PageKind) -> PageLabel {
    PageLabel {
        kind: kind.as_str(),
    }
}

/// Schedules the retry of a failed page, or gives it up after a day; the first failure and
/// the giving up are written on the incident's timeline. `Some(true)` when given up,
/// `Some(false)` when it will be retried, `None` when another replica's claim took it.
async fn record_failure(
    tx: &mut Tx,
    holder: &str,
    page: &Claimed,
    e: &PushError,
    now: i64,
) -> Result<Option<bool>> {
    let attempts = page.attempts + 1;
    let give_up = now - page.created_at >= GIVE_UP_AFTER;
    let done = sqlx::query(
        "UPDATE pages SET state = $1, attempts = $2, last_error = $3, first_due_at = COALESCE(first_due_at, due_at), \
         due_at = $4, outage = $5, claimed_by = NULL, claimed_until = NULL WHERE id = $6 AND claimed_by = $7",
    )
    .bind(if give_up { "failed" } else { "pending" })
    .bind(attempts)
    .bind(&e.reason)
    .bind(now + retry_delay(attempts, e.retry_after))
    .bind(i64::from(e.outage))
    .bind(page.id)
    .bind(holder)
    .execute(&mut **tx)
    .await?;
    if let (1, true, Some(incident_id)) = (
        done.rows_affected(),
        give_up || attempts == 1,
        page.incident_id,
    ) {
        let who = recipient(tx, page).await?;
        let text = if give_up {
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
