//! Paging after the team changes: a maintenance window ending early releases what it held, and
//! a person leaving a team takes their waiting pages and covers of it with them.

use crate::db::Tx;
use crate::Result;

/// A maintenance window of the team that was to end at `old_end` ended at `now`: what it held
/// is due now, and the timers it pushed back move back by what was left of it.
pub(crate) async fn release_held(tx: &mut Tx, team_id: i64, old_end: i64, now: i64) -> Result<()> {
    sqlx::query(
        "UPDATE pages SET due_at = $1 WHERE state = 'pending' AND due_at = $2 \
         AND incident_id IN (SELECT id FROM incidents WHERE team_id = $3)",
    )
    .bind(now)
    .bind(old_end)
    .bind(team_id)
    .execute(&mut **tx)
    .await?;
    sqlx::query("UPDATE incidents SET reminded_at = $1 WHERE team_id = $2 AND reminded_at = $3")
        .bind(now)
        .bind(team_id)
        .bind(old_end)
        .execute(&mut **tx)
        .await?;
    sqlx::query(
        "UPDATE incidents SET esc_due_at = esc_due_at - $1 WHERE team_id = $2 AND esc_due_at > $3",
    )
    .bind(old_end - now)
    .bind(team_id)
    .bind(old_end)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A person left a team: their pages of its incidents that still wait are cancelled, so no
/// later step of their rules pages someone who is no longer a responder there, and their covers
/// of it are gone.
pub(crate) async fn left_team(tx: &mut Tx, user_id: i64, team_id: i64) -> Result<()> {
    // Nor do they hold its pager by a cover any more (one in force ends now).
    sqlx::query("DELETE FROM covers WHERE team_id = $1 AND user_id = $2")
        .bind(team_id)
        .bind(user_id)
        .execute(&mut **tx)
        .await?;
    sqlx::query(
        "UPDATE pages SET state = 'cancelled', last_error = 'not sent: left the team', claimed_by = NULL \
         WHERE state = 'pending' AND user_id = $1 AND kind IN ('opening', 'reminder', 'escalation') \
         AND incident_id IN (SELECT id FROM incidents WHERE team_id = $2)",
    )
    .bind(user_id)
    .bind(team_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
