//! Rotations: members take turns of `shift_days` days; applying one fills schedule dates.

use super::log::{log_change, Change};
use crate::db::Tx;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::calendar::{format_date, parse_date};
use klaxon_domain::ids::{RotationId, TeamId, UserId};
use klaxon_domain::rotation::{
    apply_range, turn_on, AppliedRotation, ApplyRotation, ChangeKind, Filling, NewRotation,
    Rotation, RotationDate,
};
use std::collections::HashMap;

#[derive(sqlx::FromRow)]
struct RotationRow {
    id: i64,
    team_id: i64,
    name: String,
    shift_days: i64,
    start_date: String,
}

impl Core {
    pub async fn list_rotations(&self, actor: &Actor, team_id: i64) -> Result<Vec<Rotation>> {
        self.team_access(actor, team_id).await?;
        let rows: Vec<RotationRow> = sqlx::query_as(
            "SELECT id, team_id, name, shift_days, start_date FROM rotations WHERE team_id = $1 ORDER BY name",
        )
        .bind(team_id)
        .fetch_all(&self.db.pool)
        .await?;
        let mut turns = self.rotation_turns(team_id).await?;
        Ok(rows
            .into_iter()
            .map(|r| Rotation {
                user_ids: turns.remove(&r.id).unwrap_or_default(),
                id: r.id,
                team_id: r.team_id,
                name: r.name,
                shift_days: r.shift_days,
                start_date: r.start_date,
            })
            .collect())
    }

    /// Every rotation's members of a team in turn order, by rotation.
    async fn rotation_turns(&self, team_id: i64) -> Result<HashMap<i64, Vec<i64>>> {
        let rows: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT m.rotation_id, m.user_id FROM rotation_members m JOIN rotations r ON r.id = m.rotation_id \
             WHERE r.team_id = $1 ORDER BY m.rotation_id, m.position",
        )
        .bind(team_id)
        .fetch_all(&self.db.pool)
        .await?;
        let mut turns: HashMap<i64, Vec<i64>> = HashMap::new();
        for (rotation, user) in rows {
            turns.entry(rotation).or_default().push(user);
        }
        Ok(turns)
    }

    async fn rotation(&self, team_id: i64, id: i64) -> Result<Rotation> {
        let row: RotationRow = sqlx::query_as(
            "SELECT id, team_id, name, shift_days, start_date FROM rotations WHERE team_id = $1 AND id = $2",
        )
        .bind(team_id)
        .bind(id)
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::NotFound)?;
        let users: Vec<(i64,)> = sqlx::query_as(
            "SELECT user_id FROM rotation_members WHERE rotation_id = $1 ORDER BY position",
        )
        .bind(id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(Rotation {
            id: row.id,
            team_id: row.team_id,
            name: row.name,
            shift_days: row.shift_days,
            start_date: row.start_date,
            user_ids: users.into_iter().map(|u| u.0).collect(),
        })
    }

    /// Owners define rotations of the team's members (a name is unique in its team: 409).
    pub async fn create_rotation(
        &self,
        actor: &Actor,
        team_id: i64,
        new: &NewRotation,
    ) -> Result<Rotation> {
        self.require_team_owner(actor, team_id).await?;
        let new = new.check().map_err(Error::Invalid)?;
        for user in &new.user_ids {
            if self
                .member_username(TeamId(team_id), UserId(*user))
                .await?
                .is_none()
            {
                return Err(Error::Invalid(format!(
                    "user_ids: {user} is not a member of the team"
                )));
            }
        }
        let mut tx = self.db.begin().await?;
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO rotations (team_id, name, shift_days, start_date, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(team_id)
        .bind(&new.name)
        .bind(new.shift_days)
        .bind(&new.start_date)
        .bind(self.now())
        .fetch_one(&mut *tx)
        .await
        .map_err(Error::unique(format!(
            "the team already has a rotation named \"{}\"",
            new.name
        )))?;
        for (position, user) in new.user_ids.iter().enumerate() {
            sqlx::query(
                "INSERT INTO rotation_members (rotation_id, position, user_id) VALUES ($1, $2, $3)",
            )
            .bind(id)
            .bind(position as i64)
            .bind(user)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(Rotation {
            id,
            team_id,
            name: new.name,
            user_ids: new.user_ids,
            shift_days: new.shift_days,
            start_date: new.start_date,
        })
    }

    /// Removing a rotation keeps the dates it filled, as if given by hand.
    pub async fn delete_rotation(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: RotationId,
    ) -> Result<()> {
        let (TeamId(team_id), RotationId(id)) = (team_id, id);
        self.require_team_owner(actor, team_id).await?;
        let done = sqlx::query("DELETE FROM rotations WHERE team_id = $1 AND id = $2")
            .bind(team_id)
            .bind(id)
            .execute(&self.db.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound);
        }
        Ok(())
    }

    /// Fills the range's dates with the rotation's turns (dates before its start stay as they
    /// are). Without `replace`, any taken date is a 409 and nothing is stored; with it, dates
    /// this rotation filled before are overwritten and every other taken date is kept and
    /// listed in `skipped`. `dry_run` answers the same and stores nothing.
    pub async fn apply_rotation(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: RotationId,
        req: &ApplyRotation,
    ) -> Result<AppliedRotation> {
        let (TeamId(team_id), RotationId(id)) = (team_id, id);
        self.require_team_owner(actor, team_id).await?;
        let range = apply_range(&req.from, &req.to).map_err(Error::Invalid)?;
        let rotation = self.rotation(team_id, id).await?;
        if rotation.user_ids.is_empty() {
            return Err(Error::Invalid(
                "the rotation has no members left: remove it and make a new one".into(),
            ));
        }
        let start = parse_date(&rotation.start_date)
            .ok_or_else(|| Error::Internal("a rotation's start date is not a date".into()))?;
        let planned: Vec<RotationDate> = range
            .into_iter()
            .filter_map(|date| {
                turn_on(start, rotation.shift_days, &rotation.user_ids, date).map(|user_id| {
                    RotationDate {
                        date: format_date(date),
                        user_id,
                    }
                })
            })
            .collect();
        let mut tx = self.db.begin().await?;
        let taken = taken_dates(&mut tx, team_id, &req.from, &req.to).await?;
        let mut dates = Vec::with_capacity(planned.len());
        let mut skipped = Vec::new();
        for p in planned {
            match taken.get(&p.date) {
                None => dates.push((p, false)),
                Some(_) if !req.replace => {
                    return Err(Error::Conflict(format!(
                        "{} already has someone on call; nothing was stored (apply with replace to overwrite this rotation's own dates)",
                        p.date
                    )))
                }
                Some(Some(by)) if *by == id => dates.push((p, true)),
                Some(_) => skipped.push(p.date),
            }
        }
        if !req.dry_run && !dates.is_empty() {
            for (d, overwrite) in &dates {
                let sql = if *overwrite {
                    "UPDATE schedule SET user_id = $3, offered = 0 WHERE team_id = $1 AND date = $2 AND rotation_id = $4"
                } else {
                    "INSERT INTO schedule (team_id, date, user_id, rotation_id) VALUES ($1, $2, $3, $4)"
                };
                sqlx::query(sql)
                    .bind(team_id)
                    .bind(&d.date)
                    .bind(d.user_id)
                    .bind(id)
                    .execute(&mut *tx)
                    .await
                    .map_err(Error::unique(format!(
                        "{} was taken meanwhile; nothing was stored",
                        d.date
                    )))?;
            }
            let (first, last) = (&dates[0].0.date, &dates[dates.len() - 1].0.date);
            log_change(
                &mut tx,
                Change {
                    team_id,
                    date: first,
                    kind: ChangeKind::RotationApplied,
                    actor_id: Some(actor.user_id),
                    from_user_id: None,
                    to_user_id: None,
                    text: &format!(
                        "{} filled {} date{}, {first} to {last}",
                        rotation.name,
                        dates.len(),
                        if dates.len() == 1 { "" } else { "s" }
                    ),
                    at: self.now(),
                },
            )
            .await?;
            tx.commit().await?;
        }
        Ok(AppliedRotation {
            dates: dates.into_iter().map(|(d, _)| d).collect(),
            skipped,
        })
    }
}

/// The range's taken dates and the rotation that filled each (none when given by hand).
async fn taken_dates(
    tx: &mut Tx,
    team_id: i64,
    from: &str,
    to: &str,
) -> Result<HashMap<String, Option<i64>>> {
    let rows: Vec<(String, Option<i64>)> = sqlx::query_as(
        "SELECT date, rotation_id FROM schedule WHERE team_id = $1 AND date >= $2 AND date <= $3",
    )
    .bind(team_id)
    .bind(from)
    .bind(to)
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().collect())
}

impl Core {
    /// A rotation whose turns are named by username, as the rota page's form gives them.
    pub async fn create_rotation_by_names(
        &self,
        actor: &Actor,
        team_id: i64,
        name: String,
        members: &[&str],
        shift_days: i64,
        start_date: String,
    ) -> Result<Rotation> {
        let team = self.list_members(actor, team_id).await?;
        let user_ids = members
            .iter()
            .map(|n| {
                team.iter()
                    .find(|m| m.username.eq_ignore_ascii_case(n))
                    .map(|m| m.user_id)
                    .ok_or_else(|| {
                        Error::Invalid(format!("no member of the team is called \"{n}\""))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        let new = NewRotation {
            name,
            user_ids,
            shift_days,
            start_date,
        };
        self.create_rotation(actor, team_id, &new).await
    }

    /// Applies (or, with `dry_run`, previews) a rotation and names each date's holder.
    pub async fn fill_rotation(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: RotationId,
        req: &ApplyRotation,
    ) -> Result<Filling> {
        let done = self.apply_rotation(actor, team_id, id, req).await?;
        let members = self.list_members(actor, team_id.0).await?;
        let name_of = |user_id: i64| {
            members
                .iter()
                .find(|m| m.user_id == user_id)
                .map_or_else(|| format!("user {user_id}"), |m| m.username.clone())
        };
        Ok(Filling {
            rotation_id: id.0,
            from: req.from.clone(),
            to: req.to.clone(),
            preview: req.dry_run,
            dates: done
                .dates
                .into_iter()
                .map(|d| {
                    let name = name_of(d.user_id);
                    (d.date, name)
                })
                .collect(),
            skipped: done.skipped,
        })
    }
}
