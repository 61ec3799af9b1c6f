//! `KlaxonTeam`: a team on a server, its team-scoped credential, and an optional invite link.

use super::common::{Conditions, LocalSecretRef, ObjectRef, SecretKeyRef};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "klaxon.dev",
    version = "v1alpha1",
    kind = "KlaxonTeam",
    namespaced,
    status = "KlaxonTeamStatus",
    shortname = "kxteam",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Team ID","type":"integer","jsonPath":".status.teamID"}"#,
    printcolumn = r#"{"name":"Server","type":"string","jsonPath":".spec.serverRef.name"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonTeamSpec {
    /// The `KlaxonServer`; another namespace's only when its `allowedTeams` admits this one.
    pub server_ref: ObjectRef,
    /// The team's unique name on the server. Default: the resource's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Identity provider groups whose members join the team at sign-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<TeamOidc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite: Option<InviteSpec>,
    /// The team's time zone, a name from the time zone database (`America/New_York`); its
    /// on-call days are in it. Default `UTC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 64),
        regex(pattern = r"^[A-Za-z0-9_+-][A-Za-z0-9/_+-]*$")
    )]
    pub time_zone: Option<String>,
    /// When a date's on-call day begins, `HH:MM` on the team's clock. Default `00:00`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"))]
    pub handoff_time: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamOidc {
    #[serde(default)]
    pub member_groups: Vec<String>,
    #[serde(default)]
    pub owner_groups: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteSpec {
    #[serde(default)]
    pub enabled: bool,
    #[serde(default)]
    pub role: InviteRole,
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 100))]
    pub max_uses: i64,
}

fn one() -> i64 {
    1
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InviteRole {
    #[default]
    Member,
    Owner,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonTeamStatus {
    /// `Ready`, with reasons `ServerRefNotFound` and `WaitingForServer` while false.
    #[serde(default)]
    pub conditions: Conditions,
    #[serde(default, rename = "teamID", skip_serializing_if = "Option::is_none")]
    pub team_id: Option<i64>,
    /// The team-scoped credential (a Secret in the operator's namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretKeyRef>,
    /// Where the server answers, so the team's children never read the server resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_endpoint: Option<String>,
    /// The invite link and its expiry (keys `url`, `expires_at`), in this namespace, owned by
    /// the team resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite_secret_ref: Option<LocalSecretRef>,
    #[serde(default, rename = "inviteID", skip_serializing_if = "Option::is_none")]
    pub invite_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
