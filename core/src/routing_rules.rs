//! Setting an integration's routing rules, and trying them on a sample request before they are
//! kept ("simulate"). Intake applies them (`intake::routing`).

use crate::sources::{source, Action, Reading};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::alerting::IncomingAlert;
use klaxon_domain::ids::{IntegrationId, TeamId};
use klaxon_domain::incident::Integration;
use klaxon_domain::mapping::{WebhookTemplates, MAX_SAMPLE};
use klaxon_domain::routing::{RoutingRule, Rules, RulesTrial, SimulatedAlert};

impl Core {
    /// Replaces an integration's rules (`require_rules_setter`). A rule may send alerts only to
    /// a team `may_route_to` allows; every rule is checked before any is kept.
    pub async fn set_integration_rules(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: IntegrationId,
        rules: Vec<RoutingRule>,
    ) -> Result<Integration> {
        let (TeamId(team_id), IntegrationId(id)) = (team_id, id);
        self.require_rules_setter(actor, team_id).await?;
        Rules::compile(&rules).map_err(Error::Invalid)?;
        for (i, r) in rules.iter().enumerate() {
            let Some(name) = &r.team else { continue };
            let found: Option<(i64,)> = sqlx::query_as("SELECT id FROM teams WHERE name = $1")
                .bind(name)
                .fetch_optional(&self.db.pool)
                .await?;
            let refused =
                || Error::Invalid(format!("rules[{i}].team: you are in no team named {name}"));
            let (target,) = found.ok_or_else(refused)?;
            // A team the caller cannot see is refused as if it did not exist.
            if !self.may_route_to(actor, target).await? {
                return Err(refused());
            }
        }
        let json = serde_json::to_string(&rules).map_err(|e| Error::Internal(e.to_string()))?;
        let done = sqlx::query("UPDATE integrations SET rules = $1 WHERE id = $2 AND team_id = $3")
            // An empty list is kept as one, not cleared: alerts the rules sent to other teams
            // still resolve there (`intake::routing`), which only integrations with rules check.
            .bind(json)
            .bind(id)
            .bind(team_id)
            .execute(&self.db.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound);
        }
        self.get_integration(team_id, id).await
    }

    /// What `trial.sample`, read as the integration's sender's request, would become under
    /// `trial.rules` (the stored rules when absent). Nothing is stored. Any team member.
    pub async fn simulate_rules(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: IntegrationId,
        trial: RulesTrial,
    ) -> Result<Vec<SimulatedAlert>> {
        let (TeamId(team_id), IntegrationId(id)) = (team_id, id);
        self.team_access(actor, team_id).await?;
        if trial.sample.len() > MAX_SAMPLE {
            return Err(Error::Invalid(format!(
                "sample: at most {} KB",
                MAX_SAMPLE / 1024
            )));
        }
        let integration = self.get_integration(team_id, id).await?;
        let rules = trial.rules.unwrap_or(integration.rules);
        let rules = Rules::compile(&rules).map_err(Error::Invalid)?;
        let templates: Option<&WebhookTemplates> = integration.templates.as_ref();
        let reading = source(integration.kind.as_str())
            .read(trial.sample.as_bytes(), self.now(), templates)
            .map_err(|why| Error::Invalid(format!("sample: {why}")))?;
        let alerts: Vec<IncomingAlert> = match reading {
            Reading::Alerts(a) => a.alerts.into_values().collect(),
            Reading::Event(e) => match e.action {
                Action::Trigger(a) => a.alerts.into_values().collect(),
                _ => {
                    return Ok(vec![SimulatedAlert {
                        fingerprint: e.fingerprint,
                        alertname: None,
                        decision: None,
                    }])
                }
            },
        };
        Ok(alerts
            .into_iter()
            .map(|a| SimulatedAlert {
                alertname: a.labels.get("alertname").cloned(),
                decision: Some(rules.decide(&a.labels)),
                fingerprint: a.fingerprint,
            })
            .collect())
    }
}
