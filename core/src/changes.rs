//! Changes a team's senders report (`POST /v2/change/enqueue`, stored by `intake`): never paged, listed for
//! the team and shown with each incident that began within two hours after them (a deploy is
//! the first suspect at 3 a.m.). Kept 90 days, as PagerDuty keeps them; the sweeper forgets
//! older ones.

use crate::{Actor, Core, Result};
use klaxon_domain::change::{Change, SHOWN_AT_MOST, SHOWN_BEFORE};
use klaxon_domain::Timestamp;

/// How long a change is kept.
pub const KEPT: i64 = 90 * 86_400;
/// A team's list answers at most this many.
pub const LIST_AT_MOST: i64 = 200;

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    team_id: i64,
    at: i64,
    summary: String,
    source: Option<String>,
    link: Option<String>,
    link_text: Option<String>,
    details: Option<String>,
}

impl From<Row> for Change {
    fn from(r: Row) -> Change {
        Change {
            id: r.id,
            team_id: r.team_id,
            at: Timestamp(r.at),
            summary: r.summary,
            source: r.source,
            link: r.link,
            link_text: r.link_text,
            details: r.details,
        }
    }
}

const COLUMNS: &str = "id, team_id, at, summary, source, link, link_text, details";

impl Core {
    /// The team's changes, newest first (member).
    pub async fn team_changes(&self, actor: &Actor, team_id: i64) -> Result<Vec<Change>> {
        self.team_access(actor, team_id).await?;
        let rows: Vec<Row> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM changes WHERE team_id = $1 ORDER BY at DESC, id DESC LIMIT $2"
        ))
        .bind(team_id)
        .bind(LIST_AT_MOST)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(Change::from).collect())
    }

    /// The team's changes in the two hours before `began`, newest first.
    pub(crate) async fn changes_before(&self, team_id: i64, began: i64) -> Result<Vec<Change>> {
        let rows: Vec<Row> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM changes WHERE team_id = $1 AND at >= $2 AND at <= $3 \
             ORDER BY at DESC, id DESC LIMIT $4"
        ))
        .bind(team_id)
        .bind(began - SHOWN_BEFORE)
        .bind(began)
        .bind(SHOWN_AT_MOST)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(Change::from).collect())
    }

    /// Forgets changes received more than 90 days ago (the sweeper's).
    pub(crate) async fn forget_old_changes(&self, now: i64) -> Result<u64> {
        let done = sqlx::query("DELETE FROM changes WHERE received_at < $1")
            .bind(now - KEPT)
            .execute(&self.db.pool)
            .await?;
        Ok(done.rows_affected())
    }
}
