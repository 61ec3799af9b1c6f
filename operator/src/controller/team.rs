//! `KlaxonTeam`: the team on its server, the team-scoped credential, the re-applied name and
//! group mapping, and the invite link; deleting the resource deletes the team.

use super::server::KEY;
use super::{
    condition, delete_secret, read_secret, write_secret, Context, Error, Result, FINALIZER,
    MANAGER, RESYNC, RETRY,
};
use crate::crd::{
    reason, KlaxonServer, KlaxonTeam, KlaxonTeamStatus, LocalSecretRef, NamespacesFrom,
    SecretKeyRef,
};
use crate::klaxon::Klaxon;
use crate::server::objects;
use crate::team;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{finalizer, Event};
use kube::{Api, Resource, ResourceExt};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The Secret (operator's namespace) holding a team's credential.
pub fn credentials_secret(namespace: &str, name: &str) -> String {
    format!("klaxon-team-{namespace}-{name}")
}

/// The invite Secret (the team's namespace, owned by the team resource).
pub fn invite_secret(name: &str) -> String {
    format!("{name}-invite")
}

pub async fn reconcile(team: Arc<KlaxonTeam>, ctx: Arc<Context>) -> Result<Action> {
    let namespace = team.namespace().unwrap_or_default();
    let api = Api::<KlaxonTeam>::namespaced(ctx.client.clone(), &namespace);
    finalizer(&api, FINALIZER, team, |event| async {
        match event {
            Event::Apply(team) => apply(&team, &ctx).await,
            Event::Cleanup(team) => cleanup(&team, &ctx).await,
        }
    })
    .await
    .map_err(Error::from)
}

/// Why the team cannot be reconciled yet, as a `Ready` reason and message.
struct Waiting(&'static str, String);

async fn apply(team: &KlaxonTeam, ctx: &Context) -> Result<Action> {
    let namespace = team.namespace().unwrap_or_default();
    let mut status = team.status.clone().unwrap_or_default();
    let outcome = provision(team, ctx, &namespace, &mut status).await?;
    let (ready, why, message) = match outcome {
        Ok(()) => (true, "Reconciled", "the team is on the server".to_string()),
        Err(Waiting(why, message)) => (false, why, message),
    };
    status.conditions = vec![condition(
        (ctx.now)(),
        &status.conditions,
        reason::READY,
        ready,
        why,
        message,
        team.metadata.generation,
    )];
    status.observed_generation = team.metadata.generation;
    Api::<KlaxonTeam>::namespaced(ctx.client.clone(), &namespace)
        .patch_status(
            &team.name_any(),
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(json!({
                "apiVersion": "klaxon.dev/v1alpha1",
                "kind": "KlaxonTeam",
                "status": status,
            })),
        )
        .await?;
    Ok(Action::requeue(if ready { RESYNC } else { RETRY }))
}

async fn provision(
    team: &KlaxonTeam,
    ctx: &Context,
    namespace: &str,
    status: &mut KlaxonTeamStatus,
) -> Result<std::result::Result<(), Waiting>> {
    let server_ns = team
        .spec
        .server_ref
        .namespace
        .clone()
        .unwrap_or_else(|| namespace.to_string());
    let server = Api::<KlaxonServer>::namespaced(ctx.client.clone(), &server_ns)
        .get_opt(&team.spec.server_ref.name)
        .await?;
    let Some(server) = server else {
        return Ok(Err(Waiting(
            reason::SERVER_REF_NOT_FOUND,
            format!("no KlaxonServer {server_ns}/{}", team.spec.server_ref.name),
        )));
    };
    if server_ns != namespace && !admits(&server, ctx, namespace).await? {
        return Ok(Err(Waiting(
            "NamespaceNotAllowed",
            format!("KlaxonServer {server_ns}/{} does not admit teams from namespace {namespace} (spec.allowedTeams)", server.name_any()),
        )));
    }
    let server_status = server.status.clone().unwrap_or_default();
    let instance_key = match &server_status.credentials_secret_ref {
        Some(r) if super::is_true(&server_status.conditions, reason::BOOTSTRAPPED) => {
            read_secret(&ctx.client, &ctx.namespace, &r.name, &r.key).await?
        }
        _ => None,
    };
    let Some(instance_key) = instance_key else {
        return Ok(Err(Waiting(
            reason::WAITING_FOR_SERVER,
            "the server has no credential yet".into(),
        )));
    };
    let endpoint = objects::endpoint(&server);
    let instance = Klaxon::new(&endpoint, Some(instance_key));
    status.server_endpoint = Some(endpoint);

    let name = team.spec.name.clone().unwrap_or_else(|| team.name_any());
    let secret = credentials_secret(namespace, &team.name_any());
    let mut team_key = read_secret(&ctx.client, &ctx.namespace, &secret, KEY).await?;
    if status.team_id.is_none() || team_key.is_none() {
        let made = team::provision(&instance, &name, team.spec.display_name.as_deref()).await?;
        write_secret(
            &ctx.client,
            &ctx.namespace,
            &secret,
            BTreeMap::from([(KEY.to_string(), made.key.clone())]),
            None,
        )
        .await?;
        status.team_id = Some(made.team.id);
        status.credentials_secret_ref = Some(SecretKeyRef {
            name: secret,
            key: KEY.into(),
        });
        team_key = Some(made.key);
    }
    let team_id = status.team_id.expect("set above");
    let as_team = instance.with_key(team_key.as_deref().expect("set above"));
    let display = team
        .spec
        .display_name
        .clone()
        .unwrap_or_else(|| name.clone());
    let day = (
        team.spec.time_zone.as_deref(),
        team.spec.handoff_time.as_deref(),
    );
    team::apply(&as_team, team_id, &display, team.spec.oidc.as_ref(), day).await?;
    reconcile_invite(team, ctx, namespace, &as_team, team_id, status).await?;
    Ok(Ok(()))
}

/// Keeps one invite while `spec.invite.enabled`: minted when missing (its Secret lost too) or
/// within a day of expiry; revoked with its Secret when disabled.
async fn reconcile_invite(
    team: &KlaxonTeam,
    ctx: &Context,
    namespace: &str,
    as_team: &Klaxon,
    team_id: i64,
    status: &mut KlaxonTeamStatus,
) -> Result<()> {
    let secret = invite_secret(&team.name_any());
    let wanted = team.spec.invite.as_ref().filter(|i| i.enabled);
    let Some(invite) = wanted else {
        if let Some(id) = live_invite(team, ctx, namespace, &secret).await? {
            team::revoke_invite(as_team, team_id, id).await?;
        }
        delete_secret(&ctx.client, namespace, &secret).await?;
        status.invite_id = None;
        status.invite_secret_ref = None;
        return Ok(());
    };
    let stored = read_secret(&ctx.client, namespace, &secret, "expires_at").await?;
    let expires = stored
        .as_deref()
        .and_then(klaxon_domain::Timestamp::parse)
        .map(|t| t.0);
    if team::invite_due(expires, (ctx.now)()) {
        let previous = live_invite(team, ctx, namespace, &secret).await?;
        let made =
            team::refresh_invite(as_team, team_id, previous, invite.role, invite.max_uses).await?;
        let data = BTreeMap::from([
            ("url".to_string(), made.url.clone()),
            (
                "expires_at".to_string(),
                made.invite.expires_at.to_rfc3339(),
            ),
            ("invite_id".to_string(), made.invite.id.to_string()),
        ]);
        write_secret(
            &ctx.client,
            namespace,
            &secret,
            data,
            team.controller_owner_ref(&()),
        )
        .await?;
        status.invite_id = Some(made.invite.id);
        status.invite_secret_ref = Some(LocalSecretRef { name: secret });
    }
    Ok(())
}

/// The invite the operator last minted for `team`: named in its Secret, or, with the Secret
/// lost, in the status as the API server has it now (the cached copy may be a reconcile
/// behind, and revoking a stale id would leave the newer link usable).
async fn live_invite(
    team: &KlaxonTeam,
    ctx: &Context,
    namespace: &str,
    secret: &str,
) -> Result<Option<i64>> {
    if let Some(id) = read_secret(&ctx.client, namespace, secret, "invite_id").await? {
        return Ok(id.parse().ok());
    }
    let fresh = Api::<KlaxonTeam>::namespaced(ctx.client.clone(), namespace)
        .get_status(&team.name_any())
        .await?;
    Ok(fresh.status.and_then(|s| s.invite_id))
}

/// A team that got its credential is deleted with it; one that never did stays on the server.
async fn cleanup(team: &KlaxonTeam, ctx: &Context) -> Result<Action> {
    let namespace = team.namespace().unwrap_or_default();
    let status = team.status.clone().unwrap_or_default();
    let secret = credentials_secret(&namespace, &team.name_any());
    if let (Some(team_id), Some(endpoint)) = (status.team_id, &status.server_endpoint) {
        if let Some(key) = read_secret(&ctx.client, &ctx.namespace, &secret, KEY).await? {
            match Klaxon::new(endpoint, Some(key)).delete_team(team_id).await {
                Err(e) if e.status().is_some_and(|s| s == 404 || s == 401) => {}
                other => other?,
            }
        }
    }
    delete_secret(&ctx.client, &ctx.namespace, &secret).await?;
    delete_secret(&ctx.client, &namespace, &invite_secret(&team.name_any())).await?;
    Ok(Action::await_change())
}

/// Whether `server`'s `allowedTeams` admits teams from `namespace`.
async fn admits(server: &KlaxonServer, ctx: &Context, namespace: &str) -> Result<bool> {
    let allowed = server
        .spec
        .allowed_teams
        .clone()
        .unwrap_or_default()
        .namespaces;
    Ok(match allowed.from {
        NamespacesFrom::Same => false,
        NamespacesFrom::All => true,
        NamespacesFrom::Selector => {
            let ns = Api::<Namespace>::all(ctx.client.clone())
                .get_opt(namespace)
                .await?;
            let labels = ns.and_then(|n| n.metadata.labels).unwrap_or_default();
            allowed
                .selector
                .as_ref()
                .is_some_and(|s| selects(s, &labels))
        }
    })
}

/// A label selector's meaning (`matchLabels` and `matchExpressions`, all must hold).
pub fn selects(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let by_label = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let by_expression = selector.match_expressions.iter().flatten().all(|e| {
        let values = e.values.clone().unwrap_or_default();
        let value = labels.get(&e.key);
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    by_label && by_expression
}

pub fn error_policy(_: Arc<KlaxonTeam>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(%error, "KlaxonTeam reconcile failed");
    Action::requeue(RETRY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    #[test]
    fn selectors_match_labels_and_expressions() {
        let labels = BTreeMap::from([("team".to_string(), "payments".to_string())]);
        let s = |json: serde_json::Value| serde_json::from_value::<LabelSelector>(json).unwrap();
        assert!(selects(
            &s(json!({"matchLabels": {"team": "payments"}})),
            &labels
        ));
        assert!(!selects(
            &s(json!({"matchLabels": {"team": "search"}})),
            &labels
        ));
        assert!(selects(&s(json!({})), &labels));
        let expr = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "env".into(),
                operator: "DoesNotExist".into(),
                values: None,
            }]),
            ..LabelSelector::default()
        };
        assert!(selects(&expr, &labels));
    }
}
