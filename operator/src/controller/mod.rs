//! The controllers: one per kind, each a reconcile function over its resource. Shared here:
//! the context, the error type, conditions, and the Secrets the operator keeps.

pub mod children;
pub mod server;
pub mod team;

use crate::klaxon::ApiError;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, OwnerReference, Time};
use k8s_openapi::ByteString;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use std::collections::BTreeMap;
use std::time::Duration;

/// The field manager of every server-side apply.
pub const MANAGER: &str = "klaxon-operator";
/// Resources the operator must clean up on the server carry this finalizer.
pub const FINALIZER: &str = "klaxon.dev/cleanup";
/// How often a ready resource is looked at again (drift, invite refresh).
pub const RESYNC: Duration = Duration::from_secs(300);
/// How soon a resource waiting on something else is looked at again.
pub const RETRY: Duration = Duration::from_secs(15);

#[derive(Clone)]
pub struct Context {
    pub client: Client,
    /// Where credentials live: the operator's own namespace.
    pub namespace: String,
    pub metrics: std::sync::Arc<crate::ops::Metrics>,
    /// Unix seconds: the system clock, or a test's own.
    pub now: std::sync::Arc<dyn Fn() -> i64 + Send + Sync>,
}

impl Context {
    pub fn new(
        client: Client,
        namespace: String,
        metrics: std::sync::Arc<crate::ops::Metrics>,
    ) -> Context {
        Context {
            client,
            namespace,
            metrics,
            now: std::sync::Arc::new(|| chrono::Utc::now().timestamp()),
        }
    }
}

/// Runs one reconcile and counts it in the metrics.
async fn measured(
    ctx: std::sync::Arc<Context>,
    kind: &str,
    reconcile: impl std::future::Future<Output = Result<kube::runtime::controller::Action>>,
) -> Result<kube::runtime::controller::Action> {
    let start = std::time::Instant::now();
    let outcome = reconcile.await;
    ctx.metrics.observe(kind, start, outcome.is_ok());
    outcome
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes: {0}")]
    Kube(#[from] kube::Error),
    #[error(transparent)]
    Klaxon(#[from] ApiError),
    /// The finalizer's own failure (adding or removing it), or the reconcile's inside it.
    #[error("finalizer: {0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
    #[error("{0}")]
    Other(String),
}

impl From<kube::runtime::finalizer::Error<Error>> for Error {
    fn from(e: kube::runtime::finalizer::Error<Error>) -> Error {
        Error::Finalizer(Box::new(e))
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// A condition as Kubernetes wants it; `lastTransitionTime` moves only when the status changes,
/// and is then `now` (Unix seconds, the controller's clock).
pub fn condition(
    now: i64,
    previous: &[Condition],
    type_: &str,
    ready: bool,
    reason: &str,
    message: impl Into<String>,
    generation: Option<i64>,
) -> Condition {
    let status = if ready { "True" } else { "False" };
    let since = previous
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| Time(chrono::DateTime::from_timestamp(now, 0).unwrap_or_default()));
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: since,
        observed_generation: generation,
    }
}

/// Whether `conditions` hold `type_` with status True.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// Reads one key of a Secret; `None` when the Secret or the key is missing.
pub async fn read_secret(
    client: &Client,
    namespace: &str,
    name: &str,
    key: &str,
) -> Result<Option<String>> {
    let secret = Api::<Secret>::namespaced(client.clone(), namespace)
        .get_opt(name)
        .await?;
    Ok(secret
        .and_then(|s| s.data)
        .and_then(|d| d.get(key).cloned())
        .and_then(|v| String::from_utf8(v.0).ok()))
}

/// Writes a Secret (server-side apply), owned by `owner` when given (garbage-collected with it).
pub async fn write_secret(
    client: &Client,
    namespace: &str,
    name: &str,
    data: BTreeMap<String, String>,
    owner: Option<OwnerReference>,
) -> Result<()> {
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some(BTreeMap::from([(
                "app.kubernetes.io/managed-by".to_string(),
                MANAGER.to_string(),
            )])),
            owner_references: owner.map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: Some(
            data.into_iter()
                .map(|(k, v)| (k, ByteString(v.into_bytes())))
                .collect(),
        ),
        ..Secret::default()
    };
    Api::<Secret>::namespaced(client.clone(), namespace)
        .patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&secret),
        )
        .await?;
    Ok(())
}

/// Deletes a Secret; one already gone is fine.
pub async fn delete_secret(client: &Client, namespace: &str, name: &str) -> Result<()> {
    match Api::<Secret>::namespaced(client.clone(), namespace)
        .delete(name, &Default::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Runs the controllers until the process ends.
pub async fn run(ctx: Context) {
    use crate::crd::{
        KlaxonAlertSource, KlaxonDeadmanSwitch, KlaxonEscalationRule, KlaxonServer, KlaxonTeam,
    };
    use futures::StreamExt;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Service;
    use kube::runtime::{watcher, Controller};
    use std::sync::Arc;

    let client = ctx.client.clone();
    let ctx = Arc::new(ctx);
    let all = watcher::Config::default;
    let servers = Controller::new(Api::<KlaxonServer>::all(client.clone()), all())
        .owns(Api::<Deployment>::all(client.clone()), all())
        .owns(Api::<Service>::all(client.clone()), all())
        .shutdown_on_signal()
        .run(
            |o, c| measured(c.clone(), "KlaxonServer", server::reconcile(o, c)),
            server::error_policy,
            ctx.clone(),
        )
        .for_each(|_| async {});
    let teams = Controller::new(Api::<KlaxonTeam>::all(client.clone()), all())
        .shutdown_on_signal()
        .run(
            |o, c| measured(c.clone(), "KlaxonTeam", team::reconcile(o, c)),
            team::error_policy,
            ctx.clone(),
        )
        .for_each(|_| async {});
    let sources = Controller::new(Api::<KlaxonAlertSource>::all(client.clone()), all())
        .shutdown_on_signal()
        .run(
            |o, c| measured(c.clone(), "KlaxonAlertSource", children::reconcile(o, c)),
            children::error_policy,
            ctx.clone(),
        )
        .for_each(|_| async {});
    let rules = Controller::new(Api::<KlaxonEscalationRule>::all(client.clone()), all())
        .shutdown_on_signal()
        .run(
            |o, c| measured(c.clone(), "KlaxonEscalationRule", children::reconcile(o, c)),
            children::error_policy,
            ctx.clone(),
        )
        .for_each(|_| async {});
    let switches = Controller::new(Api::<KlaxonDeadmanSwitch>::all(client.clone()), all())
        .shutdown_on_signal()
        .run(
            |o, c| measured(c.clone(), "KlaxonDeadmanSwitch", children::reconcile(o, c)),
            children::error_policy,
            ctx,
        )
        .for_each(|_| async {});
    tokio::join!(servers, teams, sources, rules, switches);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::reason;

    /// A condition's transition time is the controller's clock, and stays while the status does.
    #[test]
    fn conditions_take_the_controllers_clock() {
        let first = condition(
            1_000_000,
            &[],
            reason::READY,
            false,
            "Waiting",
            "x",
            Some(1),
        );
        assert_eq!(first.last_transition_time.0.timestamp(), 1_000_000);
        let same = condition(
            2_000_000,
            std::slice::from_ref(&first),
            reason::READY,
            false,
            "Waiting",
            "y",
            Some(2),
        );
        assert_eq!(same.last_transition_time.0.timestamp(), 1_000_000);
        let flipped = condition(
            3_000_000,
            &[same],
            reason::READY,
            true,
            "Reconciled",
            "z",
            Some(2),
        );
        assert_eq!(flipped.last_transition_time.0.timestamp(), 3_000_000);
    }
}
