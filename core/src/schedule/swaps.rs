//! Overrides and swaps: a holder offers a date, another member takes it; an owner hands any date
//! to anyone; "take over now" moves today to the caller with the team's unacknowledged incidents.
//! Each change is a compare-and-set on the entry read, so two takers cannot both win.

use super::log::{log_change, Change};
use crate::authz;
use crate::timeline::{timelines, Entry};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::calendar::Day;
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::rotation::{ChangeKind, OpenDate, OpenReason, TakeDate};
use klaxon_domain::schedule::ScheduleEntry;

#[derive(sqlx::FromRow)]
struct Held {
    user_id: i64,
    username: String,
    offered: i64,
    /// 0 when the holder has left the team.
    member: i64,
}

impl Core {
    async fn held(&self, team_id: i64, date: &str) -> Result<Option<Held>> {
        Ok(sqlx::query_as(
            "SELECT s.user_id, u.username, s.offered, \
             (SELECT COUNT(*) FROM team_members m WHERE m.team_id = s.team_id AND m.user_id = s.user_id) AS member \
             FROM schedule s JOIN users u ON u.id = s.user_id WHERE s.team_id = $1 AND s.date = $2",
        )
        .bind(team_id)
        .bind(date)
        .fetch_optional(&self.db.pool)
        .await?)
    }

    /// A date (already parsed) from the team's today on, or a 400.
    async fn changeable_date(&self, team_id: i64, date: &str) -> Result<()> {
        if date < self.team_today(team_id).await?.as_str() {
            return Err(Error::Invalid(
                "that date has passed; only today and later dates change hands".into(),
            ));
        }
        Ok(())
    }

    /// The holder (or an owner) offers a date to the team; offering it again changes nothing.
    pub async fn offer_date(
        &self,
        actor: &Actor,
        team_id: i64,
        date: Day,
        offered: bool,
    ) -> Result<ScheduleEntry> {
        let date = &date.to_string();
        let access = self.team_access(actor, team_id).await?;
        self.changeable_date(team_id, date).await?;
        let held = self.held(team_id, date).await?.ok_or(Error::NotFound)?;
        authz::require_may_offer(actor, access, held.user_id)?;
        if (held.offered == 1) != offered {
            let mut tx = self.db.begin().await?;
            let done = sqlx::query(
                "UPDATE schedule SET offered = $1 WHERE team_id = $2 AND date = $3 AND user_id = $4",
            )
            .bind(offered as i64)
            .bind(team_id)
            .bind(date)
            .bind(held.user_id)
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() == 0 {
                return Err(changed_meanwhile(date));
            }
            let (kind, text) = if offered {
                (
                    ChangeKind::Offered,
                    format!("{} offered {date}", held.username),
                )
            } else {
                (
                    ChangeKind::Withdrawn,
                    format!("{} withdrew the offer of {date}", held.username),
                )
            };
            log_change(
                &mut tx,
                Change {
                    team_id,
                    date,
                    kind,
                    actor_id: Some(actor.user_id),
                    from_user_id: Some(held.user_id),
                    to_user_id: None,
                    text: &text,
                    at: self.now(),
                },
            )
            .await?;
            tx.commit().await?;
        }
        Ok(ScheduleEntry {
            team_id,
            date: date.to_string(),
            user_id: held.user_id,
            username: held.username,
        })
    }

    /// Moves a date to the caller (or, for an owner, to `user_id`). A member takes only a date
    /// that was offered or whose holder left the team (else 409); an owner takes any.
    pub async fn take_date(
        &self,
        actor: &Actor,
        team_id: i64,
        date: Day,
        req: &TakeDate,
    ) -> Result<ScheduleEntry> {
        let date = &date.to_string();
        let access = self.team_access(actor, team_id).await?;
        self.changeable_date(team_id, date).await?;
        let (target, target_name) = self.taker(actor, access, team_id, req).await?;
        let held = self.held(team_id, date).await?.ok_or(Error::NotFound)?;
        if held.user_id == target {
            return Err(Error::Conflict(format!(
                "{target_name} already holds {date}"
            )));
        }
        if held.offered == 0 && held.member == 1 && !access.is_owner() {
            return Err(Error::Conflict(format!(
                "nobody offered {date}: ask {} to offer it first",
                held.username
            )));
        }
        let mut tx = self.db.begin().await?;
        let done = sqlx::query(
            "UPDATE schedule SET user_id = $1, offered = 0, rotation_id = NULL WHERE team_id = $2 AND date = $3 AND user_id = $4",
        )
        .bind(target)
        .bind(team_id)
        .bind(date)
        .bind(held.user_id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(changed_meanwhile(date));
        }
        let text = if target == actor.user_id {
            format!("{target_name} took {date} from {}", held.username)
        } else {
            format!("{date} moved from {} to {target_name}", held.username)
        };
        log_change(
            &mut tx,
            Change {
                team_id,
                date,
                kind: ChangeKind::Taken,
                actor_id: Some(actor.user_id),
                from_user_id: Some(held.user_id),
                to_user_id: Some(target),
                text: &text,
                at: self.now(),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(ScheduleEntry {
            team_id,
            date: date.to_string(),
            user_id: target,
            username: target_name,
        })
    }

    /// Who a take is for: the caller, or (owners only) the member named.
    async fn taker(
        &self,
        actor: &Actor,
        access: authz::TeamAccess,
        team_id: i64,
        req: &TakeDate,
    ) -> Result<(i64, String)> {
        let target = req.user_id.unwrap_or(actor.user_id);
        if target != actor.user_id {
            authz::require_may_hand_out(access)?;
        }
        let name = self
            .member_username(TeamId(team_id), UserId(target))
            .await?
            .ok_or_else(|| {
                Error::Invalid("user_id: a date can only go to a member of the team".into())
            })?;
        Ok((target, name))
    }

    /// "Take over now": today's date moves to the caller (or an owner's choice), and the team's
    /// open unacknowledged incidents assigned to the outgoing holder or to nobody follow, each
    /// with an `assigned` timeline entry.
    pub async fn take_over(
        &self,
        actor: &Actor,
        team_id: i64,
        req: &TakeDate,
    ) -> Result<ScheduleEntry> {
        let access = self.team_access(actor, team_id).await?;
        let (target, target_name) = self.taker(actor, access, team_id, req).await?;
        let today = self.team_today(team_id).await?;
        let held = self.held(team_id, &today).await?;
        if held.as_ref().is_some_and(|h| h.user_id == target) {
            return Err(Error::Conflict(format!(
                "{target_name} is already on call today"
            )));
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let outgoing = held.as_ref().map(|h| h.user_id);
        let moved = match outgoing {
            Some(old) => sqlx::query(
                "UPDATE schedule SET user_id = $1, offered = 0, rotation_id = NULL WHERE team_id = $2 AND date = $3 AND user_id = $4",
            )
            .bind(target)
            .bind(team_id)
            .bind(&today)
            .bind(old)
            .execute(&mut *tx)
            .await?
            .rows_affected(),
            None => sqlx::query("INSERT INTO schedule (team_id, date, user_id) VALUES ($1, $2, $3)")
                .bind(team_id)
                .bind(&today)
                .bind(target)
                .execute(&mut *tx)
                .await
                .map_err(Error::unique(format!("{today} was taken meanwhile")))?
                .rows_affected(),
        };
        if moved == 0 {
            return Err(changed_meanwhile(&today));
        }
        let reassigned: Vec<(i64,)> = sqlx::query_as(
            "UPDATE incidents SET assignee_id = $1 WHERE team_id = $2 AND state = 'triggered' AND archived_at IS NULL \
             AND (assignee_id IS NULL OR assignee_id = $3) RETURNING id",
        )
        .bind(target)
        .bind(team_id)
        .bind(outgoing)
        .fetch_all(&mut *tx)
        .await?;
        let ids: Vec<i64> = reassigned.iter().map(|r| r.0).collect();
        // Pages follow the incidents to the new holder when they can be reached.
        crate::paging::handed_over(&mut tx, team_id, &ids, target, now).await?;
        let entries: Vec<Entry> = reassigned
            .iter()
            .map(|(id,)| Entry {
                incident_id: *id,
                at: now,
                kind: TimelineKind::Assigned,
                actor_id: Some(actor.user_id),
                text: format!("assigned to {target_name}, who took over on call"),
            })
            .collect();
        if !entries.is_empty() {
            timelines(&mut tx, &entries).await?;
        }
        let text = match &held {
            Some(h) => format!(
                "{target_name} took over today from {} ({} incident{} reassigned)",
                h.username,
                entries.len(),
                if entries.len() == 1 { "" } else { "s" }
            ),
            None => format!(
                "{target_name} took over today ({} incident{} reassigned)",
                entries.len(),
                if entries.len() == 1 { "" } else { "s" }
            ),
        };
        log_change(
            &mut tx,
            Change {
                team_id,
                date: &today,
                kind: ChangeKind::TakenOver,
                actor_id: Some(actor.user_id),
                from_user_id: outgoing,
                to_user_id: Some(target),
                text: &text,
                at: now,
            },
        )
        .await?;
        tx.commit().await?;
        self.wake_notifier();
        Ok(ScheduleEntry {
            team_id,
            date: today,
            user_id: target,
            username: target_name,
        })
    }

    /// Dates from today on that anyone in the team may take: offered, or held by someone who
    /// has left the team (listed so an owner refills them; they are never dropped).
    pub async fn open_dates(&self, actor: &Actor, team_id: i64) -> Result<Vec<OpenDate>> {
        self.team_access(actor, team_id).await?;
        #[derive(sqlx::FromRow)]
        struct Row {
            date: String,
            user_id: i64,
            username: String,
            offered: i64,
            member: i64,
        }
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT s.date, s.user_id, u.username, s.offered, \
             (SELECT COUNT(*) FROM team_members m WHERE m.team_id = s.team_id AND m.user_id = s.user_id) AS member \
             FROM schedule s JOIN users u ON u.id = s.user_id WHERE s.team_id = $1 AND s.date >= $2 \
             AND (s.offered = 1 OR NOT EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = s.team_id AND m.user_id = s.user_id)) \
             ORDER BY s.date",
        )
        .bind(team_id)
        .bind(self.team_today(team_id).await?)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| OpenDate {
                date: r.date,
                user_id: r.user_id,
                username: r.username,
                reason: if r.member == 0 {
                    OpenReason::Vacated
                } else {
                    debug_assert_eq!(r.offered, 1);
                    OpenReason::Offered
                },
            })
            .collect())
    }
}

fn changed_meanwhile(date: &str) -> Error {
    Error::Conflict(format!(
        "{date} changed hands meanwhile; reload and try again"
    ))
}
