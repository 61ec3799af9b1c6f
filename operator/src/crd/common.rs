//! Shapes shared by the resources.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A key of a Secret in the operator's own namespace (no namespace field, by design).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SecretKeyRef {
    pub name: String,
    pub key: String,
}

/// A Secret in the resource's own namespace, owned by the resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LocalSecretRef {
    pub name: String,
}

/// A `KlaxonTeam` (or `KlaxonServer`) by name; the same namespace when `namespace` is left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ObjectRef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// Condition types and the reasons the operator sets on `Ready`.
pub mod reason {
    pub const READY: &str = "Ready";
    pub const BOOTSTRAPPED: &str = "Bootstrapped";
    pub const SERVER_REF_NOT_FOUND: &str = "ServerRefNotFound";
    pub const WAITING_FOR_SERVER: &str = "WaitingForServer";
    pub const UNKNOWN_USER: &str = "UnknownUser";
    pub const WEBHOOK_SECRET_LOST: &str = "WebhookSecretLost";
}

/// Status conditions, as every resource carries them (`metav1.Condition`).
pub type Conditions = Vec<Condition>;
