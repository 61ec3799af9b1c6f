//! Maintenance windows. While one is on, the team's incidents open as usual and nothing is
//! paged: the notifier holds every page that comes due until the window's end
//! (`paging::delivery`). Ending a window early releases what it held at once.

use crate::db::Tx;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::ids::{MaintenanceId, TeamId};
use klaxon_domain::maintenance::{Maintenance, NewMaintenance};
use klaxon_domain::Timestamp;

/// The end of each of `{ids}`'s windows open at `$1`.
const WINDOWS_NOW: &str =
    "SELECT team_id, MAX(ends_at) FROM maintenance WHERE starts_at <= $1 AND ends_at > $1 \
     AND team_id IN ({ids}) GROUP BY team_id";

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    team_id: i64,
    starts_at: i64,
    ends_at: i64,
}

impl From<Row> for Maintenance {
    fn from(r: Row) -> Self {
        Maintenance {
            id: r.id,
            team_id: r.team_id,
            starts_at: Timestamp(r.starts_at),
            ends_at: Timestamp(r.ends_at),
        }
    }
}

impl Core {
    /// The team's current and coming windows, soonest first (member).
    pub async fn list_maintenance(&self, actor: &Actor, team_id: i64) -> Result<Vec<Maintenance>> {
        self.team_access(actor, team_id).await?;
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT id, team_id, starts_at, ends_at FROM maintenance WHERE team_id = $1 AND ends_at > $2 ORDER BY starts_at",
        )
        .bind(team_id)
        .bind(self.now())
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(Maintenance::from).collect())
    }

    /// The windows on now in any of these teams, as (team, end).
    pub async fn maintenance_now(&self, team_ids: &[i64]) -> Result<Vec<(i64, Timestamp)>> {
        let rows: Vec<(i64, i64)> = self
            .db
            .fetch_in(WINDOWS_NOW, &[self.now().into()], team_ids)
            .await?;
        Ok(rows.into_iter().map(|(t, e)| (t, Timestamp(e))).collect())
    }

    /// `maintenance_now` in a transaction of the caller's (the notifier's batch reads).
    pub(crate) async fn maintenance_now_in(
        &self,
        tx: &mut Tx,
        team_ids: &[i64],
    ) -> Result<Vec<(i64, Timestamp)>> {
        let rows: Vec<(i64, i64)> = tx
            .fetch_in(WINDOWS_NOW, &[self.now().into()], team_ids)
            .await?;
        Ok(rows.into_iter().map(|(t, e)| (t, Timestamp(e))).collect())
    }

    /// Plans a window (owner). Windows of one team do not overlap (409).
    pub async fn create_maintenance(
        &self,
        actor: &Actor,
        team_id: i64,
        new: &NewMaintenance,
    ) -> Result<Maintenance> {
        self.require_team_owner(actor, team_id).await?;
        let now = self.now();
        let (start, end) = new.bounds(Timestamp(now)).map_err(Error::Invalid)?;
        let mut tx = self.db.begin().await?;
        let overlap: Option<(i64, i64)> = sqlx::query_as(
            "SELECT starts_at, ends_at FROM maintenance WHERE team_id = $1 AND starts_at < $2 AND ends_at > $3 LIMIT 1",
        )
        .bind(team_id)
        .bind(end.0)
        .bind(start.0)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some((s, e)) = overlap {
            return Err(Error::Conflict(format!(
                "it overlaps the window from {} to {}; end or remove that one first",
                Timestamp(s).to_rfc3339(),
                Timestamp(e).to_rfc3339()
            )));
        }
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO maintenance (team_id, starts_at, ends_at, created_by, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(team_id)
        .bind(start.0)
        .bind(end.0)
        .bind(actor.user_id)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Maintenance {
            id,
            team_id,
            starts_at: start,
            ends_at: end,
        })
    }

    /// Ends a window now (owner); one that has not started is removed. What it held is
    /// released: its pages are due now and the timers it pushed back move back by what was
    /// left of it.
    pub async fn end_maintenance(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: MaintenanceId,
    ) -> Result<()> {
        let (TeamId(team_id), MaintenanceId(id)) = (team_id, id);
        self.require_team_owner(actor, team_id).await?;
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let window: Row = sqlx::query_as(
            "SELECT id, team_id, starts_at, ends_at FROM maintenance WHERE id = $1 AND team_id = $2 AND ends_at > $3",
        )
        .bind(id)
        .bind(team_id)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(Error::NotFound)?;
        if window.starts_at >= now {
            sqlx::query("DELETE FROM maintenance WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            return Ok(());
        }
        sqlx::query("UPDATE maintenance SET ends_at = $1 WHERE id = $2")
            .bind(now)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        crate::paging::release_held(&mut tx, team_id, window.ends_at, now).await?;
        tx.commit().await?;
        self.wake_notifier();
        Ok(())
    }
}
