//! Klaxon's configuration as a file: the types of the YAML document that `klaxon export` writes
//! and `klaxon apply` reads, its checks, and the plan that turns one configuration into another.
//!
//! Names follow the operator's custom resources where they overlap (`displayName`, `timeZone`,
//! `handoffTime`, alert sources with `kind`, escalation targets `{type, username}`, dead man's
//! switches with `matcher`, `timeout`, `severity`), so one model serves both. People are named by
//! username: the file never creates accounts (people sign up by invite or single sign-on) and
//! never holds a secret (integration keys stay on the server; a webhook channel's URL is read
//! from an environment variable the file names).

pub mod check;
pub mod plan;
pub mod rota;
pub mod step;

use crate::alerting::Severity;
use crate::channel::{ChannelEvent, ChannelKind};
use crate::incident::IntegrationKind;
use crate::settings::SignupMode;
use crate::team::Role;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const API_VERSION: &str = "klaxon.dev/v1alpha1";
pub const KIND: &str = "KlaxonConfig";

/// A whole install's configuration, or one team's. Sections left out are not managed: `apply`
/// leaves them as they are. A list that is given is the whole list; `apply --prune` deletes
/// what it does not name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "Klaxon configuration")]
pub struct ConfigFile {
    /// `klaxon.dev/v1alpha1`.
    #[schemars(regex(pattern = r"^klaxon\.dev/v1alpha1$"))]
    pub api_version: String,
    /// `KlaxonConfig`.
    #[schemars(regex(pattern = r"^KlaxonConfig$"))]
    pub kind: String,
    /// The install's settings (an administrator's or an instance-scoped service account's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<SettingsSpec>,
    #[serde(default)]
    pub teams: Vec<TeamSpec>,
}

impl ConfigFile {
    pub fn new(settings: Option<SettingsSpec>, teams: Vec<TeamSpec>) -> ConfigFile {
        ConfigFile {
            api_version: API_VERSION.into(),
            kind: KIND.into(),
            settings,
            teams,
        }
    }
}

/// Instance settings; a field left out is left as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signup_mode: Option<SignupMode>,
    /// How often an unacknowledged incident is paged again, e.g. `30m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]+[smhd])+$"))]
    pub notify_repeat_interval: Option<String>,
    /// After how long without news an open incident is stale, e.g. `6h`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]+[smhd])+$"))]
    pub stale_after: Option<String>,
    /// After how long a resolved incident is archived, e.g. `7d`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]+[smhd])+$"))]
    pub archive_after: Option<String>,
}

/// A team (the operator's `KlaxonTeam`) and everything in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeamSpec {
    /// The team's unique name: 1 to 64 of `a-z 0-9 - _`.
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[a-z0-9_-]+$"))]
    pub name: String,
    /// 1 to 100 characters; the name when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub display_name: Option<String>,
    /// A name from the time zone database (`America/New_York`); its on-call days are in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 64),
        regex(pattern = r"^[A-Za-z0-9_+-][A-Za-z0-9/_+-]*$")
    )]
    pub time_zone: Option<String>,
    /// When a date's on-call day begins, `HH:MM` on the team's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"))]
    pub handoff_time: Option<String>,
    /// Whether the incoming and outgoing person hear of each hand-off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff_notices: Option<bool>,
    /// Identity provider groups whose members join the team at sign-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<MemberSpec>>,
    /// Integrations (the operator's `KlaxonAlertSource`): their webhook URLs are made on the
    /// server and shown once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alert_sources: Option<Vec<AlertSourceSpec>>,
    /// The ladder (the operator's `KlaxonEscalationRule`); `levels: []` is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<EscalationSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotations: Option<Vec<RotationSpec>>,
    /// Who holds each of the team's on-call dates from its today on, as runs of dates. Dates
    /// before the team's today are history: never written, never compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rota: Option<Vec<RotaSpec>>,
    /// The operator's `KlaxonDeadmanSwitch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadman_switches: Option<Vec<DeadmanSwitchSpec>>,
    /// Windows that have not ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance_windows: Option<Vec<MaintenanceSpec>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Vec<ChannelSpec>>,
    /// Partial-day covers that have not ended: someone holds the pager for part of a day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covers: Option<Vec<CoverSpec>>,
}

impl TeamSpec {
    pub fn named(name: &str) -> TeamSpec {
        TeamSpec {
            name: name.into(),
            display_name: None,
            time_zone: None,
            handoff_time: None,
            handoff_notices: None,
            oidc: None,
            members: None,
            alert_sources: None,
            escalation: None,
            rotations: None,
            rota: None,
            deadman_switches: None,
            maintenance_windows: None,
            channels: None,
            covers: None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OidcSpec {
    #[serde(default)]
    pub member_groups: Vec<String>,
    #[serde(default)]
    pub owner_groups: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemberSpec {
    #[schemars(length(min = 1, max = 64))]
    pub username: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AlertSourceSpec {
    /// Unique in the team, 1 to 100 characters.
    #[schemars(length(min = 1, max = 100))]
    pub name: String,
    /// Changing it replaces the integration (and its webhook URL).
    #[serde(default)]
    pub kind: IntegrationKind,
    /// A `webhook` source's templates, written as the REST API writes them (`title`,
    /// `severity`, `dedup_key`, `resolved`, `labels`, `link`, `message`); absent leaves them as
    /// they are (a new one starts with the starter set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub templates: Option<crate::mapping::WebhookTemplates>,
    /// Its routing rules, in order, written as the REST API writes them (`matchers`, `team`,
    /// `severity`, `labels`, `drop`); absent leaves them as they are, `[]` removes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 50))]
    pub rules: Option<Vec<crate::routing::RoutingRule>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EscalationSpec {
    #[schemars(length(max = 10))]
    pub levels: Vec<EscalationLevel>,
    /// How many times the whole ladder runs again after the last level (0 to 10).
    #[serde(default)]
    #[schemars(range(min = 0, max = 10))]
    pub repeat: u32,
    /// A shared ntfy topic paged once when the ladder is exhausted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9_-]+$"))]
    pub fallback_topic: Option<String>,
    /// Severities paged with low urgency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub low_urgency: Vec<Severity>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EscalationLevel {
    /// How long the level waits for an acknowledgement, e.g. `5m` (1m to 24h).
    #[schemars(regex(pattern = r"^([0-9]+[smhd])+$"))]
    pub timeout: String,
    #[schemars(length(min = 1, max = 10))]
    pub targets: Vec<EscalationTarget>,
}

/// `{type: user, username: alice}` or `{type: oncall}`, as in the operator's resource.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EscalationTarget {
    #[serde(rename = "type")]
    pub kind: TargetKind,
    /// With `type: user`: the person's username.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    User,
    Oncall,
}

/// Members taking turns of `shiftDays` days from `startDate`, in the team's zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RotationSpec {
    #[schemars(length(min = 1, max = 100))]
    pub name: String,
    /// Usernames in turn order; one person may appear more than once.
    #[schemars(length(min = 1, max = 100))]
    pub members: Vec<String>,
    #[schemars(range(min = 1, max = 365))]
    pub shift_days: i64,
    /// `YYYY-MM-DD`.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub start_date: String,
    /// When `apply` makes this rotation, it also fills this many of the team's dates with it,
    /// from the team's today (dates given by hand are kept). Read only then: not exported, and
    /// no reason to make the rotation again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 365))]
    pub fill_days: Option<u32>,
}

/// One person on call for a run of the team's dates, `from` to `to` inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RotaSpec {
    #[schemars(length(min = 1, max = 64))]
    pub username: String,
    /// `YYYY-MM-DD`.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub from: String,
    /// `YYYY-MM-DD`, at most 365 dates after `from` counted with it.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeadmanSwitchSpec {
    #[schemars(length(min = 1, max = 100))]
    pub name: String,
    /// Alertmanager matcher syntax naming an `alertname`, e.g. `{alertname="Watchdog"}`.
    #[schemars(length(min = 1, max = 1000))]
    pub matcher: String,
    /// Silence that counts as dead, e.g. `10m` (1m to 7d).
    #[schemars(regex(pattern = r"^([0-9]+[smhd])+$"))]
    pub timeout: String,
    #[serde(default = "critical")]
    pub severity: Severity,
}

fn critical() -> Severity {
    Severity::Critical
}

/// A maintenance window: nothing is paged inside it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaintenanceSpec {
    /// RFC 3339, e.g. `2026-12-01T22:00:00Z`.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T"))]
    pub starts_at: String,
    /// 5 minutes to 24 hours after the start.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T"))]
    pub ends_at: String,
}

/// Someone holding the team's pager from `startsAt` to `endsAt` (at most 14 days).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CoverSpec {
    #[schemars(length(min = 1, max = 64))]
    pub username: String,
    /// Whom they cover for; left out, whoever holds the pager when the cover starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub covering: Option<String>,
    /// RFC 3339.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T"))]
    pub starts_at: String,
    /// RFC 3339, after the start.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T"))]
    pub ends_at: String,
}

/// Where the team's incidents are told as they happen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelSpec {
    #[schemars(length(min = 1, max = 100))]
    pub name: String,
    pub kind: ChannelKind,
    /// For `matrix`, the room (`!id:server` or `#alias:server`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room: Option<String>,
    /// For the webhook kinds, the environment variable `apply` reads the webhook's URL from (a
    /// secret, so never in the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    pub url_from_env: Option<String>,
    /// What it hears; left out, every event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<ChannelEvent>>,
    /// The severities it hears; left out or empty, every severity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub severities: Vec<Severity>,
}

/// The JSON Schema of the file (`klaxon schema`, `docs/klaxon-config.schema.json`).
pub fn json_schema() -> serde_json::Value {
    let schema = schemars::gen::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<ConfigFile>();
    serde_json::to_value(schema).expect("a schema is JSON")
}
