//! What a delivery batch writes back: the outcome of each page (sent, failed and retried or
//! given up, held for maintenance, cancelled, waiting for a summary) and the timeline's sentences
//! about them, each in the batch's one transaction.

use super::all_clears;
use super::plan::{Claimed, Plan, Send};
use super::Cleared;
use crate::db::Tx;
use crate::roads::Failure;
use crate::timeline::{timeline, timelines, Entry};
use crate::Result;
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::{retry_delay, PageKind, GIVE_UP_AFTER};
use klaxon_domain::rules::FAIL_OVER_AFTER;
use std::collections::{BTreeMap, HashMap, HashSet};

/// An incident whose opening page was just confirmed, with its state.
#[derive(sqlx::FromRow)]
struct Opened {
    #[sqlx(flatten)]
    cleared: Cleared,
    #[sqlx(try_from = "String")]
    state: IncidentState,
}

/// A topic refused with 429 waits until `retry_at`; the due query skips its pages until then.
pub(super) async fn topic_backoff(tx: &mut Tx, topic: &str, retry_at: i64) -> Result<()> {
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
pub(super) async fn record_waiting(
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
pub(super) async fn record_summaries(
    tx: &mut Tx,
    summaries: &[&Vec<Send>],
    now: i64,
) -> Result<()> {
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
pub(super) async fn record_cancelled(tx: &mut Tx, holder: &str, plans: &[Plan]) -> Result<u64> {
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
pub(super) async fn record_held(
    tx: &mut Tx,
    holder: &str,
    plans: &[Plan],
    now: i64,
) -> Result<u64> {
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
pub(super) async fn record_sent(
    tx: &mut Tx,
    holder: &str,
    pages: &[&Claimed],
    now: i64,
) -> Result<usize> {
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
pub(super) async fn record_recovered(tx: &mut Tx, pages: &[&Claimed], now: i64) -> Result<()> {
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

/// Schedules the retry of a failed page, or gives it up after a day; the first failure and
/// the giving up are written on the incident's timeline. `Some(true)` when given up,
/// `Some(false)` when it will be retried, `None` when another replica's claim took it.
pub(super) async fn record_failure(
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
