//! Wire shapes of integrations, alerts, incidents, notes, the timeline and the schedule.

use crate::alerting::{AlertStatus, IncidentState, Severity};
use crate::text::Label;
use crate::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What posts to an integration, and so the format its body is read in: Alertmanager's webhook
/// payload (Grafana's webhook contact point sends a superset of it), PagerDuty's Events API v2
/// (any sender configured for PagerDuty, its routing key being the integration's key), or
/// Opsgenie's Alert API (any sender configured for Opsgenie, its API key being the integration's
/// key), or any JSON read by the integration's own templates (`webhook`). Fixed at creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "config", derive(schemars::JsonSchema))]
pub enum IntegrationKind {
    #[default]
    Alertmanager,
    Grafana,
    #[serde(rename = "pagerduty")]
    PagerDuty,
    Opsgenie,
    Webhook,
}

crate::words!(IntegrationKind, "integration kind" {
    Alertmanager => "alertmanager",
    Grafana => "grafana",
    PagerDuty => "pagerduty",
    Opsgenie => "opsgenie",
    Webhook => "webhook",
});

impl IntegrationKind {
    /// What a person calls the sender.
    pub fn label(self) -> &'static str {
        match self {
            IntegrationKind::Alertmanager => "Alertmanager",
            IntegrationKind::Grafana => "Grafana",
            IntegrationKind::PagerDuty => "PagerDuty Events v2",
            IntegrationKind::Opsgenie => "Opsgenie Alert API",
            IntegrationKind::Webhook => "Generic JSON webhook",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum IntegrationStatus {
    Active,
    Quiet,
    #[serde(rename = "Never used")]
    NeverUsed,
}

impl IntegrationStatus {
    /// `Active` when the key posted within the last day, `Quiet` when it posted before that.
    pub fn derive(last_webhook_at: Option<i64>, now: i64) -> IntegrationStatus {
        match last_webhook_at {
            None => IntegrationStatus::NeverUsed,
            Some(t) if now - t <= 86_400 => IntegrationStatus::Active,
            Some(_) => IntegrationStatus::Quiet,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Integration {
    pub id: i64,
    pub team_id: i64,
    pub name: String,
    pub kind: IntegrationKind,
    pub status: IntegrationStatus,
    pub last_webhook_at: Option<Timestamp>,
    pub last_alert_at: Option<Timestamp>,
    pub alerts_24h: i64,
    pub created_at: Timestamp,
    /// The Alertmanager its alerts come from, for silences made from an incident.
    pub alertmanager_url: Option<String>,
    /// Whether credentials for that Alertmanager are stored (they are never shown).
    pub alertmanager_auth_set: bool,
    /// A `webhook` integration's templates; none for other kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub templates: Option<crate::mapping::WebhookTemplates>,
    /// Its routing rules, in order (the first that matches an alert decides).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<crate::routing::RoutingRule>,
}

/// `PATCH /api/teams/{team_id}/integrations/{id}`: each field given is changed, the others
/// kept. `null` clears an Alertmanager field; clearing the URL clears the credentials too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct IntegrationChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Label>,
    /// Base URL of the Alertmanager the alerts come from (http or https, at most 500
    /// characters, no credentials, query or fragment).
    #[serde(
        default,
        deserialize_with = "given",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, max_length = 500, format = "uri"))]
    pub alertmanager_url: Option<Option<String>>,
    /// How to sign in to it. Write-only: answers only say whether it is set.
    #[serde(
        default,
        deserialize_with = "given",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::silence::AlertmanagerAuth>))]
    pub alertmanager_auth: Option<Option<crate::silence::AlertmanagerAuth>>,
    /// A `webhook` integration's templates, replaced whole (checked before they are kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub templates: Option<crate::mapping::WebhookTemplates>,
}

/// A field that is present (possibly `null`), as opposed to absent.
fn given<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// A new integration: the key and the webhook URL are shown only here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewIntegration {
    #[serde(flatten)]
    pub integration: Integration,
    pub key: String,
    pub webhook_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Alert {
    pub id: i64,
    pub team_id: i64,
    pub fingerprint: String,
    pub status: AlertStatus,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub starts_at: Timestamp,
    pub ends_at: Option<Timestamp>,
    pub received_at: Timestamp,
    /// `alertmanager` when the sender resolved it, `expiry` when Klaxon did.
    pub resolution_source: Option<String>,
    pub archived_at: Option<Timestamp>,
    pub incident_id: Option<i64>,
    pub integration_id: Option<i64>,
    /// The sender's link to the alert's source graph (Alertmanager's `generatorURL`), when it
    /// gave an http(s) one.
    pub generator_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Incident {
    pub id: i64,
    pub team_id: i64,
    pub title: String,
    pub state: IncidentState,
    pub severity: Severity,
    pub group_key: String,
    pub signature: String,
    pub assignee_id: Option<i64>,
    pub assignee: Option<String>,
    /// Who the opening page went to, in words: a username, `the fallback topic`, `the team's
    /// owners` or `the escalation ladder`; none when nobody could be paged.
    pub paged: Option<String>,
    pub acknowledged_by: Option<String>,
    pub acknowledged_at: Option<Timestamp>,
    pub snoozed_until: Option<Timestamp>,
    pub resolved_at: Option<Timestamp>,
    pub archived: bool,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Note {
    pub id: i64,
    pub author: Option<String>,
    pub text: String,
    /// True for the note that says what fixed it.
    pub resolution: bool,
    pub created_at: Timestamp,
}

/// What a timeline entry records. The database refuses any other word (migration 0020).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TimelineKind {
    Opened,
    AlertFiring,
    AlertResolved,
    Assigned,
    Paged,
    Reminder,
    Escalated,
    NobodyReachable,
    EscalationExhausted,
    Held,
    PushFailed,
    PushDelivered,
    Acknowledged,
    Snoozed,
    Unsnoozed,
    Note,
    Silenced,
    Unsilenced,
    Resolved,
    Archived,
    Unarchived,
}

crate::words!(TimelineKind, "timeline kind" {
    Opened => "opened",
    AlertFiring => "alert_firing",
    AlertResolved => "alert_resolved",
    Assigned => "assigned",
    Paged => "paged",
    Reminder => "reminder",
    Escalated => "escalated",
    NobodyReachable => "nobody_reachable",
    EscalationExhausted => "escalation_exhausted",
    Held => "held",
    PushFailed => "push_failed",
    PushDelivered => "push_delivered",
    Acknowledged => "acknowledged",
    Snoozed => "snoozed",
    Unsnoozed => "unsnoozed",
    Note => "note",
    Silenced => "silenced",
    Unsilenced => "unsilenced",
    Resolved => "resolved",
    Archived => "archived",
    Unarchived => "unarchived",
});

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TimelineEntry {
    pub id: i64,
    pub at: Timestamp,
    pub kind: TimelineKind,
    pub actor: Option<String>,
    pub text: String,
}

/// `GET /api/stats/incidents`: null, not zero, until there is data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IncidentStats {
    pub mtta_seconds: Option<i64>,
    pub mttr_seconds: Option<i64>,
    pub opened: i64,
    pub acknowledged: i64,
    pub resolved: i64,
}

/// `GET /api/stats/incidents/weekly`: one week (Monday 00:00 UTC onwards) of incidents opened
/// then; the means are over those acknowledged or resolved, null where there are none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WeeklyStats {
    /// The week's Monday, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    pub week_start: String,
    pub opened: i64,
    pub mtta_seconds: Option<i64>,
    pub mttr_seconds: Option<i64>,
}

/// Weeks `weekly` answers by default and at most.
pub const DEFAULT_WEEKS: i64 = 12;
pub const MAX_WEEKS: i64 = 104;

/// `GET /api/teams/{teamID}/integrations/{id}/volume`: alerts that started firing in one hour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HourVolume {
    /// The start of the hour (UTC).
    pub hour: Timestamp,
    pub alerts: i64,
}

/// Hours `volume` answers by default and at most.
pub const DEFAULT_HOURS: i64 = 24;
pub const MAX_HOURS: i64 = 168;

const WEEK: i64 = 7 * 86_400;
/// 1970-01-05, the first Monday of Unix time.
const FIRST_MONDAY: i64 = 4 * 86_400;

/// The Monday 00:00 UTC that starts the week of a Unix time.
pub fn week_start(unix: i64) -> i64 {
    FIRST_MONDAY + (unix - FIRST_MONDAY).div_euclid(WEEK) * WEEK
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::{parse_date, utc_date};

    #[test]
    fn weeks_start_on_monday_midnight_utc() {
        // 2026-11-23 was a Monday.
        let monday = 1_795_392_000;
        assert_eq!(utc_date(monday), "2026-11-23");
        assert_eq!(week_start(monday), monday);
        assert_eq!(week_start(monday + WEEK - 1), monday);
        assert_eq!(week_start(monday - 1), monday - WEEK);
        assert_eq!(utc_date(week_start(monday + 3 * 86_400 + 5)), "2026-11-23");
    }

    #[test]
    fn integration_status_boundaries() {
        assert_eq!(
            IntegrationStatus::derive(None, 100),
            IntegrationStatus::NeverUsed
        );
        assert_eq!(
            IntegrationStatus::derive(Some(0), 86_400),
            IntegrationStatus::Active
        );
        assert_eq!(
            IntegrationStatus::derive(Some(0), 86_401),
            IntegrationStatus::Quiet
        );
        assert_eq!(
            serde_json::to_string(&IntegrationStatus::NeverUsed).unwrap(),
            "\"Never used\""
        );
    }

    #[test]
    fn dates() {
        assert!(parse_date("2026-11-22").is_some());
        for bad in [
            "2026-02-30",
            "2026-1-2",
            "22-11-2026",
            "2026-11-22T00:00:00Z",
            "",
        ] {
            assert!(parse_date(bad).is_none(), "{bad}");
        }
        assert_eq!(utc_date(1_795_305_600), "2026-11-22");
        assert_eq!(utc_date(1_795_305_599), "2026-11-21");
    }
}
