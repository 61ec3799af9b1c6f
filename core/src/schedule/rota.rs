//! A team's rota page in one read: today's holder, the caller's coming dates, the dates on offer,
//! the rotations with their members' names, recent changes, hand-off notices, and whether the
//! caller may manage them.

use crate::{Actor, Core, Result};
use klaxon_domain::calendar::days_from;
use klaxon_domain::ids::TeamId;
use klaxon_domain::rotation::{MyDate, NamedRotation, Rota, MY_DAYS, RECENT_CHANGES};

impl Core {
    pub async fn rota(&self, actor: &Actor, team_id: i64) -> Result<Rota> {
        let access = self.team_access(actor, team_id).await?;
        let today = self.team_today(team_id).await?;
        let days = days_from(&today, MY_DAYS);
        let shifts = self
            .list_shifts(
                actor,
                team_id,
                days.first().map(String::as_str),
                days.last().map(String::as_str),
            )
            .await?;
        let open = self.open_dates(actor, team_id).await?;
        let members = self.list_members(actor, team_id).await?;
        let name_of = |id: i64| {
            members
                .iter()
                .find(|m| m.user_id == id)
                .map(|m| m.username.clone())
                .unwrap_or_else(|| format!("user {id}"))
        };
        let rotations = self
            .list_rotations(actor, team_id)
            .await?
            .into_iter()
            .map(|rotation| NamedRotation {
                names: rotation.user_ids.iter().map(|id| name_of(*id)).collect(),
                rotation,
            })
            .collect();
        let changes = self
            .schedule_changes(actor, TeamId(team_id), RECENT_CHANGES)
            .await?;
        let me = actor.user_id;
        Ok(Rota {
            handoff: self.handoff_settings(actor, team_id).await?,
            holder: shifts.iter().find(|s| s.date == today).cloned(),
            mine: shifts
                .iter()
                .filter(|s| s.user_id == me)
                .map(|s| MyDate {
                    date: s.date.clone(),
                    offered: open.iter().any(|o| o.date == s.date && o.user_id == me),
                })
                .collect(),
            may_manage: access.is_owner(),
            today,
            me,
            open,
            rotations,
            changes,
        })
    }
}
