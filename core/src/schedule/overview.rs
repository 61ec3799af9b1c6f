//! The schedule page in one read: today's holder of each of the caller's teams, and each team's
//! shifts over the coming days.

use crate::{Actor, Core, Result};
use klaxon_domain::calendar::days_from;
use klaxon_domain::calendar::utc_date;
use klaxon_domain::schedule::{Holder, ScheduleOverview, TeamDays, LOOK_AHEAD_DAYS};

impl Core {
    pub async fn schedule_overview(&self, actor: &Actor) -> Result<ScheduleOverview> {
        let me = self.me(actor).await?;
        let days = days_from(&utc_date(self.now()), LOOK_AHEAD_DAYS);
        let (first, last) = (days.first().cloned(), days.last().cloned());
        let display_name = |team_id: i64| {
            me.teams
                .iter()
                .find(|t| t.id == team_id)
                .map(|t| t.display_name.clone())
        };
        let holders = self
            .current_holders(actor)
            .await?
            .into_iter()
            .map(|h| Holder {
                team_id: h.team_id,
                team_name: display_name(h.team_id).unwrap_or(h.team_name),
                user_id: h.user_id,
                username: h.username,
            })
            .collect();
        let mut teams = Vec::with_capacity(me.teams.len());
        for t in &me.teams {
            let shifts = self
                .list_shifts(actor, t.id, first.as_deref(), last.as_deref())
                .await?;
            teams.push(TeamDays {
                team_id: t.id,
                display_name: t.display_name.clone(),
                shifts,
            });
        }
        let named: Vec<(i64, String)> = me
            .teams
            .iter()
            .map(|t| (t.id, t.display_name.clone()))
            .collect();
        Ok(ScheduleOverview {
            me: me.user.id,
            days,
            holders,
            teams,
            gaps: self.coverage_gaps(&named).await?,
        })
    }
}
