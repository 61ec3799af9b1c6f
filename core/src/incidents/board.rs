//! The home page's incident board: the caller's open incidents in the order a responder works
//! them (narrowed by the list's filters), the recently resolved, and which of their teams are in
//! maintenance.

use super::reads::{IncidentFilter, MAX_LIMIT};
use crate::authz::lists_every_teams_incidents;
use crate::{Actor, Core, Result};
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::board::{BoardFilter, BoardScope};
use klaxon_domain::board::{IncidentBoard, RECENTLY_RESOLVED};
use klaxon_domain::Timestamp;
use std::cmp::Reverse;

impl Core {
    /// The board; with `bundle`, also the incidents of that summary push the caller may see.
    pub async fn incident_board(
        &self,
        actor: &Actor,
        bundle: Option<i64>,
        filter: BoardFilter,
    ) -> Result<IncidentBoard> {
        let me = self.me(actor).await?;
        let may_see_all = lists_every_teams_incidents(actor);
        let mine: Vec<i64> = self.readable_teams(actor, None).await?;
        // Every team's name when the list shows every team; the caller's own otherwise.
        let team_names: Vec<(i64, String)> = if filter.scope == BoardScope::All && may_see_all {
            sqlx::query_as("SELECT id, display_name FROM teams ORDER BY id")
                .fetch_all(&self.db.pool)
                .await?
        } else {
            me.teams
                .iter()
                .map(|t| (t.id, t.display_name.clone()))
                .collect()
        };
        let teams: Vec<i64> = team_names.iter().map(|t| t.0).collect();
        let filter_of = |state: &str, limit: i64| IncidentFilter {
            state: Some(state.into()),
            limit: Some(limit),
            ..Default::default()
        };
        // A storm is listed whole, up to the readers' ceiling, so "Acknowledge all" means all.
        let in_scope = self
            .incidents_of(&teams, &filter_of("open", MAX_LIMIT))
            .await?;
        // The scope's teams always include the caller's own, so the count comes from one read.
        let for_me = in_scope
            .iter()
            .filter(|i| i.assignee_id == Some(actor.user_id) && mine.contains(&i.team_id))
            .count();
        let open_in_scope = in_scope
            .iter()
            .filter(|i| filter.scope != BoardScope::Mine || i.assignee_id == Some(actor.user_id))
            .count();
        let mut open: Vec<_> = in_scope
            .into_iter()
            .filter(|i| filter.shows(i, actor.user_id))
            .collect();
        open.sort_by_key(|i| {
            (
                i.state != IncidentState::Triggered,
                Reverse(i.severity),
                Reverse(i.id),
            )
        });
        let resolved = self
            .incidents_of(&teams, &filter_of("resolved", RECENTLY_RESOLVED))
            .await?;
        let bundle = match bundle {
            Some(id) => Some(
                self.list_incidents(
                    actor,
                    &IncidentFilter {
                        bundle: Some(id),
                        archived: true,
                        limit: Some(MAX_LIMIT),
                        ..Default::default()
                    },
                )
                .await?,
            ),
            None => None,
        };
        let named: Vec<(i64, String)> = me
            .teams
            .iter()
            .map(|t| (t.id, t.display_name.clone()))
            .collect();
        Ok(IncidentBoard {
            gaps: self.coverage_gaps(&named).await?,
            maintenance: self.maintenance_now(&mine).await?,
            now: Timestamp(self.now()),
            me: me.user.id,
            teams: me.teams,
            team_names,
            filter,
            may_see_all,
            for_me,
            open_in_scope,
            open,
            resolved,
            bundle,
        })
    }
}
