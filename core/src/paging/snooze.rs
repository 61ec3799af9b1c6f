//! Snoozes: a snoozed incident pauses its reminders and ladder; waking it (or its snooze ending)
//! resumes them from where they were.

use super::reminders::{remind_many, reminders_to, Owed};
use crate::db::Tx;
use crate::Result;
use klaxon_domain::alerting::IncidentState;

/// An incident's paging state, as resuming it after a snooze needs it.
#[derive(sqlx::FromRow)]
pub(crate) struct Paused {
    pub id: i64,
    pub team_id: i64,
    pub page_owners: i64,
    #[sqlx(try_from = "String")]
    pub state: IncidentState,
    pub archived_at: Option<i64>,
    pub reminded_at: Option<i64>,
    pub esc_step: Option<i64>,
    pub esc_due_at: Option<i64>,
    pub page_topic: Option<String>,
    pub page_user_id: Option<i64>,
}

impl Paused {
    /// What a statement returns to be read as a `Paused`.
    pub const COLUMNS: &str =
        "id, team_id, page_owners, state, archived_at, reminded_at, esc_step, esc_due_at, page_topic, page_user_id";
}

/// A snooze ended (expired or lifted by hand) on a still-untouched incident: paging resumes
/// where it paused, paging again at once — the current ladder level is re-entered with its
/// timeout restarted, or a reminder goes to the opening topic. Returns true when it queued work.
pub(crate) async fn resume(tx: &mut Tx, incident_id: i64, now: i64) -> Result<bool> {
    let row: Paused = sqlx::query_as(&format!(
        "SELECT {} FROM incidents WHERE id = $1",
        Paused::COLUMNS
    ))
    .bind(incident_id)
    .fetch_one(&mut **tx)
    .await?;
    Ok(resume_many(tx, &[row], now).await? == 1)
}

/// `resume` for a batch of incidents whose snooze ended; returns how many queued work.
pub(crate) async fn resume_many(tx: &mut Tx, rows: &[Paused], now: i64) -> Result<usize> {
    let mut ladder = Vec::new();
    let mut due = Vec::new();
    for r in rows {
        if r.state != IncidentState::Triggered || r.archived_at.is_some() {
            continue;
        }
        if r.esc_step.is_some() && r.esc_due_at.is_some() {
            ladder.push(r.id);
        } else if r.reminded_at.is_some() && (r.page_topic.is_some() || r.page_owners == 1) {
            due.push(Owed {
                incident_id: r.id,
                team_id: r.team_id,
                topic: r.page_topic.clone(),
                user_id: r.page_user_id,
                page_owners: r.page_owners,
                why: "snooze ended".to_string(),
            });
        }
    }
    let reminders = reminders_to(tx, due).await?;
    // The current level again: one step back (the step counts levels entered), due now.
    tx.execute_in(
        "UPDATE incidents SET esc_step = CASE WHEN esc_step > 0 THEN esc_step - 1 ELSE 0 END, esc_due_at = $1 WHERE id IN ({ids})",
        &[now.into()],
        &ladder,
    )
    .await?;
    let mut reminded: Vec<i64> = reminders.iter().map(|r| r.incident_id).collect();
    reminded.dedup();
    tx.execute_in(
        "UPDATE incidents SET reminded_at = $1 WHERE id IN ({ids})",
        &[now.into()],
        &reminded,
    )
    .await?;
    remind_many(tx, &reminders, now).await?;
    Ok(ladder.len() + reminded.len())
}
