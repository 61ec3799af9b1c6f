//! The home page's incident board: the caller's open incidents in the order a responder works
//! them, the recently resolved, and which of their teams are in maintenance.

use super::reads::IncidentFilter;
use crate::{Actor, Core, Result};
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::incident::{IncidentBoard, RECENTLY_RESOLVED};
use klaxon_domain::Timestamp;
use std::cmp::Reverse;

impl Core {
    /// The board; with `bundle`, also the incidents of that summary push the caller may see.
    pub async fn incident_board(
        &self,
        actor: &Actor,
        bundle: Option<i64>,
    ) -> Result<IncidentBoard> {
        let me = self.me(actor).await?;
        let filter = |state: &str, limit: Option<i64>| IncidentFilter {
            state: Some(state.into()),
            limit,
            ..Default::default()
        };
        let mut open = self.list_incidents(actor, &filter("open", None)).await?;
        open.sort_by_key(|i| {
            (
                i.state != IncidentState::Triggered,
                Reverse(i.severity),
                Reverse(i.id),
            )
        });
        let resolved = self
            .list_incidents(actor, &filter("resolved", Some(RECENTLY_RESOLVED)))
            .await?;
        let bundle = match bundle {
            Some(id) => Some(
                self.list_incidents(
                    actor,
                    &IncidentFilter {
                        bundle: Some(id),
                        archived: true,
                        limit: Some(super::reads::MAX_LIMIT),
                        ..Default::default()
                    },
                )
                .await?,
            ),
            None => None,
        };
        let team_ids: Vec<i64> = me.teams.iter().map(|t| t.id).collect();
        let named: Vec<(i64, String)> = me
            .teams
            .iter()
            .map(|t| (t.id, t.display_name.clone()))
            .collect();
        Ok(IncidentBoard {
            gaps: self.coverage_gaps(&named).await?,
            maintenance: self.maintenance_now(&team_ids).await?,
            now: Timestamp(self.now()),
            me: me.user.id,
            teams: me.teams,
            open,
            resolved,
            bundle,
        })
    }
}
