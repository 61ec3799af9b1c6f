//! An integration's routing rules at intake (`domain::routing`): each alert of a request, as its
//! source read it, goes where the first matching rule says: another team, a severity or labels
//! set, or dropped; what was decided is the alert's `routing` annotation. An alert this
//! integration already has firing stays with the team that holds it (a rule changed meanwhile
//! cannot strand it), so it resolves where it fired; events naming an alert by key go to the team
//! holding it.

use super::{Destination, IntakeOutcome};
use crate::db::fetch_in;
use crate::sources::{Action, Alerts, Reading};
use crate::{Core, Result};
use klaxon_domain::alerting::{AlertStatus, IncomingAlert};
use klaxon_domain::routing::Rules;
use std::collections::{BTreeMap, HashMap};

/// Where a part of a request goes: the integration's own team, or another by id.
type Part = Option<i64>;

impl Core {
    /// Takes `reading` in, as `rules` route it.
    pub(super) async fn route(
        &self,
        to: Destination,
        reading: Reading,
        rules: &Rules,
    ) -> Result<IntakeOutcome> {
        match reading {
            Reading::Alerts(alerts) => self.route_alerts(to, alerts, rules).await,
            Reading::Event(mut event) => {
                let held = self
                    .firing_holders(&to, &[event.fingerprint.as_str()])
                    .await?;
                let held = held.get(&event.fingerprint).copied();
                let part = match &mut event.action {
                    Action::Trigger(alerts) => {
                        let Some(alert) = alerts.alerts.get_mut(&event.fingerprint) else {
                            return self.apply_event_here(to, event).await;
                        };
                        match self.decide(&to, rules, alert, held).await? {
                            Some(part) => part,
                            None => return self.dropped(&to, 1).await,
                        }
                    }
                    // A resolve or an acknowledgement goes where its alert is.
                    _ => held.filter(|&team| team != to.team_id),
                };
                let dest = part_destination(&to, part);
                self.apply_event_here(dest, event).await
            }
        }
    }

    async fn route_alerts(
        &self,
        to: Destination,
        alerts: Alerts,
        rules: &Rules,
    ) -> Result<IntakeOutcome> {
        let fingerprints: Vec<&str> = alerts.alerts.keys().map(String::as_str).collect();
        let held = self.firing_holders(&to, &fingerprints).await?;
        let mut parts: BTreeMap<Part, BTreeMap<String, IncomingAlert>> = BTreeMap::new();
        let mut dropped = 0;
        for (fingerprint, mut alert) in alerts.alerts {
            let held = held.get(&fingerprint).copied();
            match self.decide(&to, rules, &mut alert, held).await? {
                Some(part) => {
                    parts.entry(part).or_default().insert(fingerprint, alert);
                }
                None => dropped += 1,
            }
        }
        let mut outcome = IntakeOutcome {
            accepted: 0,
            ignored: alerts.ignored + dropped,
        };
        if parts.is_empty() {
            self.stamp_request(&to).await?;
        }
        for (part, alerts_of) in parts {
            let dest = part_destination(&to, part);
            let done = self
                .intake(
                    dest,
                    Alerts {
                        group: alerts.group.clone(),
                        alerts: alerts_of,
                        ignored: 0,
                    },
                )
                .await?;
            outcome.accepted += done.accepted;
            outcome.ignored += done.ignored;
        }
        Ok(outcome)
    }

    /// The first matching rule's decision, applied to `alert`: the part it goes to, or `None`
    /// when it is dropped. `held` is the team holding it firing, where it stays (its labels
    /// still set by the rule, so a refresh changes nothing). A rule naming a team that no longer
    /// exists keeps the alert here.
    async fn decide(
        &self,
        to: &Destination,
        rules: &Rules,
        alert: &mut IncomingAlert,
        held: Option<i64>,
    ) -> Result<Option<Part>> {
        let d = rules.decide(&alert.labels);
        if d.dropped && held.is_none() {
            return Ok(None);
        }
        alert.labels = d.labels;
        let mut said = d.said;
        let part = match (held, d.team) {
            (Some(team), _) => (team != to.team_id).then_some(team),
            (None, None) => None,
            (None, Some(name)) => match self.team_id_named(&name).await? {
                Some(id) if id != to.team_id => Some(id),
                Some(_) => None,
                None => {
                    said = said.map(|s| format!("{s} (no team {name} now: kept here)"));
                    None
                }
            },
        };
        if let Some(said) = said {
            alert.annotations.insert("routing".into(), said);
        }
        Ok(Some(part))
    }

    /// The teams holding a firing alert of these fingerprints from this integration.
    async fn firing_holders(
        &self,
        to: &Destination,
        fingerprints: &[&str],
    ) -> Result<HashMap<String, i64>> {
        let Some(integration) = to.integration_id else {
            return Ok(HashMap::new());
        };
        let fingerprints: Vec<String> = fingerprints.iter().map(|f| f.to_string()).collect();
        let mut conn = self.db.pool.acquire().await?;
        let rows: Vec<(String, i64)> = fetch_in(
            &mut conn,
            (self.db.backend, false),
            "SELECT fingerprint, team_id FROM alerts \
             WHERE integration_id = $1 AND status = $2 AND fingerprint IN ({ids})",
            &[integration.into(), AlertStatus::Firing.as_str().into()],
            &fingerprints,
        )
        .await?;
        Ok(rows.into_iter().collect())
    }

    async fn team_id_named(&self, name: &str) -> Result<Option<i64>> {
        let row: Option<(i64,)> = sqlx::query_as("SELECT id FROM teams WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.db.pool)
            .await?;
        Ok(row.map(|(id,)| id))
    }

    /// Nothing taken in: every alert was dropped by a rule.
    async fn dropped(&self, to: &Destination, n: usize) -> Result<IntakeOutcome> {
        self.stamp_request(to).await?;
        Ok(IntakeOutcome {
            accepted: 0,
            ignored: n,
        })
    }
}

/// The destination of a part: the integration's own, or another team's.
fn part_destination(to: &Destination, part: Part) -> Destination {
    match part {
        Some(team_id) => Destination {
            team_id,
            ..to.clone()
        },
        None => to.clone(),
    }
}
