//! The notifier pass: resume ended snoozes, enter due ladder levels, queue due reminders, then
//! deliver due pages — escalation runs before delivery, so a due level is paged on the same
//! pass. Every step claims its rows with a conditional update, so any number of replicas may
//! run passes at once and each page is still sent once.

use super::message::{compose, About};
use super::ntfy::{Message, PushError};
use super::tokens::TOKEN_TTL;
use super::{escalation, remind, resolved, resume};
use crate::authz::require_human;
use crate::db::Tx;
use crate::incidents::lifecycle::timeline;
use crate::secrets::{hash_token, new_token};
use crate::{Actor, Core, Error, Result};
use futures::StreamExt;
use klaxon_domain::alerting::Severity;
use klaxon_domain::paging::{retry_delay, Page, PageKind, PageStatus, GIVE_UP_AFTER};
use klaxon_domain::{Duration, Timestamp};
use serde::Serialize;
use std::collections::BTreeMap;

/// The safety-net interval; a queued page wakes the notifier at once.
pub const TICK: std::time::Duration = std::time::Duration::from_secs(30);
/// Rows read per query, so one pass never holds long locks.
const BATCH: i64 = 500;
/// Batches per phase in one pass; the rest waits for the next pass.
const MAX_BATCHES: usize = 20;
/// Due incidents handled per transaction.
const PER_TX: usize = 100;
/// A claimed page not confirmed within this long is tried again (its replica died mid-send).
const CLAIM_FOR: i64 = 60;
/// Publishes in flight at once.
const PARALLEL: usize = 16;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NotifyReport {
    pub resumed: u64,
    pub escalated: u64,
    pub reminded: u64,
    pub sent: u64,
    pub failed: u64,
    pub cancelled: u64,
}

impl NotifyReport {
    pub fn is_idle(&self) -> bool {
        *self == NotifyReport::default()
    }
}

struct Claimed {
    id: i64,
    incident_id: i64,
    kind: PageKind,
    topic: String,
    user_id: Option<i64>,
    detail: String,
    attempts: i64,
    created_at: i64,
}

enum Plan {
    Cancel(Claimed, &'static str),
    /// The message, and the raw acknowledge token it carries.
    Send(Claimed, Message, Option<String>),
}

impl Core {
    /// One notifier pass. `holder` names this replica in page claims.
    pub async fn notify_tick(&self, holder: &str) -> Result<NotifyReport> {
        let mut report = self.schedule_due().await?;
        let delivered = self.deliver_pending(holder).await?;
        report.sent = delivered.sent;
        report.failed = delivered.failed;
        report.cancelled = delivered.cancelled;
        Ok(report)
    }

    /// The first half of a pass: resume ended snoozes, enter due ladder steps and queue due
    /// reminders. Each phase reads `BATCH` rows at a time and goes on while batches come back full.
    pub async fn schedule_due(&self) -> Result<NotifyReport> {
        let mut report = NotifyReport::default();
        for _ in 0..MAX_BATCHES {
            let (n, full) = self.resume_snoozes().await?;
            report.resumed += n;
            if !full {
                break;
            }
        }
        for _ in 0..MAX_BATCHES {
            let (n, full) = self.escalate_due().await?;
            report.escalated += n;
            if !full {
                break;
            }
        }
        for _ in 0..MAX_BATCHES {
            let (n, full) = self.remind_due().await?;
            report.reminded += n;
            if !full {
                break;
            }
        }
        Ok(report)
    }

    /// The second half of a pass: deliver every due page.
    pub async fn deliver_pending(&self, holder: &str) -> Result<NotifyReport> {
        let mut report = NotifyReport::default();
        for _ in 0..MAX_BATCHES {
            let (sent, failed, cancelled, more) = self.deliver_due(holder).await?;
            report.sent += sent;
            report.failed += failed;
            report.cancelled += cancelled;
            if !more {
                return Ok(report);
            }
        }
        // Still more: the next pass continues at once.
        self.wake_notifier();
        Ok(report)
    }

    /// Runs `each` over `rows` in transactions of `PER_TX` rows; returns how many it applied.
    async fn in_batches<R, F>(&self, rows: Vec<R>, each: F) -> Result<u64>
    where
        F: for<'t> Fn(
            &'t mut Tx,
            &'t R,
            i64,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<bool>> + Send + 't>,
        >,
        R: Sync,
    {
        let mut applied = 0;
        for chunk in rows.chunks(PER_TX) {
            let now = self.now();
            let mut tx = self.db.begin().await?;
            for row in chunk {
                if each(&mut tx, row, now).await? {
                    applied += 1;
                }
            }
            tx.commit().await?;
        }
        Ok(applied)
    }

    async fn resume_snoozes(&self) -> Result<(u64, bool)> {
        let ended: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT id, snoozed_until FROM incidents WHERE snoozed_until IS NOT NULL AND snoozed_until <= $1 ORDER BY snoozed_until LIMIT $2",
        )
        .bind(self.now())
        .bind(BATCH)
        .fetch_all(&self.db.pool)
        .await?;
        let full = ended.len() as i64 == BATCH;
        self.in_batches(ended, |tx, (id, until), now| {
            Box::pin(async move {
                let done = sqlx::query(
                    "UPDATE incidents SET snoozed_until = NULL WHERE id = $1 AND snoozed_until = $2",
                )
                .bind(id)
                .bind(until)
                .execute(&mut **tx)
                .await?;
                if done.rows_affected() == 0 {
                    return Ok(false);
                }
                timeline(tx, *id, now, "unsnoozed", None, "snooze ended").await?;
                resume(tx, *id, now).await?;
                Ok(true)
            })
        })
        .await
        .map(|applied| (applied, full))
    }

    async fn escalate_due(&self) -> Result<(u64, bool)> {
        let due: Vec<(i64, i64, i64, i64)> = sqlx::query_as(
            "SELECT id, team_id, esc_step, esc_due_at FROM incidents WHERE state = 'triggered' AND archived_at IS NULL \
             AND esc_due_at <= $1 AND snoozed_until IS NULL ORDER BY esc_due_at LIMIT $2",
        )
        .bind(self.now())
        .bind(BATCH)
        .fetch_all(&self.db.pool)
        .await?;
        let full = due.len() as i64 == BATCH;
        self.in_batches(due, |tx, (id, team, step, due_at), now| {
            Box::pin(async move {
                let claimed = sqlx::query(
                    "UPDATE incidents SET esc_due_at = NULL WHERE id = $1 AND esc_step = $2 AND esc_due_at = $3 \
                     AND state = 'triggered' AND snoozed_until IS NULL",
                )
                .bind(id)
                .bind(step)
                .bind(due_at)
                .execute(&mut **tx)
                .await?;
                if claimed.rows_affected() == 0 {
                    return Ok(false);
                }
                escalation::enter(tx, *id, *team, *step, now).await?;
                Ok(true)
            })
        })
        .await
        .map(|applied| (applied, full))
    }

    async fn remind_due(&self) -> Result<(u64, bool)> {
        let interval = self.settings().await?.notify_repeat_interval.as_secs();
        type Due = (i64, i64, Option<String>, Option<i64>, i64);
        let due: Vec<Due> = sqlx::query_as(
            "SELECT id, reminded_at, page_topic, page_user_id, created_at FROM incidents WHERE state = 'triggered' \
             AND archived_at IS NULL AND reminded_at <= $1 AND snoozed_until IS NULL ORDER BY reminded_at LIMIT $2",
        )
        .bind(self.now() - interval)
        .bind(BATCH)
        .fetch_all(&self.db.pool)
        .await?;
        let full = due.len() as i64 == BATCH;
        self.in_batches(due, |tx, (id, reminded_at, topic, user, created), now| {
            Box::pin(async move {
                let claimed = sqlx::query(
                    "UPDATE incidents SET reminded_at = $1 WHERE id = $2 AND reminded_at = $3 AND state = 'triggered'",
                )
                .bind(now)
                .bind(id)
                .bind(reminded_at)
                .execute(&mut **tx)
                .await?;
                let Some(topic) = topic.as_deref().filter(|_| claimed.rows_affected() == 1) else {
                    return Ok(false);
                };
                let why = format!("unacknowledged for {}", Duration(now - created));
                remind(tx, *id, topic, *user, &why, now).await?;
                Ok(true)
            })
        })
        .await
        .map(|applied| (applied, full))
    }

    /// Claims due pages in one statement, prepares them (reads only), writes their tokens and
    /// cancellations in one transaction, publishes them in parallel, and records the outcomes in
    /// one transaction: a few writes per batch, not per page, because SQLite has one writer.
    /// Returns (sent, failed, cancelled, whether more are due).
    async fn deliver_due(&self, holder: &str) -> Result<(u64, u64, u64, bool)> {
        let now = self.now();
        type Row = (i64, i64, String, String, Option<i64>, String, i64, i64);
        let mut claim = self.db.begin().await?;
        let rows: Vec<Row> = sqlx::query_as(
            "UPDATE pages SET claimed_by = $1, claimed_until = $2 WHERE id IN (SELECT id FROM pages WHERE state = 'pending' \
             AND due_at <= $3 AND (claimed_until IS NULL OR claimed_until < $3) ORDER BY due_at LIMIT $4) \
             AND state = 'pending' AND (claimed_until IS NULL OR claimed_until < $3) \
             RETURNING id, incident_id, kind, topic, user_id, detail, attempts, created_at",
        )
        .bind(holder)
        .bind(now + CLAIM_FOR)
        .bind(now)
        .bind(BATCH)
        .fetch_all(&mut *claim)
        .await?;
        claim.commit().await?;
        let more = rows.len() as i64 == BATCH;
        if rows.is_empty() {
            return Ok((0, 0, 0, more));
        }
        let mut plans = Vec::with_capacity(rows.len());
        for (id, incident_id, kind, topic, user_id, detail, attempts, created_at) in rows {
            let Some(kind) = PageKind::parse(&kind) else {
                continue;
            };
            let page = Claimed {
                id,
                incident_id,
                kind,
                topic,
                user_id,
                detail,
                attempts,
                created_at,
            };
            plans.push(self.plan(page, now).await?);
        }

        let mut tx = self.db.begin().await?;
        let mut cancelled = 0;
        for plan in &plans {
            match plan {
                Plan::Cancel(page, why) => {
                    cancelled += sqlx::query("UPDATE pages SET state = 'cancelled', last_error = $1, claimed_by = NULL WHERE id = $2 AND claimed_by = $3")
                        .bind(*why)
                        .bind(page.id)
                        .bind(holder)
                        .execute(&mut *tx)
                        .await?
                        .rows_affected();
                }
                Plan::Send(page, _, Some(token)) => {
                    sqlx::query(
                        "INSERT INTO ack_tokens (token_hash, incident_id, user_id, expires_at) VALUES ($1, $2, $3, $4)",
                    )
                    .bind(hash_token(token))
                    .bind(page.incident_id)
                    .bind(page.user_id)
                    .bind(now + TOKEN_TTL)
                    .execute(&mut *tx)
                    .await?;
                }
                Plan::Send(_, _, None) => {}
            }
        }
        tx.commit().await?;

        let ntfy = self.ntfy.clone();
        let outcomes: Vec<(Claimed, std::result::Result<(), PushError>)> =
            futures::stream::iter(plans.into_iter().filter_map(|plan| match plan {
                Plan::Send(page, message, _) => Some((page, message)),
                Plan::Cancel(..) => None,
            }))
            .map(|(page, message)| {
                let ntfy = ntfy.clone();
                async move {
                    let result = match ntfy {
                        Some(ntfy) => ntfy.publish(&message).await,
                        None => Err(PushError {
                            reason: "no push service is configured (KLAXON_NTFY_URL)".into(),
                            retry_after: None,
                        }),
                    };
                    (page, result)
                }
            })
            .buffer_unordered(PARALLEL)
            .collect()
            .await;

        let now = self.now();
        let (mut sent, mut failed, mut all_clear) = (0, 0, false);
        let mut tx = self.db.begin().await?;
        for (page, result) in &outcomes {
            match result {
                Ok(()) => {
                    sent += 1;
                    all_clear |= record_sent(&mut tx, holder, page, now).await?;
                }
                Err(e) => {
                    failed += 1;
                    record_failure(&mut tx, holder, page, e, now).await?;
                }
            }
        }
        tx.commit().await?;
        if all_clear {
            self.wake_notifier();
        }
        Ok((sent, failed, cancelled, more))
    }

    /// What to do with a claimed page: cancel it (the incident no longer wants it), or send
    /// this message, with this acknowledge token.
    async fn plan(&self, page: Claimed, now: i64) -> Result<Plan> {
        type IncidentRow = (
            String,
            Option<i64>,
            Option<i64>,
            String,
            String,
            i64,
            String,
        );
        let (state, archived, snoozed, title, severity, team_id, signature): IncidentRow =
            sqlx::query_as(
                "SELECT state, archived_at, snoozed_until, title, severity, team_id, signature FROM incidents WHERE id = $1",
            )
            .bind(page.incident_id)
            .fetch_one(&self.db.pool)
            .await?;
        if page.kind.wants_owner() {
            let why = if state == "resolved" {
                Some("not sent: resolved first")
            } else if state != "triggered" {
                Some("not sent: acknowledged first")
            } else if archived.is_some() {
                Some("not sent: archived first")
            } else if snoozed.is_some_and(|s| s > now) {
                Some("not sent: snoozed first")
            } else {
                None
            };
            if let Some(why) = why {
                return Ok(Plan::Cancel(page, why));
            }
        }
        let description = self.first_description(page.incident_id).await?;
        let last_fix = if page.kind == PageKind::AllClear {
            None
        } else {
            self.last_fix(team_id, &signature, page.incident_id).await?
        };
        let token = match (page.kind, page.user_id) {
            (PageKind::Opening | PageKind::Reminder | PageKind::Escalation, Some(_)) => {
                Some(new_token())
            }
            _ => None,
        };
        let about = About {
            incident_id: page.incident_id,
            title: &title,
            severity: Severity::parse(&severity).unwrap_or(Severity::Warning),
            description: description.as_deref(),
            last_fix: last_fix.as_ref().map(|(id, t)| (*id, t.as_str())),
            detail: &page.detail,
        };
        let ack_url = token
            .as_ref()
            .map(|t| format!("{}/api/notify/ack/{t}", self.config.public_url));
        let message = compose(
            page.kind,
            &page.topic,
            &self.config.public_url,
            &about,
            ack_url,
        );
        Ok(Plan::Send(page, message, token))
    }

    /// The description (or summary) of the incident's first alert.
    async fn first_description(&self, incident_id: i64) -> Result<Option<String>> {
        let row: Option<(String,)> = sqlx::query_as(
            "SELECT annotations FROM alerts WHERE incident_id = $1 ORDER BY id LIMIT 1",
        )
        .bind(incident_id)
        .fetch_optional(&self.db.pool)
        .await?;
        let annotations: BTreeMap<String, String> = row
            .and_then(|(a,)| serde_json::from_str(&a).ok())
            .unwrap_or_default();
        Ok(annotations
            .get("description")
            .or_else(|| annotations.get("summary"))
            .cloned())
    }

    /// The latest resolution note of a resolved incident with the same signature.
    async fn last_fix(
        &self,
        team_id: i64,
        signature: &str,
        incident_id: i64,
    ) -> Result<Option<(i64, String)>> {
        // Walks resolution notes newest first (they are few; a flapping alert's incidents are
        // many), so the cost does not grow with the incidents of one signature.
        Ok(sqlx::query_as(
            "SELECT i.id, n.text FROM incident_notes n CROSS JOIN incidents i WHERE i.id = n.incident_id \
             AND n.resolution = 1 AND i.team_id = $1 AND i.signature = $2 AND i.id <> $3 AND i.state = 'resolved' \
             ORDER BY n.id DESC LIMIT 1",
        )
        .bind(team_id)
        .bind(signature)
        .bind(incident_id)
        .fetch_optional(&self.db.pool)
        .await?)
    }

    /// `POST /api/me/notify/test`: publishes straight to the caller's topic, not through the
    /// outbox, so what the push service says reaches the caller.
    pub async fn send_test_page(&self, actor: &Actor) -> Result<()> {
        require_human(actor)?;
        let (topic,): (Option<String>,) =
            sqlx::query_as("SELECT push_topic FROM users WHERE id = $1")
                .bind(actor.user_id)
                .fetch_one(&self.db.pool)
                .await?;
        let topic = topic.ok_or_else(|| {
            Error::Invalid("push_topic: set your ntfy topic before sending a test page".into())
        })?;
        let ntfy = self.ntfy.as_ref().ok_or_else(|| {
            Error::PushFailed("no push service is configured (KLAXON_NTFY_URL)".into())
        })?;
        let message = Message {
            topic,
            title: "Klaxon test page".into(),
            message: "Pages reach this phone. Keep the ntfy app allowed to make sound at night."
                .into(),
            tags: vec!["bell".into()],
            priority: 4,
            click: Some(format!("{}/me", self.config.public_url)),
            actions: Vec::new(),
        };
        ntfy.publish(&message)
            .await
            .map_err(|e| Error::PushFailed(e.reason))
    }

    /// The paging history of an incident, oldest first.
    pub(crate) async fn pages(&self, incident_id: i64) -> Result<Vec<Page>> {
        type Row = (
            i64,
            String,
            Option<String>,
            String,
            String,
            i64,
            Option<String>,
            i64,
            i64,
            Option<i64>,
        );
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT p.id, p.kind, (SELECT username FROM users WHERE id = p.user_id) AS recipient, p.topic, p.state, \
             p.attempts, p.last_error, p.due_at, p.created_at, p.sent_at FROM pages p WHERE p.incident_id = $1 ORDER BY p.id",
        )
        .bind(incident_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows
            .into_iter()
            .filter_map(
                |(id, kind, recipient, topic, state, attempts, last_error, due, created, sent)| {
                    let status = PageStatus::parse(&state)?;
                    let shared = recipient.is_none();
                    Some(Page {
                        id,
                        kind: PageKind::parse(&kind)?,
                        recipient,
                        topic: shared.then_some(topic),
                        status,
                        attempts,
                        last_error,
                        next_attempt_at: (status == PageStatus::Pending).then_some(Timestamp(due)),
                        created_at: Timestamp(created),
                        sent_at: sent.map(Timestamp),
                    })
                },
            )
            .collect())
    }
}

/// Marks a page sent. An opening page marks the incident's opening as sent; if the incident
/// resolved while it was in flight, its all-clear is queued now. Returns true when it was.
async fn record_sent(tx: &mut Tx, holder: &str, page: &Claimed, now: i64) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE pages SET state = 'sent', sent_at = $1, attempts = attempts + 1, last_error = NULL, claimed_by = NULL \
         WHERE id = $2 AND claimed_by = $3",
    )
    .bind(now)
    .bind(page.id)
    .bind(holder)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 1 && page.kind == PageKind::Opening {
        sqlx::query("UPDATE incidents SET opening_sent = 1 WHERE id = $1")
            .bind(page.incident_id)
            .execute(&mut **tx)
            .await?;
        return resolved(tx, page.incident_id, now).await;
    }
    Ok(false)
}

/// Schedules the retry of a failed page, or gives it up after a day; the first failure and
/// the giving up are written on the incident's timeline.
async fn record_failure(
    tx: &mut Tx,
    holder: &str,
    page: &Claimed,
    e: &PushError,
    now: i64,
) -> Result<()> {
    let attempts = page.attempts + 1;
    let give_up = now - page.created_at >= GIVE_UP_AFTER;
    let done = sqlx::query(
        "UPDATE pages SET state = $1, attempts = $2, last_error = $3, due_at = $4, claimed_by = NULL, claimed_until = NULL \
         WHERE id = $5 AND claimed_by = $6",
    )
    .bind(if give_up { "failed" } else { "pending" })
    .bind(attempts)
    .bind(&e.reason)
    .bind(now + retry_delay(attempts, e.retry_after))
    .bind(page.id)
    .bind(holder)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 1 && (give_up || attempts == 1) {
        let who = recipient(tx, page).await?;
        let text = if give_up {
            format!(
                "gave up paging {who} after {attempts} attempts: {}",
                e.reason
            )
        } else {
            format!("page to {who} failed, retrying: {}", e.reason)
        };
        timeline(tx, page.incident_id, now, "push_failed", None, &text).await?;
    }
    Ok(())
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
