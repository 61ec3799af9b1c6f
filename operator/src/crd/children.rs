//! The team's children: alert sources, the escalation ladder, dead man's switches. Each
//! resolves its `teamRef` to the team's status on every reconcile.

use super::common::{Conditions, LocalSecretRef, ObjectRef};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "klaxon.dev",
    version = "v1alpha1",
    kind = "KlaxonAlertSource",
    namespaced,
    status = "KlaxonAlertSourceStatus",
    shortname = "kxsource",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Team","type":"string","jsonPath":".spec.teamRef.name"}"#,
    printcolumn = r#"{"name":"Kind","type":"string","jsonPath":".spec.kind"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonAlertSourceSpec {
    pub team_ref: ObjectRef,
    /// The integration's kind (`alertmanager`, `grafana`, `pagerduty`, `opsgenie` or `webhook`,
    /// as the server knows them); changing it replaces the integration (and its webhook URL).
    #[serde(default = "alertmanager")]
    pub kind: String,
    /// The integration's name on the server. Default: the resource's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

fn alertmanager() -> String {
    "alertmanager".into()
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonAlertSourceStatus {
    #[serde(default)]
    pub conditions: Conditions,
    #[serde(
        default,
        rename = "integrationID",
        skip_serializing_if = "Option::is_none"
    )]
    pub integration_id: Option<i64>,
    /// The kind the integration was made with, to notice a change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Key `url`: the webhook URL for Alertmanager (an `AlertmanagerConfig` can read it).
    #[serde(
        default,
        rename = "webhookURLSecretRef",
        skip_serializing_if = "Option::is_none"
    )]
    pub webhook_url_secret_ref: Option<LocalSecretRef>,
}

#[derive(CustomResource, Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "klaxon.dev",
    version = "v1alpha1",
    kind = "KlaxonEscalationRule",
    namespaced,
    status = "KlaxonEscalationRuleStatus",
    shortname = "kxladder",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Team","type":"string","jsonPath":".spec.teamRef.name"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonEscalationRuleSpec {
    pub team_ref: ObjectRef,
    pub levels: Vec<EscalationLevel>,
    /// How many times the whole ladder runs again after the last level (0 to 10).
    #[serde(default)]
    #[schemars(range(min = 0, max = 10))]
    pub repeat: u32,
    /// A shared ntfy topic paged once when the ladder is exhausted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_topic: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EscalationLevel {
    /// How long the level waits for an acknowledgement, e.g. `5m` (1m to 24h).
    pub timeout: String,
    pub targets: Vec<EscalationTarget>,
}

/// `{type: user, username: alice}` or `{type: oncall}`. (A struct, not a tagged enum: CRD
/// schemas must be structural.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EscalationTarget {
    #[serde(rename = "type")]
    pub kind: TargetKind,
    /// With `type: user`: the person's username, resolved to their id on every reconcile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
}

/// `user`: a named person; `oncall`: whoever the team's rota names today.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    User,
    Oncall,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonEscalationRuleStatus {
    /// `Ready`, with reason `UnknownUser` while a username does not resolve.
    #[serde(default)]
    pub conditions: Conditions,
}

#[derive(CustomResource, Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "klaxon.dev",
    version = "v1alpha1",
    kind = "KlaxonDeadmanSwitch",
    namespaced,
    status = "KlaxonDeadmanSwitchStatus",
    shortname = "kxswitch",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Team","type":"string","jsonPath":".spec.teamRef.name"}"#,
    printcolumn = r#"{"name":"Timeout","type":"string","jsonPath":".spec.timeout"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonDeadmanSwitchSpec {
    pub team_ref: ObjectRef,
    /// The switch's name in the team. Default: the resource's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Alertmanager matcher syntax naming an `alertname`, e.g. `{alertname="Watchdog"}`.
    pub matcher: String,
    /// Silence that counts as dead, e.g. `10m` (1m to 7d).
    pub timeout: String,
    /// `info`, `warning` or `critical` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonDeadmanSwitchStatus {
    #[serde(default)]
    pub conditions: Conditions,
    #[serde(default, rename = "switchID", skip_serializing_if = "Option::is_none")]
    pub switch_id: Option<i64>,
}
