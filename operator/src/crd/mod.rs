//! The custom resources (group `klaxon.dev`, version `v1alpha1`), generated into CRDs from these
//! types: `klaxon-operator crd` prints them, and `deploy/crds/` must match (a test checks).

mod children;
mod common;
mod server;
mod team;

pub use children::*;
pub use common::*;
pub use server::*;
pub use team::*;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

/// Every CRD, in the order they are documented.
pub fn all() -> Vec<CustomResourceDefinition> {
    vec![
        KlaxonServer::crd(),
        KlaxonTeam::crd(),
        KlaxonAlertSource::crd(),
        KlaxonEscalationRule::crd(),
        KlaxonDeadmanSwitch::crd(),
    ]
}

/// The CRDs as one multi-document YAML stream.
pub fn all_yaml() -> String {
    all()
        .iter()
        .map(|crd| serde_yaml::to_string(crd).expect("a CRD serializes"))
        .collect::<Vec<_>>()
        .join("---\n")
}

/// File name in `deploy/crds/` for one CRD.
pub fn file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}.yaml", crd.metadata.name.as_deref().unwrap_or("crd"))
}
