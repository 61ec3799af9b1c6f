//! What Klaxon does next about an unacknowledged incident unless someone acts: the ladder's
//! next level and who it names, the next reminder, or the end of a snooze.

use crate::{Core, Result};
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::incident::Incident;
use klaxon_domain::incident_page::NextStep;
use klaxon_domain::paging::Target;
use klaxon_domain::Timestamp;

#[derive(sqlx::FromRow)]
struct PagingState {
    esc_step: Option<i64>,
    esc_due_at: Option<i64>,
    reminded_at: Option<i64>,
    page_user: Option<String>,
}

impl Core {
    /// `None` once someone has the incident (acknowledged), it is resolved or archived, or
    /// nothing more is owed (nobody could be paged and there is no ladder).
    pub(crate) async fn next_step(
        &self,
        incident: &Incident,
        now: i64,
    ) -> Result<Option<NextStep>> {
        if incident.state != IncidentState::Triggered || incident.archived {
            return Ok(None);
        }
        if let Some(until) = incident.snoozed_until.filter(|t| t.0 > now) {
            return Ok(Some(NextStep::Wakes { at: until }));
        }
        let mut conn = self.db.pool.acquire().await?;
        let state: Option<PagingState> = sqlx::query_as(
            "SELECT i.esc_step, i.esc_due_at, i.reminded_at, u.username AS page_user \
             FROM incidents i LEFT JOIN users u ON u.id = i.page_user_id WHERE i.id = $1",
        )
        .bind(incident.id)
        .fetch_optional(&mut *conn)
        .await?;
        let Some(state) = state else { return Ok(None) };
        match (state.esc_step, state.esc_due_at, state.reminded_at) {
            (Some(_), None, _) => Ok(Some(NextStep::LadderDone)),
            (Some(step), Some(due), _) => {
                let policy = crate::paging::policy(&mut conn, incident.team_id).await?;
                let Some((level, _)) = policy.step(step) else {
                    return Ok(Some(match policy.fallback_topic {
                        Some(topic) => NextStep::Fallback {
                            topic: topic.to_string(),
                            at: Timestamp(due),
                        },
                        None => NextStep::LadderDone,
                    }));
                };
                let mut names = Vec::new();
                for target in &policy.levels[level].targets {
                    let user = match target {
                        Target::User { user_id } => Some(*user_id),
                        Target::Oncall => {
                            crate::paging::oncall_today(&mut conn, incident.team_id, due.max(now))
                                .await?
                        }
                    };
                    let name: Option<(String,)> = match user {
                        Some(id) => {
                            sqlx::query_as("SELECT username FROM users WHERE id = $1")
                                .bind(id)
                                .fetch_optional(&mut *conn)
                                .await?
                        }
                        None => None,
                    };
                    let name = name.map(|n| n.0).unwrap_or_else(|| "on call".to_string());
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                Ok(Some(NextStep::Escalates {
                    level: level as u32 + 1,
                    names,
                    at: Timestamp(due),
                }))
            }
            (None, _, Some(reminded)) => {
                let interval = self.settings().await?.notify_repeat_interval.as_secs();
                Ok(Some(NextStep::Reminds {
                    name: state.page_user,
                    at: Timestamp(reminded + interval),
                }))
            }
            (None, _, None) => Ok(None),
        }
    }
}
