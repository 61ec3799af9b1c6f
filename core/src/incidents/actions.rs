//! What people do to incidents: acknowledge, snooze, assign, annotate, resolve, archive.
//! Any member of the incident's team may do each of these.

use crate::db::Tx;
use crate::paging::{all_clears, Cleared};
use crate::timeline::timeline;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::ids::{IncidentId, NoteId, TeamId, UserId};
use klaxon_domain::incident::Incident;
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::Duration;

/// Snoozes last between one minute and one week.
pub const SNOOZE_MIN: Duration = Duration::minutes(1);
pub const SNOOZE_MAX: Duration = Duration::days(7);
pub const MAX_NOTE: usize = 10_000;
/// The most incidents one "Acknowledge all" names: the incident list's ceiling.
pub const MAX_AT_ONCE: usize = super::reads::MAX_LIMIT as usize;

fn note_text(text: &str) -> Result<String> {
    let t = text.trim();
    if t.is_empty() || t.chars().count() > MAX_NOTE {
        return Err(Error::Invalid(format!(
            "text must be 1 to {MAX_NOTE} characters"
        )));
    }
    if t.contains('\0') {
        return Err(Error::Invalid(
            "text must not contain NUL characters".into(),
        ));
    }
    Ok(t.to_string())
}

fn resolved_conflict() -> Error {
    Error::Conflict("the incident is already resolved".into())
}

impl Core {
    /// Loads the incident (404 outside the caller's teams) and opens a transaction.
    async fn act(&self, actor: &Actor, id: i64) -> Result<(Incident, Tx)> {
        let incident = self.incident(actor, id).await?;
        Ok((incident, self.db.begin().await?))
    }

    async fn finish(&self, tx: Tx, id: i64) -> Result<Incident> {
        tx.commit().await?;
        // An action may have queued a page (an all-clear, a resumed reminder).
        self.wake_notifier();
        self.incident_row(id).await
    }

    /// Acknowledging an acknowledged incident changes nothing; a resolved one is a 409.
    pub async fn acknowledge(&self, actor: &Actor, id: i64) -> Result<Incident> {
        let (_, mut tx) = self.act(actor, id).await?;
        self.acknowledge_in(&mut tx, IncidentId(id), UserId(actor.user_id))
            .await?;
        self.finish(tx, id).await
    }

    /// "Acknowledge all N shown" on the incident list: every incident of `ids` still triggered
    /// is acknowledged by the caller, as one change. The caller must be able to see each (404
    /// otherwise, and nothing changes); one resolved or acknowledged meanwhile is left as it
    /// is, since a storm moves while the list is read. Returns the ids acknowledged.
    pub async fn acknowledge_many(&self, actor: &Actor, ids: &[i64]) -> Result<Vec<i64>> {
        if ids.is_empty() || ids.len() > MAX_AT_ONCE {
            return Err(Error::Invalid(format!(
                "ids must name 1 to {MAX_AT_ONCE} incidents"
            )));
        }
        for id in ids {
            self.incident(actor, *id).await?;
        }
        let mut tx = self.db.begin().await?;
        let mut done = Vec::new();
        for id in ids {
            match self
                .acknowledge_in(&mut tx, IncidentId(*id), UserId(actor.user_id))
                .await
            {
                Ok(true) => done.push(*id),
                Ok(false) | Err(Error::Conflict(_)) => {}
                Err(e) => return Err(e),
            }
        }
        tx.commit().await?;
        self.wake_notifier();
        Ok(done)
    }

    /// The acknowledge shared by the API and push tokens: triggered → acknowledged, once.
    /// True when this call acknowledged it; false when it already was; a 409 when resolved.
    pub(crate) async fn acknowledge_in(
        &self,
        tx: &mut Tx,
        id: IncidentId,
        UserId(user_id): UserId,
    ) -> Result<bool> {
        self.acknowledge_as(tx, id, Some(user_id), "acknowledged")
            .await
    }

    /// The same for the sender of the incident's alert (`sender`, its label: "PagerDuty"), by
    /// no person, said so on the timeline.
    pub(crate) async fn acknowledge_by_sender_in(
        &self,
        tx: &mut Tx,
        id: IncidentId,
        sender: &str,
    ) -> Result<bool> {
        let text = format!("acknowledged by its sender ({sender} event)");
        self.acknowledge_as(tx, id, None, &text).await
    }

    async fn acknowledge_as(
        &self,
        tx: &mut Tx,
        IncidentId(id): IncidentId,
        user_id: Option<i64>,
        text: &str,
    ) -> Result<bool> {
        let now = self.now();
        let done: Option<(i64, String)> = sqlx::query_as(
            "UPDATE incidents SET state = 'acknowledged', acknowledged_by = $1, acknowledged_at = $2 \
             WHERE id = $3 AND state = 'triggered' \
             RETURNING created_at, (SELECT name FROM teams WHERE teams.id = incidents.team_id)",
        )
        .bind(user_id)
        .bind(now)
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
        if let Some((opened, team)) = done {
            timeline(tx, id, now, TimelineKind::Acknowledged, user_id, text).await?;
            // Counted when written: a transaction rolled back after this (rare) was counted.
            let label = crate::metrics::TeamLabel { team };
            let histogram = self.metrics.time_to_acknowledge.get_or_create(&label);
            histogram.observe((now - opened).max(0) as f64);
            return Ok(true);
        }
        let (state,): (String,) = sqlx::query_as("SELECT state FROM incidents WHERE id = $1")
            .bind(id)
            .fetch_one(&mut **tx)
            .await?;
        if state == IncidentState::Resolved.as_str() {
            return Err(resolved_conflict());
        }
        Ok(false)
    }

    /// Manual resolve is terminal; an optional resolution becomes the resolution note.
    pub async fn resolve(
        &self,
        actor: &Actor,
        id: i64,
        resolution: Option<&str>,
    ) -> Result<Incident> {
        let resolution = resolution
            .filter(|r| !r.trim().is_empty())
            .map(note_text)
            .transpose()?;
        let (_, mut tx) = self.act(actor, id).await?;
        let now = self.now();
        let cleared: Cleared = sqlx::query_as(&format!(
            "UPDATE incidents SET state = 'resolved', resolved_at = $1 WHERE id = $2 AND state <> 'resolved' RETURNING {}",
            Cleared::COLUMNS
        ))
        .bind(now)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(resolved_conflict)?;
        timeline(
            &mut tx,
            id,
            now,
            TimelineKind::Resolved,
            Some(actor.user_id),
            "resolved by hand",
        )
        .await?;
        if let Some(text) = resolution {
            self.insert_note(&mut tx, id, actor.user_id, &text, true)
                .await?;
        }
        all_clears(&mut tx, &[cleared], now).await?;
        self.finish(tx, id).await
    }

    /// "Escalate now" (a call's key 5): the incident's next ladder level is due at once. A 409
    /// when no level is waiting (no ladder, its last level reached, or the incident owned,
    /// snoozed or resolved).
    pub async fn escalate_now(&self, actor: &Actor, id: i64) -> Result<Incident> {
        let (_, mut tx) = self.act(actor, id).await?;
        let now = self.now();
        let done = sqlx::query(
            "UPDATE incidents SET esc_due_at = $1 WHERE id = $2 AND state = 'triggered' \
             AND esc_due_at IS NOT NULL AND snoozed_until IS NULL",
        )
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(Error::Conflict(
                "no escalation level is waiting to be brought forward".into(),
            ));
        }
        let text = "asked to escalate now: the next level is paged";
        timeline(
            &mut tx,
            id,
            now,
            TimelineKind::Escalated,
            Some(actor.user_id),
            text,
        )
        .await?;
        self.finish(tx, id).await
    }

    pub async fn snooze(&self, actor: &Actor, id: i64, duration: Duration) -> Result<Incident> {
        if duration < SNOOZE_MIN || duration > SNOOZE_MAX {
            return Err(Error::Invalid(format!(
                "duration must be between {SNOOZE_MIN} and {SNOOZE_MAX}"
            )));
        }
        let (incident, mut tx) = self.act(actor, id).await?;
        if !incident.state.is_open() {
            return Err(resolved_conflict());
        }
        let now = self.now();
        sqlx::query("UPDATE incidents SET snoozed_until = $1 WHERE id = $2")
            .bind(now + duration.as_secs())
            .bind(id)
            .execute(&mut *tx)
            .await?;
        timeline(
            &mut tx,
            id,
            now,
            TimelineKind::Snoozed,
            Some(actor.user_id),
            &format!("snoozed for {duration}"),
        )
        .await?;
        self.finish(tx, id).await
    }

    pub async fn unsnooze(&self, actor: &Actor, id: i64) -> Result<Incident> {
        let (_, mut tx) = self.act(actor, id).await?;
        let done = sqlx::query(
            "UPDATE incidents SET snoozed_until = NULL WHERE id = $1 AND snoozed_until IS NOT NULL",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 1 {
            timeline(
                &mut tx,
                id,
                self.now(),
                TimelineKind::Unsnoozed,
                Some(actor.user_id),
                "snooze ended",
            )
            .await?;
            crate::paging::resume(&mut tx, id, self.now()).await?;
        }
        self.finish(tx, id).await
    }

    /// Assigns to a member of the incident's team.
    pub async fn assign(&self, actor: &Actor, id: IncidentId, user_id: UserId) -> Result<Incident> {
        let (IncidentId(id), UserId(user_id)) = (id, user_id);
        let (incident, mut tx) = self.act(actor, id).await?;
        let name = self
            .member_username(TeamId(incident.team_id), UserId(user_id))
            .await?
            .ok_or_else(|| Error::Invalid("user_id: not a member of the incident's team".into()))?;
        sqlx::query("UPDATE incidents SET assignee_id = $1 WHERE id = $2")
            .bind(user_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let now = self.now();
        timeline(
            &mut tx,
            id,
            now,
            TimelineKind::Assigned,
            Some(actor.user_id),
            &format!("assigned to {name}"),
        )
        .await?;
        if incident.assignee_id != Some(user_id) {
            crate::paging::handed_over(&mut tx, incident.team_id, &[id], user_id, now).await?;
        }
        self.finish(tx, id).await
    }

    pub async fn add_note(
        &self,
        actor: &Actor,
        id: i64,
        text: &str,
        resolution: bool,
    ) -> Result<Incident> {
        let text = note_text(text)?;
        let (_, mut tx) = self.act(actor, id).await?;
        self.insert_note(&mut tx, id, actor.user_id, &text, resolution)
            .await?;
        self.finish(tx, id).await
    }

    async fn insert_note(
        &self,
        tx: &mut Tx,
        id: i64,
        author: i64,
        text: &str,
        resolution: bool,
    ) -> Result<i64> {
        if resolution {
            sqlx::query("UPDATE incident_notes SET resolution = 0 WHERE incident_id = $1")
                .bind(id)
                .execute(&mut **tx)
                .await?;
        }
        let now = self.now();
        let (note,): (i64,) = sqlx::query_as(
            "INSERT INTO incident_notes (incident_id, author_id, text, resolution, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(id)
        .bind(author)
        .bind(text)
        .bind(resolution as i64)
        .bind(now)
        .fetch_one(&mut **tx)
        .await?;
        if resolution {
            crate::announcements::resolution_note(tx, id, now, author, text).await?;
        }
        let what = if resolution {
            "resolution note"
        } else {
            "note"
        };
        let preview: String = text.chars().take(200).collect();
        timeline(
            tx,
            id,
            now,
            TimelineKind::Note,
            Some(author),
            &format!("{what}: {preview}"),
        )
        .await?;
        Ok(note)
    }

    /// Marks one of the incident's notes as the resolution note (the only one).
    pub async fn pin_resolution_note(
        &self,
        actor: &Actor,
        id: IncidentId,
        note_id: NoteId,
    ) -> Result<Incident> {
        let (IncidentId(id), NoteId(note_id)) = (id, note_id);
        let (_, mut tx) = self.act(actor, id).await?;
        let note: Option<(String, i64)> = sqlx::query_as(
            "SELECT text, resolution FROM incident_notes WHERE id = $1 AND incident_id = $2",
        )
        .bind(note_id)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let (text, already) =
            note.ok_or_else(|| Error::Invalid("note_id: no such note on this incident".into()))?;
        sqlx::query("UPDATE incident_notes SET resolution = CASE WHEN id = $1 THEN 1 ELSE 0 END WHERE incident_id = $2")
            .bind(note_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        timeline(
            &mut tx,
            id,
            self.now(),
            TimelineKind::Note,
            Some(actor.user_id),
            "pinned the resolution note",
        )
        .await?;
        if already == 0 {
            crate::announcements::resolution_note(&mut tx, id, self.now(), actor.user_id, &text)
                .await?;
        }
        self.finish(tx, id).await
    }

    pub async fn set_archived(&self, actor: &Actor, id: i64, archived: bool) -> Result<Incident> {
        let (_, mut tx) = self.act(actor, id).await?;
        let now = self.now();
        let done = if archived {
            sqlx::query(
                "UPDATE incidents SET archived_at = $1 WHERE id = $2 AND archived_at IS NULL",
            )
            .bind(now)
            .bind(id)
            .execute(&mut *tx)
            .await?
        } else {
            sqlx::query(
                "UPDATE incidents SET archived_at = NULL WHERE id = $1 AND archived_at IS NOT NULL",
            )
            .bind(id)
            .execute(&mut *tx)
            .await?
        };
        if done.rows_affected() == 1 {
            let kind = if archived {
                TimelineKind::Archived
            } else {
                TimelineKind::Unarchived
            };
            timeline(&mut tx, id, now, kind, Some(actor.user_id), kind.as_str()).await?;
        }
        self.finish(tx, id).await
    }
}
