//! A button pressed or a command typed in chat, done as the person the chat account is linked
//! to (`links`), with that person's rights: someone not in the incident's team is told so and
//! nothing changes. Pressing twice is harmless: the second press says who has it already.

use crate::actor::Actor;
use crate::{Core, Error, Result};
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::chat::ChatAct;
use klaxon_domain::ids::{IncidentId, UserId};
use klaxon_domain::incident::Incident;
use klaxon_domain::Duration;

/// What came of an action: the sentence for the person who pressed (shown to them alone), and
/// the incident as it is now when they may see it (for the message to show).
#[derive(Debug, Clone)]
pub struct ChatOutcome {
    pub said: String,
    pub incident: Option<Incident>,
    /// Who acted, when something changed.
    pub by: Option<String>,
}

impl ChatOutcome {
    fn told(said: impl Into<String>, incident: Option<Incident>) -> ChatOutcome {
        ChatOutcome {
            said: said.into(),
            incident,
            by: None,
        }
    }
}

/// Tells an unlinked account how to link itself.
pub const NOT_LINKED: &str = "Your chat account is not linked to a Klaxon account yet: in Klaxon, open your profile, get a code under Chat accounts, and type `/klaxon link` with it here.";

impl Core {
    /// The name of the incident's team, as its announcements show it ("" when it is gone).
    pub(crate) async fn team_name_of(&self, incident: &Incident) -> Result<String> {
        let team: Option<(String,)> = sqlx::query_as("SELECT name FROM teams WHERE id = $1")
            .bind(incident.team_id)
            .fetch_optional(&self.db.pool)
            .await?;
        Ok(team.map(|(t,)| t).unwrap_or_default())
    }

    /// Does `act` on incident `id` as the person linked to `account` on `platform`. Only a
    /// database failure is an error; anything else is said back.
    pub async fn act_from_chat(
        &self,
        platform: &str,
        account: &str,
        id: i64,
        act: ChatAct,
    ) -> Result<ChatOutcome> {
        match self.chat_person(platform, account).await? {
            Some(actor) => self.act_as(&actor, id, act, None).await,
            None => Ok(ChatOutcome::told(NOT_LINKED, None)),
        }
    }

    /// Does `act` on incident `id` as `actor` (a chat account's person); a resolve records
    /// `note` as what fixed it.
    pub(crate) async fn act_as(
        &self,
        actor: &Actor,
        id: i64,
        act: ChatAct,
        note: Option<&str>,
    ) -> Result<ChatOutcome> {
        let before = match self.incident(actor, id).await {
            Ok(i) => i,
            Err(Error::NotFound) => {
                return Ok(ChatOutcome::told(
                    format!(
                        "You are not in this incident's team, {}: nothing changed.",
                        actor.username
                    ),
                    None,
                ))
            }
            Err(e) => return Err(e),
        };
        if before.state == IncidentState::Resolved {
            return Ok(ChatOutcome::told("Already resolved.", Some(before)));
        }
        if act == ChatAct::Acknowledge && before.state == IncidentState::Acknowledged {
            let by = before.acknowledged_by.clone().unwrap_or_default();
            return Ok(ChatOutcome::told(
                format!("Already acknowledged by {by}."),
                Some(before),
            ));
        }
        let done = match act {
            ChatAct::Acknowledge => self.acknowledge(actor, id).await,
            ChatAct::Resolve => self.resolve(actor, id, note).await,
            ChatAct::Snooze => self.snooze(actor, id, Duration::hours(1)).await,
            ChatAct::Take => {
                self.assign(actor, IncidentId(id), UserId(actor.user_id))
                    .await
            }
        };
        let said = match act {
            ChatAct::Acknowledge => "Acknowledged: it is yours.",
            ChatAct::Resolve => "Resolved.",
            ChatAct::Snooze => "Snoozed for an hour: no pages until then.",
            ChatAct::Take => "Taken: it is assigned to you.",
        };
        match done {
            Ok(now) => Ok(ChatOutcome {
                said: said.into(),
                incident: Some(now),
                by: Some(actor.username.clone()),
            }),
            Err(Error::Conflict(why) | Error::Invalid(why)) => Ok(ChatOutcome::told(
                format!("Nothing changed: {why}."),
                Some(before),
            )),
            Err(Error::Forbidden(why)) => Ok(ChatOutcome::told(
                format!("Nothing changed: {why}."),
                Some(before),
            )),
            Err(e) => Err(e),
        }
    }
}
