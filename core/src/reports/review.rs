//! Post-incident reviews (`domain::review`): a resolved incident's record with its figures and
//! similar incidents, and the follow-up items the team keeps with it (any member adds, ticks off
//! or removes one; the team page lists those not done).

use crate::{Actor, Core, Error, Result};
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::review::{FollowUp, NewFollowUp, Review, MAX_FOLLOW_UPS};
use klaxon_domain::Timestamp;

const FOLLOW_UP_COLUMNS: &str = "f.id, f.incident_id, i.title, f.text, f.owner_id, \
     (SELECT username FROM users WHERE id = f.owner_id), f.done_at, f.created_at";

type FollowUpRow = (
    i64,
    i64,
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<i64>,
    i64,
);

fn follow_up(r: FollowUpRow) -> FollowUp {
    let (id, incident_id, incident_title, text, owner_id, owner, done_at, created_at) = r;
    FollowUp {
        id,
        incident_id,
        incident_title,
        text,
        owner_id,
        owner,
        done_at: done_at.map(Timestamp),
        created_at: Timestamp(created_at),
    }
}

impl Core {
    /// The review of a resolved incident (409 while it is open), for its team's members.
    pub async fn incident_review(&self, actor: &Actor, id: i64) -> Result<Review> {
        let incident = self.incident(actor, id).await?;
        let Some(resolved) = incident.resolved_at else {
            return Err(Error::Conflict(
                "a review is written once the incident is resolved".into(),
            ));
        };
        let opened = incident.created_at.0;
        let seconds_to_acknowledge = incident.acknowledged_at.map(|t| t.0 - opened);
        let team_name = self.team_by_id(incident.team_id).await?.display_name;
        let similar = self.similar_to(&incident).await?;
        Ok(Review {
            team_name,
            seconds_to_acknowledge,
            seconds_to_resolve: Some(resolved.0 - opened),
            similar,
            follow_ups: self.follow_ups_where("f.incident_id = $1", id).await?,
            detail: self.detail_of(incident).await?,
        })
    }

    /// Adds a follow-up item to an incident (open or resolved); its owner, when named, must be
    /// a member of the team.
    pub async fn add_follow_up(
        &self,
        actor: &Actor,
        incident_id: i64,
        new: NewFollowUp,
    ) -> Result<FollowUp> {
        let incident = self.incident(actor, incident_id).await?;
        let text = new.checked_text().map_err(Error::Invalid)?;
        if let Some(owner) = new.owner_id {
            let team = TeamId(incident.team_id);
            if self.member_username(team, UserId(owner)).await?.is_none() {
                return Err(Error::Invalid(
                    "owner_id: not a member of the incident's team".into(),
                ));
            }
        }
        let mut tx = self.db.begin().await?;
        let (kept,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM follow_ups WHERE incident_id = $1")
                .bind(incident_id)
                .fetch_one(&mut *tx)
                .await?;
        if kept >= MAX_FOLLOW_UPS {
            return Err(Error::Conflict(format!(
                "an incident keeps at most {MAX_FOLLOW_UPS} follow-up items; remove some first"
            )));
        }
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO follow_ups (incident_id, team_id, text, owner_id, created_by, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(incident_id)
        .bind(incident.team_id)
        .bind(&text)
        .bind(new.owner_id)
        .bind(actor.user_id)
        .bind(self.now())
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        self.follow_up(id).await
    }

    /// Ticks a follow-up item off, or back on.
    pub async fn set_follow_up_done(&self, actor: &Actor, id: i64, done: bool) -> Result<FollowUp> {
        let team_id = self.follow_up_team(actor, id).await?;
        sqlx::query(
            "UPDATE follow_ups SET done_at = CASE WHEN $1 = 1 THEN COALESCE(done_at, $2) ELSE NULL END \
             WHERE id = $3 AND team_id = $4",
        )
        .bind(i64::from(done))
        .bind(self.now())
        .bind(id)
        .bind(team_id)
        .execute(&self.db.pool)
        .await?;
        self.follow_up(id).await
    }

    pub async fn delete_follow_up(&self, actor: &Actor, id: i64) -> Result<()> {
        let team_id = self.follow_up_team(actor, id).await?;
        sqlx::query("DELETE FROM follow_ups WHERE id = $1 AND team_id = $2")
            .bind(id)
            .bind(team_id)
            .execute(&self.db.pool)
            .await?;
        Ok(())
    }

    /// The team's follow-up items not done yet, oldest first.
    pub async fn open_follow_ups(&self, actor: &Actor, team_id: i64) -> Result<Vec<FollowUp>> {
        self.team_access(actor, team_id).await?;
        self.follow_ups_where("f.team_id = $1 AND f.done_at IS NULL", team_id)
            .await
    }

    /// The team of a follow-up item the caller may change (404 for anyone outside it).
    async fn follow_up_team(&self, actor: &Actor, id: i64) -> Result<i64> {
        let row: Option<(i64,)> = sqlx::query_as("SELECT team_id FROM follow_ups WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.db.pool)
            .await?;
        let (team_id,) = row.ok_or(Error::NotFound)?;
        self.team_access(actor, team_id).await?;
        Ok(team_id)
    }

    async fn follow_up(&self, id: i64) -> Result<FollowUp> {
        let mut rows = self.follow_ups_where("f.id = $1", id).await?;
        rows.pop().ok_or(Error::NotFound)
    }

    async fn follow_ups_where(&self, filter: &str, id: i64) -> Result<Vec<FollowUp>> {
        let rows: Vec<FollowUpRow> = sqlx::query_as(&format!(
            "SELECT {FOLLOW_UP_COLUMNS} FROM follow_ups f JOIN incidents i ON i.id = f.incident_id \
             WHERE {filter} ORDER BY f.id"
        ))
        .bind(id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(follow_up).collect())
    }
}
