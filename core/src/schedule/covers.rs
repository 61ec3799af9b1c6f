//! Partial-day cover: one member holds a team's pager over a range of instants for another
//! ("14:00–18:00 while Ana is at the dentist"). While a cover is in force its person is the
//! team's holder (`core::oncall`); when it ends the day's holder is back.

use super::log::{log_change, Change};
use crate::authz;
use crate::db::Tx;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::oncall_day::{
    Cover, NewCover, COVER_START_SLACK, MAX_COVERS, MAX_COVER_SECONDS,
};
use klaxon_domain::rotation::ChangeKind;
use klaxon_domain::Timestamp;

const COLUMNS: &str =
    "c.id, c.team_id, c.user_id, u.username, c.covered_id, cu.username AS covered_username, \
    c.starts_at, c.ends_at";
const FROM: &str =
    "covers c JOIN users u ON u.id = c.user_id LEFT JOIN users cu ON cu.id = c.covered_id";

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    team_id: i64,
    user_id: i64,
    username: String,
    covered_id: Option<i64>,
    covered_username: Option<String>,
    starts_at: i64,
    ends_at: i64,
}

impl From<Row> for Cover {
    fn from(r: Row) -> Cover {
        Cover {
            id: r.id,
            team_id: r.team_id,
            user_id: r.user_id,
            username: r.username,
            covered_user_id: r.covered_id,
            covered_username: r.covered_username,
            starts_at: Timestamp(r.starts_at),
            ends_at: Timestamp(r.ends_at),
        }
    }
}

impl Core {
    /// The team's covers not yet ended, soonest first (any member).
    pub async fn list_covers(&self, actor: &Actor, team_id: i64) -> Result<Vec<Cover>> {
        self.team_access(actor, team_id).await?;
        let rows: Vec<Row> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM {FROM} WHERE c.team_id = $1 AND c.ends_at > $2 ORDER BY c.starts_at"
        ))
        .bind(team_id)
        .bind(self.now())
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(Cover::from).collect())
    }

    /// Made by the person covering, the person covered, or an owner. Both must be members;
    /// it lasts at most 14 days and starts now or later; one overlapping another cover of the
    /// team is a 409. The covered person defaults to whoever holds the pager at its start.
    pub async fn create_cover(&self, actor: &Actor, team_id: i64, new: NewCover) -> Result<Cover> {
        let access = self.team_access(actor, team_id).await?;
        let now = self.now();
        let (starts_at, ends_at) = (new.starts_at.0, new.ends_at.0);
        if ends_at <= starts_at {
            return Err(Error::Invalid("ends_at must be after starts_at".into()));
        }
        if starts_at < now - COVER_START_SLACK {
            return Err(Error::Invalid(
                "starts_at has passed; a cover starts now or later".into(),
            ));
        }
        let starts_at = starts_at.max(now);
        if ends_at <= starts_at {
            return Err(Error::Invalid("ends_at has passed".into()));
        }
        if ends_at - starts_at > MAX_COVER_SECONDS {
            return Err(Error::Invalid("a cover lasts at most 14 days".into()));
        }
        let member = |id| self.member_username(TeamId(team_id), UserId(id));
        if member(new.user_id).await?.is_none() {
            return Err(Error::Invalid(
                "user_id: only a member of the team can cover".into(),
            ));
        }
        let covered = match new.covered_user_id {
            Some(id) => {
                if member(id).await?.is_none() {
                    return Err(Error::Invalid(
                        "covered_user_id: not a member of the team".into(),
                    ));
                }
                Some(id)
            }
            None => {
                let mut conn = self.db.pool.acquire().await?;
                crate::oncall::holder_at(&mut conn, team_id, starts_at)
                    .await?
                    .map(|h| h.user_id)
            }
        };
        if covered == Some(new.user_id) {
            return Err(Error::Invalid(
                "covered_user_id: nobody covers for themselves".into(),
            ));
        }
        authz::require_cover_maker(actor, access, new.user_id)?;
        let mut tx = self.db.begin().await?;
        // Holds the team's row, so two covers made at once cannot both miss each other.
        sqlx::query("UPDATE teams SET id = id WHERE id = $1")
            .bind(team_id)
            .execute(&mut *tx)
            .await?;
        room_for_cover(&mut tx, team_id, starts_at, ends_at, now).await?;
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO covers (team_id, user_id, covered_id, starts_at, ends_at, created_by, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(team_id)
        .bind(new.user_id)
        .bind(covered)
        .bind(starts_at)
        .bind(ends_at)
        .bind(actor.user_id)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?;
        let row: Row = sqlx::query_as(&format!("SELECT {COLUMNS} FROM {FROM} WHERE c.id = $1"))
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        let cover: Cover = row.into();
        let text = format!(
            "{} covers{} from {} to {}",
            cover.username,
            cover
                .covered_username
                .as_deref()
                .map(|c| format!(" for {c}"))
                .unwrap_or_default(),
            Timestamp(starts_at).to_rfc3339(),
            Timestamp(ends_at).to_rfc3339()
        );
        log_cover(
            &mut tx,
            actor,
            team_id,
            ChangeKind::Covered,
            (covered, Some(new.user_id)),
            starts_at,
            &text,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(cover)
    }

    /// Ends a cover in force now, or removes one not yet begun (its people, or an owner).
    pub async fn end_cover(&self, actor: &Actor, team_id: i64, cover_id: i64) -> Result<()> {
        let access = self.team_access(actor, team_id).await?;
        let now = self.now();
        let row: Option<(i64, Option<i64>, i64, i64)> = sqlx::query_as(
            "SELECT user_id, covered_id, starts_at, ends_at FROM covers WHERE id = $1 AND team_id = $2 AND ends_at > $3",
        )
        .bind(cover_id)
        .bind(team_id)
        .bind(now)
        .fetch_optional(&self.db.pool)
        .await?;
        let (user_id, covered, starts_at, _) = row.ok_or(Error::NotFound)?;
        authz::require_cover_party_or_owner(actor, access, user_id, covered)?;
        let names = |id: Option<i64>| async move {
            match id {
                Some(id) => self.member_username(TeamId(team_id), UserId(id)).await,
                None => Ok(None),
            }
        };
        let covering = names(Some(user_id))
            .await?
            .unwrap_or_else(|| "someone".into());
        let mut tx = self.db.begin().await?;
        let text = if starts_at > now {
            sqlx::query("DELETE FROM covers WHERE id = $1")
                .bind(cover_id)
                .execute(&mut *tx)
                .await?;
            format!(
                "{covering}'s cover from {} removed before it began",
                Timestamp(starts_at).to_rfc3339()
            )
        } else {
            sqlx::query("UPDATE covers SET ends_at = $1 WHERE id = $2 AND ends_at > $1")
                .bind(now.max(starts_at + 1))
                .bind(cover_id)
                .execute(&mut *tx)
                .await?;
            format!("{covering}'s cover ended early")
        };
        log_cover(
            &mut tx,
            actor,
            team_id,
            ChangeKind::CoverEnded,
            (Some(user_id), covered),
            starts_at,
            &text,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// Writes a cover's making or ending in the schedule's log, dated by its start (UTC):
/// `people` is (from, to) as the log reads them.
#[allow(clippy::too_many_arguments)]
async fn log_cover(
    tx: &mut crate::db::Tx,
    actor: &Actor,
    team_id: i64,
    kind: ChangeKind,
    people: (Option<i64>, Option<i64>),
    starts_at: i64,
    text: &str,
    now: i64,
) -> Result<()> {
    let start = Timestamp(starts_at).to_rfc3339();
    log_change(
        tx,
        Change {
            team_id,
            date: start.get(..10).unwrap_or(&start),
            kind,
            actor_id: Some(actor.user_id),
            from_user_id: people.0,
            to_user_id: people.1,
            text,
            at: now,
        },
    )
    .await
}

/// Refuses a cover that would be one too many for the team, or overlap another of its covers.
async fn room_for_cover(
    tx: &mut Tx,
    team_id: i64,
    starts_at: i64,
    ends_at: i64,
    now: i64,
) -> Result<()> {
    let (pending,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM covers WHERE team_id = $1 AND ends_at > $2")
            .bind(team_id)
            .bind(now)
            .fetch_one(&mut **tx)
            .await?;
    if pending >= MAX_COVERS {
        return Err(Error::Conflict(format!(
            "a team has at most {MAX_COVERS} covers to come; remove one first"
        )));
    }
    let clash: Option<(String, i64, i64)> = sqlx::query_as(
        "SELECT u.username, c.starts_at, c.ends_at FROM covers c JOIN users u ON u.id = c.user_id \
         WHERE c.team_id = $1 AND c.starts_at < $3 AND c.ends_at > $2 ORDER BY c.starts_at LIMIT 1",
    )
    .bind(team_id)
    .bind(starts_at)
    .bind(ends_at)
    .fetch_optional(&mut **tx)
    .await?;
    if let Some((who, from, to)) = clash {
        return Err(Error::Conflict(format!(
            "{who} already covers from {} to {}; covers of a team cannot overlap",
            Timestamp(from).to_rfc3339(),
            Timestamp(to).to_rfc3339()
        )));
    }
    Ok(())
}
