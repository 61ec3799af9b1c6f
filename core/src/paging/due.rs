//! The first half of a notifier pass: work that falls due with time. Each phase reads up to
//! `BATCH` due incident ids outside any transaction, then claims them with one conditional
//! `UPDATE … RETURNING` that re-checks the due condition, so another replica's claim of the
//! same row finds nothing; the batch's pages and timeline entries are then written together.

use super::escalation::{self, DueStep};
use super::notifier::{Batch, BATCH};
use super::{remind_many, reminders_to, resume_many, Owed, Paused};
use crate::timeline::{timelines, Entry};
use crate::{Core, Result};
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::Duration;

/// An incident whose reminder is due.
#[derive(sqlx::FromRow)]
struct DueReminder {
    id: i64,
    team_id: i64,
    page_topic: Option<String>,
    page_user_id: Option<i64>,
    page_owners: i64,
    created_at: i64,
}

impl Core {
    /// Snoozes that ended: paging resumes where it paused.
    pub(super) async fn resume_snoozes(&self) -> Result<Batch> {
        let ids = self
            .due_ids(
                "SELECT id FROM incidents WHERE snoozed_until IS NOT NULL AND snoozed_until <= $1 ORDER BY snoozed_until LIMIT $2",
                self.now(),
            )
            .await?;
        if ids.is_empty() {
            return Ok(Batch::EMPTY);
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        // The claim: a snooze renewed or lifted meanwhile is no longer ended, and is skipped.
        let mut ended: Vec<Paused> = tx
            .fetch_in(
                &format!(
                    "UPDATE incidents SET snoozed_until = NULL WHERE snoozed_until <= $1 AND id IN ({{ids}}) RETURNING {}",
                    Paused::COLUMNS
                ),
                &[now.into()],
                &ids,
            )
            .await?;
        ended.sort_by_key(|r| r.id);
        let entries: Vec<Entry> = ended
            .iter()
            .map(|r| Entry {
                incident_id: r.id,
                at: now,
                kind: TimelineKind::Unsnoozed,
                actor_id: None,
                text: "snooze ended".into(),
            })
            .collect();
        timelines(&mut tx, &entries).await?;
        resume_many(&mut tx, &ended, now).await?;
        tx.commit().await?;
        Ok(Batch::of(ended.len(), &ids))
    }

    /// Ladder steps whose level timed out.
    pub(super) async fn escalate_due(&self) -> Result<Batch> {
        let ids = self
            .due_ids(
                "SELECT id FROM incidents WHERE state = 'triggered' AND archived_at IS NULL \
                 AND esc_due_at <= $1 AND snoozed_until IS NULL ORDER BY esc_due_at LIMIT $2",
                self.now(),
            )
            .await?;
        if ids.is_empty() {
            return Ok(Batch::EMPTY);
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        // The claim clears esc_due_at, so another replica's claim of the same step finds nothing.
        let mut due: Vec<DueStep> = tx
            .fetch_in(
                "UPDATE incidents SET esc_due_at = NULL WHERE esc_due_at <= $1 AND state = 'triggered' \
                 AND archived_at IS NULL AND snoozed_until IS NULL AND id IN ({ids}) RETURNING id, team_id, esc_step",
                &[now.into()],
                &ids,
            )
            .await?;
        due.sort_by_key(|d| d.id);
        escalation::enter_many(&mut tx, &due, now).await?;
        tx.commit().await?;
        Ok(Batch::of(due.len(), &ids))
    }

    /// Reminders of unacknowledged incidents without a ladder (interval from the settings).
    pub(super) async fn remind_due(&self) -> Result<Batch> {
        let interval = self.settings().await?.notify_repeat_interval.as_secs();
        let ids = self
            .due_ids(
                "SELECT id FROM incidents WHERE state = 'triggered' AND archived_at IS NULL \
                 AND reminded_at <= $1 AND snoozed_until IS NULL ORDER BY reminded_at LIMIT $2",
                self.now() - interval,
            )
            .await?;
        if ids.is_empty() {
            return Ok(Batch::EMPTY);
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        // The claim moves reminded_at to now (the interval is at least a minute), so another
        // replica's claim of the same reminder finds it no longer due.
        let mut due: Vec<DueReminder> = tx
            .fetch_in(
                "UPDATE incidents SET reminded_at = $1 WHERE reminded_at <= $2 AND state = 'triggered' \
                 AND archived_at IS NULL AND snoozed_until IS NULL AND id IN ({ids}) \
                 RETURNING id, team_id, page_topic, page_user_id, page_owners, created_at",
                &[now.into(), (now - interval).into()],
                &ids,
            )
            .await?;
        due.sort_by_key(|r| r.id);
        let due = due
            .into_iter()
            .map(|r| Owed {
                incident_id: r.id,
                team_id: r.team_id,
                topic: r.page_topic,
                user_id: r.page_user_id,
                page_owners: r.page_owners,
                why: format!("unacknowledged for {}", Duration(now - r.created_at)),
            })
            .collect();
        let reminders = reminders_to(&mut tx, due).await?;
        remind_many(&mut tx, &reminders, now).await?;
        tx.commit().await?;
        let mut reminded: Vec<i64> = reminders.iter().map(|r| r.incident_id).collect();
        reminded.dedup();
        Ok(Batch::of(reminded.len(), &ids))
    }
}

impl Batch {
    const EMPTY: Batch = Batch {
        done: 0,
        full: false,
    };

    /// `done` rows acted on out of the `read` due ids.
    fn of(done: usize, read: &[i64]) -> Batch {
        Batch {
            done: done as u64,
            full: read.len() as i64 == BATCH,
        }
    }
}
