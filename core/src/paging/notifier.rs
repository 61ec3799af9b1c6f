//! The notifier pass: resume ended snoozes, enter due ladder levels, queue due reminders, then
//! deliver due pages — escalation runs before delivery, so a due level is paged on the same
//! pass. Every step claims its rows with a conditional update, so any number of replicas may
//! run passes at once and each page is still sent once.

use super::message::{compose, About};
use super::ntfy::{Message, PushError};
use super::tokens::TOKEN_TTL;
use super::{
    all_clears, escalation, remind_many, resume_many, Cleared, Paused, Reminder, CLEARED, PAUSED,
};
use crate::authz::require_human;
use crate::db::{insert_json, insert_rows, list, rows_per_statement, Col::*, Tx};
use crate::incidents::lifecycle::{timeline, timelines, Entry};
use crate::secrets::{hash_token, new_token};
use crate::{Actor, Core, Error, Result};
use futures::StreamExt;
use klaxon_domain::alerting::Severity;
use klaxon_domain::paging::{retry_delay, Page, PageKind, PageStatus, GIVE_UP_AFTER};
use klaxon_domain::{Duration, Timestamp};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The safety-net interval; a queued page wakes the notifier at once.
pub const TICK: std::time::Duration = std::time::Duration::from_secs(30);
/// Rows claimed per transaction: a few statements each, so a pass's fixed cost stays small,
/// and a transaction holds its locks for tens of milliseconds at most.
const BATCH: i64 = 1000;
/// Batches per phase in one pass; the rest waits for the next pass.
const MAX_BATCHES: usize = 20;
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

/// An incident as a page needs it: id, state, archived_at, snoozed_until, title, severity,
/// and its first alert's annotations.
type IncidentRow = (
    i64,
    String,
    Option<i64>,
    Option<i64>,
    String,
    String,
    Option<String>,
);

/// The description (or summary) among an alert's annotations.
fn description(annotations: Option<&str>) -> Option<String> {
    let annotations: BTreeMap<String, String> = annotations
        .and_then(|a| serde_json::from_str(a).ok())
        .unwrap_or_default();
    annotations
        .get("description")
        .or_else(|| annotations.get("summary"))
        .cloned()
}

/// What one delivery batch did.
#[derive(Default)]
struct Delivered {
    sent: u64,
    failed: u64,
    cancelled: u64,
    /// Whether the batch came back full (more may be due).
    more: bool,
    /// Time spent waiting on the push service.
    publishing: std::time::Duration,
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
            let (n, full) = retry_lost_race(|| self.resume_snoozes()).await?;
            report.resumed += n;
            if !full {
                break;
            }
        }
        for _ in 0..MAX_BATCHES {
            let (n, full) = retry_lost_race(|| self.escalate_due()).await?;
            report.escalated += n;
            if !full {
                break;
            }
        }
        for _ in 0..MAX_BATCHES {
            let (n, full) = retry_lost_race(|| self.remind_due()).await?;
            report.reminded += n;
            if !full {
                break;
            }
        }
        Ok(report)
    }

    /// The second half of a pass: deliver every due page.
    pub async fn deliver_pending(&self, holder: &str) -> Result<NotifyReport> {
        Ok(self.deliver_pending_timed(holder).await?.0)
    }

    /// `deliver_pending`, also returning the time spent waiting on the push service, which
    /// bounds delivery however little the rest costs (`klaxon bench ticks` reports it apart).
    pub async fn deliver_pending_timed(
        &self,
        holder: &str,
    ) -> Result<(NotifyReport, std::time::Duration)> {
        let mut report = NotifyReport::default();
        let mut publishing = std::time::Duration::ZERO;
        for _ in 0..MAX_BATCHES {
            let done = self.deliver_due(holder).await?;
            report.sent += done.sent;
            report.failed += done.failed;
            report.cancelled += done.cancelled;
            publishing += done.publishing;
            if !done.more {
                return Ok((report, publishing));
            }
        }
        // Still more: the next pass continues at once.
        self.wake_notifier();
        Ok((report, publishing))
    }

    /// The ids of up to `BATCH` due incidents, read outside any transaction so an idle pass
    /// never takes the writer; the claim that follows re-checks the same conditions.
    async fn due_ids(&self, sql: &str, bound: i64) -> Result<Vec<i64>> {
        let rows: Vec<(i64,)> = sqlx::query_as(sql)
            .bind(bound)
            .bind(BATCH)
            .fetch_all(&self.db.pool)
            .await?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    async fn resume_snoozes(&self) -> Result<(u64, bool)> {
        let ids = self
            .due_ids(
                "SELECT id FROM incidents WHERE snoozed_until IS NOT NULL AND snoozed_until <= $1 ORDER BY snoozed_until LIMIT $2",
                self.now(),
            )
            .await?;
        if ids.is_empty() {
            return Ok((0, false));
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        // The claim: a snooze renewed or lifted meanwhile is no longer ended, and is skipped.
        let mut ended: Vec<Paused> = claim(
            &mut tx,
            &format!(
                "UPDATE incidents SET snoozed_until = NULL WHERE snoozed_until <= $1 AND id IN ({{ids}}) RETURNING {PAUSED}"
            ),
            &[now],
            &ids,
        )
        .await?;
        ended.sort_by_key(|r| r.0);
        let entries: Vec<Entry> = ended
            .iter()
            .map(|r| Entry {
                incident_id: r.0,
                at: now,
                kind: "unsnoozed",
                actor_id: None,
                text: "snooze ended".into(),
            })
            .collect();
        timelines(&mut tx, &entries).await?;
        resume_many(&mut tx, &ended, now).await?;
        tx.commit().await?;
        Ok((ended.len() as u64, ids.len() as i64 == BATCH))
    }

    async fn escalate_due(&self) -> Result<(u64, bool)> {
        let ids = self
            .due_ids(
                "SELECT id FROM incidents WHERE state = 'triggered' AND archived_at IS NULL \
                 AND esc_due_at <= $1 AND snoozed_until IS NULL ORDER BY esc_due_at LIMIT $2",
                self.now(),
            )
            .await?;
        if ids.is_empty() {
            return Ok((0, false));
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        // The claim clears esc_due_at, so another replica's claim of the same step finds nothing.
        let mut due: Vec<(i64, i64, i64)> = claim(
            &mut tx,
            "UPDATE incidents SET esc_due_at = NULL WHERE esc_due_at <= $1 AND state = 'triggered' \
             AND archived_at IS NULL AND snoozed_until IS NULL AND id IN ({ids}) RETURNING id, team_id, esc_step",
            &[now],
            &ids,
        )
        .await?;
        due.sort_unstable();
        escalation::enter_many(&mut tx, &due, now).await?;
        tx.commit().await?;
        Ok((due.len() as u64, ids.len() as i64 == BATCH))
    }

    async fn remind_due(&self) -> Result<(u64, bool)> {
        let interval = self.settings().await?.notify_repeat_interval.as_secs();
        let ids = self
            .due_ids(
                "SELECT id FROM incidents WHERE state = 'triggered' AND archived_at IS NULL \
                 AND reminded_at <= $1 AND snoozed_until IS NULL ORDER BY reminded_at LIMIT $2",
                self.now() - interval,
            )
            .await?;
        if ids.is_empty() {
            return Ok((0, false));
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        // The claim moves reminded_at to now (the interval is at least a minute), so another
        // replica's claim of the same reminder finds it no longer due.
        type Due = (i64, Option<String>, Option<i64>, i64);
        let mut due: Vec<Due> = claim(
            &mut tx,
            "UPDATE incidents SET reminded_at = $1 WHERE reminded_at <= $2 AND state = 'triggered' \
             AND archived_at IS NULL AND snoozed_until IS NULL AND id IN ({ids}) \
             RETURNING id, page_topic, page_user_id, created_at",
            &[now, now - interval],
            &ids,
        )
        .await?;
        due.sort_by_key(|r| r.0);
        let reminders: Vec<Reminder> = due
            .into_iter()
            .filter_map(|(incident_id, topic, user_id, created)| {
                Some(Reminder {
                    incident_id,
                    topic: topic?,
                    user_id,
                    why: format!("unacknowledged for {}", Duration(now - created)),
                })
            })
            .collect();
        remind_many(&mut tx, &reminders, now).await?;
        tx.commit().await?;
        Ok((reminders.len() as u64, ids.len() as i64 == BATCH))
    }

    /// Claims due pages in one statement, prepares them (a few reads for the whole batch),
    /// writes their tokens and cancellations in one transaction, publishes them in parallel,
    /// and records the outcomes in one transaction: a few statements per batch, not per page,
    /// because SQLite has one writer and every PostgreSQL statement is a round trip.
    async fn deliver_due(&self, holder: &str) -> Result<Delivered> {
        let now = self.now();
        // Read outside any transaction (an idle pass never takes the writer), then claimed by
        // id: one subquery-driven UPDATE let PostgreSQL, with statistics from an emptier
        // outbox, rescan the due pages once per pending page.
        let ids = self
            .due_ids(
                "SELECT id FROM pages WHERE state = 'pending' AND due_at <= $1 \
                 AND (claimed_until IS NULL OR claimed_until < $1) ORDER BY due_at LIMIT $2",
                now,
            )
            .await?;
        if ids.is_empty() {
            return Ok(Delivered::default());
        }
        type Row = (i64, i64, String, String, Option<i64>, String, i64, i64);
        let sql = format!(
            "UPDATE pages SET claimed_by = $1, claimed_until = $2 WHERE state = 'pending' AND due_at <= $3 \
             AND (claimed_until IS NULL OR claimed_until < $3) AND id IN ({}) \
             RETURNING id, incident_id, kind, topic, user_id, detail, attempts, created_at",
            list(self.db.backend, ids.len(), 4)
        );
        let mut q = sqlx::query_as::<_, Row>(&sql)
            .persistent(false)
            .bind(holder)
            .bind(now + CLAIM_FOR)
            .bind(now);
        for id in &ids {
            q = q.bind(id);
        }
        let mut claim = self.db.begin().await?;
        let rows: Vec<Row> = q.fetch_all(&mut *claim).await?;
        claim.commit().await?;
        let mut done = Delivered {
            more: ids.len() as i64 == BATCH,
            ..Delivered::default()
        };
        if rows.is_empty() {
            return Ok(done);
        }
        let mut pages: Vec<Claimed> = rows
            .into_iter()
            .filter_map(
                |(id, incident_id, kind, topic, user_id, detail, attempts, created_at)| {
                    Some(Claimed {
                        id,
                        incident_id,
                        kind: PageKind::parse(&kind)?,
                        topic,
                        user_id,
                        detail,
                        attempts,
                        created_at,
                    })
                },
            )
            .collect();
        pages.sort_by_key(|p| p.id);
        let plans = self.plan(pages, now).await?;

        let mut tx = self.db.begin().await?;
        let mut cancels: BTreeMap<&'static str, Vec<i64>> = BTreeMap::new();
        let mut tokens = Vec::new();
        for plan in &plans {
            match plan {
                Plan::Cancel(page, why) => cancels.entry(*why).or_default().push(page.id),
                Plan::Send(page, _, Some(token)) => tokens.push((hash_token(token), page)),
                Plan::Send(_, _, None) => {}
            }
        }
        for (why, ids) in &cancels {
            for chunk in ids.chunks(rows_per_statement(tx.backend, 1) - 2) {
                let sql = format!(
                    "UPDATE pages SET state = 'cancelled', last_error = $1, claimed_by = NULL WHERE claimed_by = $2 AND id IN ({})",
                    list(tx.backend, chunk.len(), 3)
                );
                let mut q = sqlx::query(&sql).persistent(false).bind(*why).bind(holder);
                for id in chunk {
                    q = q.bind(id);
                }
                done.cancelled += q.execute(&mut *tx).await?.rows_affected();
            }
        }
        #[derive(serde::Serialize)]
        struct Token<'a> {
            token_hash: &'a str,
            incident_id: i64,
            user_id: Option<i64>,
            expires_at: i64,
        }
        let tokens: Vec<Token> = tokens
            .iter()
            .map(|(hash, page)| Token {
                token_hash: hash,
                incident_id: page.incident_id,
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
        done.publishing = started.elapsed();

        let now = self.now();
        let mut sent = Vec::new();
        let mut tx = self.db.begin().await?;
        for (page, result) in &outcomes {
            match result {
                Ok(()) => sent.push(page),
                Err(e) => {
                    done.failed += 1;
                    record_failure(&mut tx, holder, page, e, now).await?;
                }
            }
        }
        done.sent = sent.len() as u64;
        let all_clears = record_sent(&mut tx, holder, &sent, now).await?;
        tx.commit().await?;
        if all_clears > 0 {
            self.wake_notifier();
        }
        Ok(done)
    }

    /// What to do with each claimed page: cancel it (the incident no longer wants it), or send
    /// this message, with this acknowledge token. Reads the batch's incidents, first alerts and
    /// last fixes in a few queries, whatever the batch's size.
    async fn plan(&self, pages: Vec<Claimed>, now: i64) -> Result<Vec<Plan>> {
        let mut ids: Vec<i64> = pages.iter().map(|p| p.incident_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut asking: Vec<i64> = pages
            .iter()
            .filter(|p| p.kind != PageKind::AllClear)
            .map(|p| p.incident_id)
            .collect();
        asking.sort_unstable();
        asking.dedup();
        let mut incidents = HashMap::new();
        for chunk in ids.chunks(rows_per_statement(self.db.backend, 1)) {
            // The first alert's annotations ride along: one index probe per incident.
            let sql = format!(
                "SELECT i.id, i.state, i.archived_at, i.snoozed_until, i.title, i.severity, \
                 (SELECT a.annotations FROM alerts a WHERE a.incident_id = i.id ORDER BY a.id LIMIT 1) \
                 FROM incidents i WHERE i.id IN ({})",
                list(self.db.backend, chunk.len(), 1)
            );
            let mut q = sqlx::query_as::<_, IncidentRow>(&sql).persistent(chunk.len() == 1);
            for id in chunk {
                q = q.bind(id);
            }
            for row in q.fetch_all(&self.db.pool).await? {
                incidents.insert(row.0, row);
            }
        }
        let last_fixes = self.last_fixes(&asking).await?;
        let mut plans = Vec::with_capacity(pages.len());
        for page in pages {
            let Some((_, state, archived, snoozed, title, severity, annotations)) =
                incidents.get(&page.incident_id)
            else {
                plans.push(Plan::Cancel(page, "not sent: the incident was deleted"));
                continue;
            };
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
                    plans.push(Plan::Cancel(page, why));
                    continue;
                }
            }
            let description = description(annotations.as_deref());
            let last_fix = if page.kind == PageKind::AllClear {
                None
            } else {
                last_fixes.get(&page.incident_id)
            };
            let token = match (page.kind, page.user_id) {
                (PageKind::Opening | PageKind::Reminder | PageKind::Escalation, Some(_)) => {
                    Some(new_token())
                }
                _ => None,
            };
            let about = About {
                incident_id: page.incident_id,
                title,
                severity: Severity::parse(severity).unwrap_or(Severity::Warning),
                description: description.as_deref(),
                last_fix: last_fix.map(|(id, t)| (*id, t.as_str())),
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
            plans.push(Plan::Send(page, message, token));
        }
        Ok(plans)
    }

    /// For each incident, the latest resolution note of another resolved incident of its team
    /// with the same signature: (that incident, the note).
    async fn last_fixes(&self, incident_ids: &[i64]) -> Result<HashMap<i64, (i64, String)>> {
        let mut notes: Vec<(i64, i64)> = Vec::new();
        for chunk in incident_ids.chunks(rows_per_statement(self.db.backend, 1)) {
            // Walks resolution notes newest first (they are few; a flapping alert's incidents
            // are many), so the cost does not grow with the incidents of one signature.
            let sql = format!(
                "SELECT i.id, (SELECT n.id FROM incident_notes n CROSS JOIN incidents j WHERE j.id = n.incident_id \
                 AND n.resolution = 1 AND j.team_id = i.team_id AND j.signature = i.signature AND j.id <> i.id \
                 AND j.state = 'resolved' ORDER BY n.id DESC LIMIT 1) FROM incidents i WHERE i.id IN ({})",
                list(self.db.backend, chunk.len(), 1)
            );
            let mut q = sqlx::query_as::<_, (i64, Option<i64>)>(&sql).persistent(chunk.len() == 1);
            for id in chunk {
                q = q.bind(id);
            }
            notes.extend(
                q.fetch_all(&self.db.pool)
                    .await?
                    .into_iter()
                    .filter_map(|(incident, note)| Some((incident, note?))),
            );
        }
        let mut note_ids: Vec<i64> = notes.iter().map(|n| n.1).collect();
        note_ids.sort_unstable();
        note_ids.dedup();
        let mut texts = HashMap::new();
        for chunk in note_ids.chunks(rows_per_statement(self.db.backend, 1)) {
            let sql = format!(
                "SELECT id, incident_id, text FROM incident_notes WHERE id IN ({})",
                list(self.db.backend, chunk.len(), 1)
            );
            let mut q = sqlx::query_as::<_, (i64, i64, String)>(&sql).persistent(chunk.len() == 1);
            for id in chunk {
                q = q.bind(id);
            }
            for (id, incident, text) in q.fetch_all(&self.db.pool).await? {
                texts.insert(id, (incident, text));
            }
        }
        Ok(notes
            .into_iter()
            .filter_map(|(incident, note)| Some((incident, texts.get(&note)?.clone())))
            .collect())
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

/// Runs a phase again when its transaction lost a race: two replicas claiming overlapping
/// batches can deadlock on PostgreSQL, and the loser's rollback leaves nothing half done.
async fn retry_lost_race<T, F, Fut>(phase: F) -> Result<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut attempt = 0;
    loop {
        match phase().await {
            Err(Error::Busy) if attempt < 3 => attempt += 1,
            result => return result,
        }
    }
}

/// Runs a conditional `UPDATE … RETURNING` over the rows `ids` (at most `BATCH`): `{ids}` in
/// `sql` becomes their parameter list, numbered after the leading `values`.
async fn claim<T>(tx: &mut Tx, sql: &str, values: &[i64], ids: &[i64]) -> Result<Vec<T>>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
{
    let sql = sql.replace("{ids}", &list(tx.backend, ids.len(), values.len() + 1));
    let mut q = sqlx::query_as::<_, T>(&sql).persistent(false);
    for v in values.iter().chain(ids) {
        q = q.bind(*v);
    }
    Ok(q.fetch_all(&mut **tx).await?)
}

/// Marks pages sent. Opening pages mark their incidents' openings as sent; an incident that
/// resolved while its opening page was in flight gets its all-clear now. Returns how many
/// all-clears it queued.
async fn record_sent(tx: &mut Tx, holder: &str, pages: &[&Claimed], now: i64) -> Result<usize> {
    let mut confirmed = Vec::new();
    for chunk in pages.chunks(rows_per_statement(tx.backend, 1) - 2) {
        let sql = format!(
            "UPDATE pages SET state = 'sent', sent_at = $1, attempts = attempts + 1, last_error = NULL, claimed_by = NULL \
             WHERE claimed_by = $2 AND id IN ({}) RETURNING id",
            list(tx.backend, chunk.len(), 3)
        );
        let mut q = sqlx::query_as::<_, (i64,)>(&sql)
            .persistent(chunk.len() == 1)
            .bind(now)
            .bind(holder);
        for page in chunk {
            q = q.bind(page.id);
        }
        confirmed.extend(q.fetch_all(&mut **tx).await?.into_iter().map(|r| r.0));
    }
    let confirmed: HashSet<i64> = confirmed.into_iter().collect();
    let mut opened: Vec<i64> = pages
        .iter()
        .filter(|p| p.kind == PageKind::Opening && confirmed.contains(&p.id))
        .map(|p| p.incident_id)
        .collect();
    opened.sort_unstable();
    opened.dedup();
    // An incident that resolved while its opening page was in flight gets its all-clear now
    // (see `all_clears`); a re-sent opening page finds opening_sent already set.
    let mut resolved: Vec<Cleared> = Vec::new();
    for chunk in opened.chunks(rows_per_statement(tx.backend, 1)) {
        let sql = format!(
            "UPDATE incidents SET opening_sent = 1 WHERE opening_sent = 0 AND id IN ({}) RETURNING {CLEARED}, state",
            list(tx.backend, chunk.len(), 1)
        );
        let mut q = sqlx::query_as::<_, (i64, i64, Option<String>, Option<i64>, String)>(&sql)
            .persistent(chunk.len() == 1);
        for id in chunk {
            q = q.bind(id);
        }
        resolved.extend(
            q.fetch_all(&mut **tx)
                .await?
                .into_iter()
                .filter(|r| r.4 == "resolved")
                .map(|(id, sent, topic, user, _)| (id, sent, topic, user)),
        );
    }
    Ok(all_clears(tx, &resolved, now).await?.len())
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
