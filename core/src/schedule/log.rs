//! The schedule's change log: offers, takes, take-overs and rotation applications, written in
//! the transaction of the change, so both people in a swap see it on the team page.

use crate::db::Tx;
use crate::{Actor, Core, Result};
use klaxon_domain::ids::TeamId;
use klaxon_domain::rotation::{ChangeKind, ScheduleChange};
use klaxon_domain::Timestamp;

pub(crate) struct Change<'a> {
    pub team_id: i64,
    pub date: &'a str,
    pub kind: ChangeKind,
    pub actor_id: Option<i64>,
    pub from_user_id: Option<i64>,
    pub to_user_id: Option<i64>,
    pub text: &'a str,
    pub at: i64,
}

pub(crate) async fn log_change(tx: &mut Tx, c: Change<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO schedule_log (team_id, date, kind, actor_id, from_user_id, to_user_id, text, at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(c.team_id)
    .bind(c.date)
    .bind(c.kind.as_str())
    .bind(c.actor_id)
    .bind(c.from_user_id)
    .bind(c.to_user_id)
    .bind(c.text)
    .bind(c.at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct ChangeRow {
    id: i64,
    #[sqlx(try_from = "String")]
    kind: ChangeKind,
    date: String,
    actor: Option<String>,
    from_user: Option<String>,
    to_user: Option<String>,
    text: String,
    at: i64,
}

/// Most changes one read answers.
pub const MAX_CHANGES: i64 = 200;

impl Core {
    /// The newest `limit` (1–200) changes of the team's schedule, newest first.
    pub async fn schedule_changes(
        &self,
        actor: &Actor,
        team_id: TeamId,
        limit: i64,
    ) -> Result<Vec<ScheduleChange>> {
        let TeamId(team_id) = team_id;
        self.team_access(actor, team_id).await?;
        if !(1..=MAX_CHANGES).contains(&limit) {
            return Err(crate::Error::Invalid(format!(
                "limit must be 1 to {MAX_CHANGES}"
            )));
        }
        let rows: Vec<ChangeRow> = sqlx::query_as(
            "SELECT l.id, l.kind, l.date, a.username AS actor, f.username AS from_user, t.username AS to_user, l.text, l.at \
             FROM schedule_log l LEFT JOIN users a ON a.id = l.actor_id LEFT JOIN users f ON f.id = l.from_user_id \
             LEFT JOIN users t ON t.id = l.to_user_id WHERE l.team_id = $1 ORDER BY l.id DESC LIMIT $2",
        )
        .bind(team_id)
        .bind(limit)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| ScheduleChange {
                id: r.id,
                kind: r.kind,
                date: r.date,
                actor: r.actor,
                from_user: r.from_user,
                to_user: r.to_user,
                text: r.text,
                at: Timestamp(r.at),
            })
            .collect())
    }
}
