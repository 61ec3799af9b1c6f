//! `KlaxonServer`: a Deployment and a ClusterIP Service running Klaxon, its database wiring, and
//! the instance-scoped credential the operator obtains from it.

use super::common::{Conditions, SecretKeyRef};
use k8s_openapi::api::core::v1::{
    Affinity, EnvFromSource, EnvVar, LocalObjectReference, PodSecurityContext,
    ResourceRequirements, SecurityContext, Toleration, TopologySpreadConstraint, Volume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(CustomResource, Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "klaxon.dev",
    version = "v1alpha1",
    kind = "KlaxonServer",
    namespaced,
    status = "KlaxonServerStatus",
    shortname = "kxserver",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"Hostname","type":"string","jsonPath":".spec.networking.hostname"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonServerSpec {
    /// Where the operator reaches the server. Default: the Service the operator creates,
    /// `http://{name}.{namespace}.svc:{servicePort}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// An instance-scoped API key to use instead of bootstrapping the server (a Secret in the
    /// operator's namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretKeyRef>,
    /// Which namespaces' `KlaxonTeam`s may use this server besides its own. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_teams: Option<AllowedTeams>,
    #[serde(default)]
    pub image: Image,
    /// Pods of the server. More than one needs an image tag v0.36.0 or newer and a PostgreSQL
    /// database.
    #[serde(default = "two")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    #[serde(default)]
    pub networking: Networking,
    /// Without a database the server keeps SQLite in an emptyDir: one replica, data lost with
    /// the pod. Fine for a try-out only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<Database>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweeper: Option<Sweeper>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadman: Option<DeadmanDefaults>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify: Option<Notify>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<Oidc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<PodOverrides>,
}

fn two() -> i32 {
    2
}

/// Namespaces whose teams may use the server (as Gateway API's `allowedRoutes`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllowedTeams {
    #[serde(default)]
    pub namespaces: AllowedNamespaces,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllowedNamespaces {
    /// `Same` (the default: only the server's namespace), `All`, or `Selector`.
    #[serde(default)]
    pub from: NamespacesFrom,
    /// With `from: Selector`: namespaces whose labels match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum NamespacesFrom {
    #[default]
    Same,
    All,
    Selector,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    #[serde(default = "default_repository")]
    pub repository: String,
    /// v0.36.0 or newer for more than one replica.
    #[serde(default = "default_tag")]
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<String>,
}

impl Default for Image {
    fn default() -> Self {
        Image {
            repository: default_repository(),
            tag: default_tag(),
            pull_policy: None,
        }
    }
}

fn default_repository() -> String {
    "ghcr.io/klaxon-dev/klaxon".into()
}

fn default_tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Networking {
    /// The public host name: `KLAXON_PUBLIC_URL` becomes `https://{hostname}`. Exposing the
    /// Service (Ingress, Route, Gateway) is left to you.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The container's and the Service's port.
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub service_port: i32,
}

impl Default for Networking {
    fn default() -> Self {
        Networking {
            hostname: None,
            service_port: default_port(),
        }
    }
}

fn default_port() -> i32 {
    8080
}

/// PostgreSQL, either described here with a password Secret, or a CloudNativePG `Cluster`
/// whose `{name}-app` Secret holds the connection `uri`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Database {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_secret_ref: Option<SecretKeyRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres_cluster_ref: Option<PostgresClusterRef>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PostgresClusterRef {
    pub name: String,
}

/// Seeds of the alert expiry and archive windows (`KLAXON_STALE_AFTER`, `KLAXON_ARCHIVE_AFTER`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sweeper {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_after: Option<String>,
}

/// The dead man's switch seeded into every team (`KLAXON_DEADMAN_*`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeadmanDefaults {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
}

/// ntfy (`KLAXON_NTFY_URL`, `KLAXON_NTFY_TOKEN`, `KLAXON_NOTIFY_REPEAT_INTERVAL`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Notify {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_secret_ref: Option<SecretKeyRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_interval: Option<String>,
}

/// Single sign-on (`KLAXON_OIDC_*`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Oidc {
    pub issuer: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_ref: Option<SecretKeyRef>,
    #[serde(default)]
    pub allowed_groups: Vec<String>,
    #[serde(default)]
    pub admin_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

/// Pass-through pod customisation: each field is Kubernetes' own type, copied as it is. The
/// operator never makes an affinity of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodOverrides {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context: Option<PodSecurityContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_security_context: Option<SecurityContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_env: Vec<EnvVar>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_env_from: Vec<EnvFromSource>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_volumes: Vec<Volume>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_volume_mounts: Vec<VolumeMount>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// When set, a PodDisruptionBudget selecting the server's pods is kept; clearing it deletes
    /// the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruption_budget: Option<DisruptionBudget>,
}

/// Each an integer or a percentage such as `"50%"`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisruptionBudget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KlaxonServerStatus {
    /// `Ready` and `Bootstrapped`.
    #[serde(default)]
    pub conditions: Conditions,
    /// The instance-scoped credential in use (a Secret in the operator's namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretKeyRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
