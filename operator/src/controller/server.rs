//! `KlaxonServer`: keeps its Deployment, Service and disruption budget as the spec says, obtains
//! the instance-scoped credential (bootstrapping a fresh server, unless one is given), and says
//! whether the server answers with it.

use super::{
    condition, is_true, read_secret, write_secret, Context, Error, Result, MANAGER, RESYNC, RETRY,
};
use crate::crd::{reason, KlaxonServer, KlaxonServerStatus, SecretKeyRef};
use crate::klaxon::Klaxon;
use crate::server::objects;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The key under which credential Secrets hold the API key.
pub const KEY: &str = "api-key";
/// The bootstrap administrator's key, kept beside it so people can administer the server.
pub const ADMIN_KEY: &str = "admin-api-key";
/// The instance-scoped service account the operator acts as.
pub const OPERATOR_ACCOUNT: &str = "klaxon-operator";

/// The Secret (in the operator's namespace) holding a server's credentials.
pub fn credentials_secret(namespace: &str, name: &str) -> String {
    format!("klaxon-server-{namespace}-{name}")
}

pub async fn reconcile(server: Arc<KlaxonServer>, ctx: Arc<Context>) -> Result<Action> {
    let namespace = server.namespace().unwrap_or_default();
    let name = server.name_any();
    apply_objects(&server, &ctx, &namespace).await?;

    let endpoint = objects::endpoint(&server);
    let anonymous = Klaxon::new(&endpoint, None);
    let (credential, bootstrap_problem) = credential(&server, &ctx, &anonymous).await?;
    let answers = match &credential {
        Some((_, key)) => anonymous
            .with_key(key)
            .version()
            .await
            .err()
            .map(|e| e.to_string()),
        None => Some("no credential yet".to_string()),
    };
    let previous = server.status.clone().unwrap_or_default();
    let generation = server.metadata.generation;
    let bootstrapped = credential.is_some();
    let conditions = vec![
        condition(
            (ctx.now)(),
            &previous.conditions,
            reason::BOOTSTRAPPED,
            bootstrapped,
            if bootstrapped {
                "CredentialStored"
            } else {
                "NotBootstrapped"
            },
            bootstrap_problem.unwrap_or_else(|| "the instance-scoped credential is stored".into()),
            generation,
        ),
        condition(
            (ctx.now)(),
            &previous.conditions,
            reason::READY,
            bootstrapped && answers.is_none(),
            if answers.is_none() {
                "Answering"
            } else {
                "Unreachable"
            },
            answers.unwrap_or_else(|| format!("{endpoint} answers")),
            generation,
        ),
    ];
    let status = KlaxonServerStatus {
        conditions,
        credentials_secret_ref: credential.map(|(r, _)| r),
        observed_generation: generation,
    };
    let ready = is_true(&status.conditions, reason::READY);
    Api::<KlaxonServer>::namespaced(ctx.client.clone(), &namespace)
        .patch_status(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(json!({
                "apiVersion": "klaxon.dev/v1alpha1",
                "kind": "KlaxonServer",
                "status": status,
            })),
        )
        .await?;
    Ok(Action::requeue(if ready { RESYNC } else { RETRY }))
}

/// Deployment and Service always; the budget only while the spec asks for one.
async fn apply_objects(server: &KlaxonServer, ctx: &Context, namespace: &str) -> Result<()> {
    let name = server.name_any();
    let params = PatchParams::apply(MANAGER).force();
    Api::<Deployment>::namespaced(ctx.client.clone(), namespace)
        .patch(&name, &params, &Patch::Apply(objects::deployment(server)))
        .await?;
    Api::<Service>::namespaced(ctx.client.clone(), namespace)
        .patch(&name, &params, &Patch::Apply(objects::service(server)))
        .await?;
    let budgets = Api::<PodDisruptionBudget>::namespaced(ctx.client.clone(), namespace);
    match objects::disruption_budget(server) {
        Some(pdb) => {
            budgets.patch(&name, &params, &Patch::Apply(pdb)).await?;
        }
        None => match budgets.delete(&name, &Default::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e.into()),
        },
    }
    Ok(())
}

/// The credential to use and, when there is none, why. A given `credentialsSecretRef` wins;
/// otherwise the operator's own Secret, made by bootstrapping the server the first time it
/// answers: the bootstrap administrator's key is stored first, then an instance-scoped
/// service account is made with it and its key stored, so an interrupted bootstrap resumes.
async fn credential(
    server: &KlaxonServer,
    ctx: &Context,
    anonymous: &Klaxon,
) -> Result<(Option<(SecretKeyRef, String)>, Option<String>)> {
    if let Some(given) = &server.spec.credentials_secret_ref {
        let key = read_secret(&ctx.client, &ctx.namespace, &given.name, &given.key).await?;
        return Ok(match key {
            Some(k) => (Some((given.clone(), k)), None),
            None => (
                None,
                Some(format!(
                    "Secret {}/{} has no key {}",
                    ctx.namespace, given.name, given.key
                )),
            ),
        });
    }
    let secret = credentials_secret(&server.namespace().unwrap_or_default(), &server.name_any());
    let ours = SecretKeyRef {
        name: secret.clone(),
        key: KEY.into(),
    };
    if let Some(k) = read_secret(&ctx.client, &ctx.namespace, &secret, KEY).await? {
        return Ok((Some((ours, k)), None));
    }
    let admin_key = match read_secret(&ctx.client, &ctx.namespace, &secret, ADMIN_KEY).await? {
        Some(k) => k,
        None => match anonymous.bootstrap("klaxon-admin").await {
            Ok(b) => {
                let data = BTreeMap::from([(ADMIN_KEY.to_string(), b.api_key.clone())]);
                write_secret(&ctx.client, &ctx.namespace, &secret, data, None).await?;
                b.api_key
            }
            Err(e) if e.status() == Some(409) => {
                return Ok((None, Some("the server was bootstrapped by someone else: give its instance-scoped key in credentialsSecretRef".into())));
            }
            Err(e) => return Ok((None, Some(e.to_string()))),
        },
    };
    let admin = anonymous.with_key(&admin_key);
    // Adopted by name when an interrupted bootstrap already made it.
    let made = async {
        let account = match admin.create_instance_account(OPERATOR_ACCOUNT).await {
            Err(e) if e.status() == Some(409) => {
                admin.user_by_name(OPERATOR_ACCOUNT).await?.ok_or(e)?
            }
            other => other?,
        };
        admin.mint_key(account.id, "klaxon-operator").await
    }
    .await;
    match made {
        Ok(key) => {
            let data = BTreeMap::from([
                (ADMIN_KEY.to_string(), admin_key),
                (KEY.to_string(), key.key.clone()),
            ]);
            write_secret(&ctx.client, &ctx.namespace, &secret, data, None).await?;
            Ok((Some((ours, key.key)), None))
        }
        Err(e) => Ok((None, Some(e.to_string()))),
    }
}

pub fn error_policy(_: Arc<KlaxonServer>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(%error, "KlaxonServer reconcile failed");
    Action::requeue(RETRY)
}
