//! Events about one alert its sender names by its own key (`sources::Event`: PagerDuty's
//! `dedup_key`). Such a sender says "trigger", "resolve" or "acknowledge" without the alert's
//! start time or, after the trigger, its labels: they come from the stored alert, and the
//! result goes through intake like any payload (`Core::intake`), so its rules hold alike.

use super::{Destination, IntakeOutcome};
use crate::sources::{Action, Alerts, Event, Reading};
use crate::{Core, Error, Result};
use klaxon_domain::alerting::{AlertStatus, IncomingAlert, PayloadGroup};
use klaxon_domain::ids::IncidentId;
use std::collections::BTreeMap;

/// The stored alert an event names.
#[derive(sqlx::FromRow)]
struct Stored {
    status: String,
    starts_at: i64,
    labels: String,
    annotations: String,
    generator_url: Option<String>,
    incident_id: Option<i64>,
}

impl Stored {
    fn firing(&self) -> bool {
        self.status == AlertStatus::Firing.as_str()
    }
}

/// Nothing done: the event named no alert it could act on (PagerDuty drops such an event).
const NOTHING: IntakeOutcome = IntakeOutcome {
    accepted: 0,
    ignored: 1,
};

/// A stored alert's labels or annotations.
fn parse(json: &str) -> Result<BTreeMap<String, String>> {
    serde_json::from_str(json).map_err(|e| Error::Internal(format!("a stored alert's labels: {e}")))
}

impl Core {
    /// Applies `event`, routed by the integration's rules when it has them.
    pub async fn apply_event(&self, to: Destination, event: Event) -> Result<IntakeOutcome> {
        match to.rules.clone() {
            Some(rules) => self.route(to, Reading::Event(event), &rules).await,
            None => self.apply_event_here(to, event).await,
        }
    }

    /// Applies `event` for the destination's team.
    pub(super) async fn apply_event_here(
        &self,
        to: Destination,
        event: Event,
    ) -> Result<IntakeOutcome> {
        let stored: Option<Stored> = sqlx::query_as(
            "SELECT status, starts_at, labels, annotations, generator_url, incident_id \
             FROM alerts WHERE team_id = $1 AND fingerprint = $2",
        )
        .bind(to.team_id)
        .bind(&event.fingerprint)
        .fetch_optional(&self.db.pool)
        .await?;
        match event.action {
            Action::Trigger(mut alerts) => {
                if let (Some(s), Some(alert)) = (&stored, alerts.alerts.get_mut(&event.fingerprint))
                {
                    // Firing still: the same occurrence, refreshed. Resolved: a new one.
                    alert.starts_at = if s.firing() {
                        s.starts_at
                    } else {
                        alert.starts_at.max(s.starts_at + 1)
                    };
                }
                self.intake(to, *alerts).await
            }
            Action::Resolve => match stored.filter(Stored::firing) {
                None => self.stamp_request(&to).await.map(|()| NOTHING),
                Some(s) => {
                    let labels: BTreeMap<String, String> = parse(&s.labels)?;
                    let alert = IncomingAlert {
                        fingerprint: event.fingerprint.clone(),
                        status: AlertStatus::Resolved,
                        annotations: parse(&s.annotations)?,
                        starts_at: s.starts_at,
                        ends_at: Some(self.now().max(s.starts_at)),
                        generator_url: s.generator_url,
                        labels: labels.clone(),
                    };
                    let alerts = Alerts {
                        group: PayloadGroup {
                            key: format!("event:{}", event.fingerprint),
                            labels,
                        },
                        alerts: BTreeMap::from([(event.fingerprint, alert)]),
                        ignored: 0,
                    };
                    self.intake(to, alerts).await
                }
            },
            Action::Acknowledge => {
                self.stamp_request(&to).await?;
                match stored.filter(Stored::firing).and_then(|s| s.incident_id) {
                    None => Ok(NOTHING),
                    Some(incident) => {
                        let done = self.acknowledged_by_sender(&to, incident).await?;
                        Ok(IntakeOutcome {
                            accepted: usize::from(done),
                            ignored: usize::from(!done),
                        })
                    }
                }
            }
        }
    }

    /// The sender's acknowledgement: by no person, said so on the timeline. True when this
    /// call acknowledged it; an incident resolved meanwhile is left as it is.
    async fn acknowledged_by_sender(&self, to: &Destination, incident: i64) -> Result<bool> {
        let mut tx = self.db.begin().await?;
        let sender = to.source.label();
        let done = match self
            .acknowledge_by_sender_in(&mut tx, IncidentId(incident), sender)
            .await
        {
            Err(Error::Conflict(_)) => false,
            other => other?,
        };
        tx.commit().await?;
        if done {
            self.wake_notifier();
        }
        Ok(done)
    }
}
