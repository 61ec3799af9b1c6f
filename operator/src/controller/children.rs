//! The team's children. Each resolves its `teamRef` to the team's status on every reconcile
//! (never to the server resource), acts with the team's key, and cleans up behind the
//! `klaxon.dev/cleanup` finalizer.

use super::{
    condition, read_secret, write_secret, Context, Error, Result, FINALIZER, MANAGER, RESYNC, RETRY,
};
use crate::crd::{
    reason, Conditions, KlaxonAlertSource, KlaxonDeadmanSwitch, KlaxonEscalationRule, KlaxonTeam,
    LocalSecretRef, ObjectRef, TargetKind,
};
use crate::klaxon::Klaxon;
use klaxon_domain::deadman::SwitchSpec;
use klaxon_domain::paging::{EscalationPolicy, Level, Target};
use klaxon_domain::text::Topic;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event as Note, EventType, Recorder};
use kube::runtime::finalizer::{finalizer, Event};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

/// A child's team, ready to act on.
pub struct Team {
    pub id: i64,
    pub client: Klaxon,
}

/// Not ready yet: the `Ready` reason and message.
pub struct Waiting(pub &'static str, pub String);

/// The team a child names, from the team resource's status and its credential.
pub async fn resolve_team(
    ctx: &Context,
    namespace: &str,
    team_ref: &ObjectRef,
) -> Result<std::result::Result<Team, Waiting>> {
    let ns = team_ref
        .namespace
        .clone()
        .unwrap_or_else(|| namespace.to_string());
    let Some(team) = Api::<KlaxonTeam>::namespaced(ctx.client.clone(), &ns)
        .get_opt(&team_ref.name)
        .await?
    else {
        return Ok(Err(Waiting(
            "TeamRefNotFound",
            format!("no KlaxonTeam {ns}/{}", team_ref.name),
        )));
    };
    let status = team.status.unwrap_or_default();
    let key = match &status.credentials_secret_ref {
        Some(r) => read_secret(&ctx.client, &ctx.namespace, &r.name, &r.key).await?,
        None => None,
    };
    match (status.team_id, status.server_endpoint, key) {
        (Some(id), Some(endpoint), Some(key)) => Ok(Ok(Team {
            id,
            client: Klaxon::new(&endpoint, Some(key)),
        })),
        _ => Ok(Err(Waiting(
            "WaitingForTeam",
            format!("KlaxonTeam {ns}/{} is not ready", team_ref.name),
        ))),
    }
}

/// Writes `status` (server-side apply) with a fresh `Ready` condition.
async fn write_status<K>(
    obj: &K,
    ctx: &Context,
    mut status: serde_json::Value,
    outcome: &std::result::Result<(), Waiting>,
    previous: &Conditions,
) -> Result<Action>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug,
{
    let (ready, why, message) = match outcome {
        Ok(()) => (true, "Reconciled", "applied on the server".to_string()),
        Err(Waiting(why, message)) => (false, *why, message.clone()),
    };
    status["conditions"] = json!([condition(
        (ctx.now)(),
        previous,
        reason::READY,
        ready,
        why,
        message,
        obj.meta().generation
    )]);
    Api::<K>::namespaced(ctx.client.clone(), &obj.namespace().unwrap_or_default())
        .patch_status(
            &obj.name_any(),
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(json!({
                "apiVersion": K::api_version(&()),
                "kind": K::kind(&()),
                "status": status,
            })),
        )
        .await?;
    Ok(Action::requeue(if ready { RESYNC } else { RETRY }))
}

/// What differs between the team's children; `reconcile` does the rest (the finalizer, and on
/// deletion resolving the team and undoing the child there).
pub trait Child:
    Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + Serialize
    + Debug
    + Send
    + Sync
    + 'static
{
    fn team_ref(&self) -> &ObjectRef;
    /// Makes the server match the spec and writes the status.
    fn apply(&self, ctx: &Context) -> impl std::future::Future<Output = Result<Action>> + Send;
    /// Undoes the child on the server; one already gone there is fine.
    fn remove(&self, team: &Team) -> impl std::future::Future<Output = Result<()>> + Send;
}

pub async fn reconcile<K: Child>(child: Arc<K>, ctx: Arc<Context>) -> Result<Action> {
    let api = Api::<K>::namespaced(ctx.client.clone(), &child.namespace().unwrap_or_default());
    finalizer(&api, FINALIZER, child, |event| async {
        match event {
            Event::Apply(c) => c.apply(&ctx).await,
            Event::Cleanup(c) => {
                let ns = c.namespace().unwrap_or_default();
                if let Ok(team) = resolve_team(&ctx, &ns, c.team_ref()).await? {
                    c.remove(&team).await?;
                }
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(Error::from)
}

fn gone_is_fine(r: crate::klaxon::Result<()>) -> Result<()> {
    match r {
        Err(e) if e.status() == Some(404) => Ok(()),
        other => Ok(other?),
    }
}

// ---- KlaxonAlertSource ------------------------------------------------------------------

/// The webhook Secret of a source (its namespace, owned by it).
pub fn webhook_secret(name: &str) -> String {
    format!("{name}-webhook")
}

impl Child for KlaxonAlertSource {
    fn team_ref(&self) -> &ObjectRef {
        &self.spec.team_ref
    }
    async fn apply(&self, ctx: &Context) -> Result<Action> {
        apply_source(self, ctx).await
    }
    async fn remove(&self, team: &Team) -> Result<()> {
        match self.status.as_ref().and_then(|st| st.integration_id) {
            Some(id) => gone_is_fine(team.client.delete_integration(team.id, id).await),
            None => Ok(()),
        }
    }
}

async fn apply_source(source: &KlaxonAlertSource, ctx: &Context) -> Result<Action> {
    let ns = source.namespace().unwrap_or_default();
    let mut status = source.status.clone().unwrap_or_default();
    let previous = status.conditions.clone();
    // Told only once the status records the new integration: were the event published first and
    // refused (an operator without RBAC for events), every retry would make another integration.
    let mut kind_changed = None;
    let outcome = async {
        let team = match resolve_team(ctx, &ns, &source.spec.team_ref).await? {
            Ok(t) => t,
            Err(w) => return Ok(Err(w)),
        };
        let secret = webhook_secret(&source.name_any());
        let name = source.spec.name.clone().unwrap_or_else(|| source.name_any());
        let stored = read_secret(&ctx.client, &ns, &secret, "integration_id").await?;
        // A kind Klaxon refuses leaves everything as it was.
        let create = || async {
            match team.client.create_integration(team.id, &name, &source.spec.kind).await {
                Err(e) if e.status() == Some(400) => Ok(Err(Waiting("InvalidKind", e.to_string()))),
                other => Ok::<_, Error>(Ok(other?)),
            }
        };
        let keep = |made: &klaxon_domain::incident::NewIntegration| {
            BTreeMap::from([
                ("url".to_string(), made.webhook_url.clone()),
                ("integration_id".to_string(), made.integration.id.to_string()),
            ])
        };
        match (status.integration_id, stored) {
            (Some(_), None) => {
                return Ok(Err(Waiting(reason::WEBHOOK_SECRET_LOST, format!("Secret {secret} is gone; a new integration would change a live URL, so delete and recreate this resource to get one"))));
            }
            // A new kind is a new integration: the old URL stops working, so say so loudly.
            (Some(old), Some(_)) if status.kind.as_deref().is_some_and(|k| k != source.spec.kind) => {
                let made = match create().await? {
                    Ok(m) => m,
                    Err(w) => return Ok(Err(w)),
                };
                write_secret(&ctx.client, &ns, &secret, keep(&made), source.controller_owner_ref(&())).await?;
                gone_is_fine(team.client.delete_integration(team.id, old).await)?;
                status.integration_id = Some(made.integration.id);
                kind_changed = Some(Note {
                    type_: EventType::Warning,
                    reason: "KindChanged".into(),
                    note: Some(format!(
                        "kind changed from {} to {}: the old webhook URL no longer works; the new one is in Secret {secret}",
                        status.kind.as_deref().unwrap_or_default(),
                        source.spec.kind
                    )),
                    action: "Recreate".into(),
                    secondary: None,
                });
            }
            // The Secret was written but the status was not: reuse, never make a second one.
            (None, Some(id)) => status.integration_id = id.parse().ok(),
            (None, None) => {
                let made = match create().await? {
                    Ok(m) => m,
                    Err(w) => return Ok(Err(w)),
                };
                write_secret(&ctx.client, &ns, &secret, keep(&made), source.controller_owner_ref(&())).await?;
                status.integration_id = Some(made.integration.id);
            }
            (Some(_), Some(_)) => {}
        }
        status.kind = Some(source.spec.kind.clone());
        status.webhook_url_secret_ref = Some(LocalSecretRef { name: secret });
        if let Some(id) = status.integration_id {
            team.client.rename_integration(team.id, id, &name).await?;
        }
        Ok::<_, Error>(Ok(()))
    }
    .await?;
    let action = write_status(
        source,
        ctx,
        serde_json::to_value(&status).expect("status serializes"),
        &outcome,
        &previous,
    )
    .await?;
    if let Some(note) = kind_changed {
        let published = Recorder::new(ctx.client.clone(), MANAGER.into())
            .publish(&note, &source.object_ref(&()))
            .await;
        if let Err(e) = published {
            tracing::warn!(error = %e, source = %source.name_any(), "the KindChanged event was not published");
        }
    }
    Ok(action)
}

pub fn error_policy<K>(_: Arc<K>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(%error, kind = std::any::type_name::<K>(), "reconcile failed");
    Action::requeue(RETRY)
}

// ---- KlaxonEscalationRule ---------------------------------------------------------------

impl Child for KlaxonEscalationRule {
    fn team_ref(&self) -> &ObjectRef {
        &self.spec.team_ref
    }
    async fn apply(&self, ctx: &Context) -> Result<Action> {
        apply_rule(self, ctx).await
    }
    /// No delete exists: an empty ladder is written.
    async fn remove(&self, team: &Team) -> Result<()> {
        team.client
            .put_escalation(team.id, &EscalationPolicy::default())
            .await?;
        Ok(())
    }
}

async fn apply_rule(rule: &KlaxonEscalationRule, ctx: &Context) -> Result<Action> {
    let ns = rule.namespace().unwrap_or_default();
    let status = rule.status.clone().unwrap_or_default();
    let outcome = async {
        let team = match resolve_team(ctx, &ns, &rule.spec.team_ref).await? {
            Ok(t) => t,
            Err(w) => return Ok(Err(w)),
        };
        let mut levels = Vec::new();
        for level in &rule.spec.levels {
            let mut targets = Vec::new();
            for t in &level.targets {
                targets.push(match (t.kind, &t.username) {
                    (TargetKind::Oncall, _) => Target::Oncall,
                    (TargetKind::User, Some(name)) => match team.client.user_by_name(name).await? {
                        Some(u) => Target::User { user_id: u.id },
                        None => {
                            return Ok(Err(Waiting(
                                reason::UNKNOWN_USER,
                                format!("no user named {name}"),
                            )))
                        }
                    },
                    (TargetKind::User, None) => {
                        return Ok(Err(Waiting(
                            reason::UNKNOWN_USER,
                            "a user target needs a username".into(),
                        )))
                    }
                });
            }
            let timeout = level
                .timeout
                .parse()
                .map_err(|e| Error::Other(format!("timeout {}: {e}", level.timeout)))?;
            levels.push(Level { timeout, targets });
        }
        let policy = EscalationPolicy {
            levels,
            repeat: rule.spec.repeat,
            fallback_topic: rule
                .spec
                .fallback_topic
                .as_deref()
                .map(Topic::parse)
                .transpose()
                .map_err(|e| Error::Other(format!("fallbackTopic {e}")))?,
            low_urgency: Vec::new(),
        };
        team.client.put_escalation(team.id, &policy).await?;
        Ok::<_, Error>(Ok(()))
    }
    .await?;
    write_status(rule, ctx, json!({}), &outcome, &status.conditions).await
}

// ---- KlaxonDeadmanSwitch ----------------------------------------------------------------

impl Child for KlaxonDeadmanSwitch {
    fn team_ref(&self) -> &ObjectRef {
        &self.spec.team_ref
    }
    async fn apply(&self, ctx: &Context) -> Result<Action> {
        apply_switch(self, ctx).await
    }
    async fn remove(&self, team: &Team) -> Result<()> {
        match self.status.as_ref().and_then(|st| st.switch_id) {
            Some(id) => gone_is_fine(team.client.delete_switch(team.id, id).await),
            None => Ok(()),
        }
    }
}

async fn apply_switch(switch: &KlaxonDeadmanSwitch, ctx: &Context) -> Result<Action> {
    let ns = switch.namespace().unwrap_or_default();
    let mut status = switch.status.clone().unwrap_or_default();
    let previous = status.conditions.clone();
    let outcome = async {
        let team = match resolve_team(ctx, &ns, &switch.spec.team_ref).await? {
            Ok(t) => t,
            Err(w) => return Ok(Err(w)),
        };
        let spec: SwitchSpec = serde_json::from_value(json!({
            "name": switch.spec.name.clone().unwrap_or_else(|| switch.name_any()),
            "matcher": switch.spec.matcher,
            "timeout": switch.spec.timeout,
            "severity": switch.spec.severity.clone().unwrap_or_else(|| "critical".into()),
        }))
        .map_err(|e| Error::Other(format!("invalid switch: {e}")))?;
        // First time: adopt a switch of the same name, else create; then update in place.
        let id = match status.switch_id {
            Some(id) => id,
            None => match team
                .client
                .switches(team.id)
                .await?
                .into_iter()
                .find(|s| s.name == spec.name.as_str())
            {
                Some(found) => found.id,
                None => team.client.create_switch(team.id, &spec).await?.id,
            },
        };
        let updated = match team.client.update_switch(team.id, id, &spec).await {
            Err(e) if e.status() == Some(404) => team.client.create_switch(team.id, &spec).await?,
            other => other?,
        };
        status.switch_id = Some(updated.id);
        Ok::<_, Error>(Ok(()))
    }
    .await?;
    write_status(
        switch,
        ctx,
        serde_json::to_value(&status).expect("status serializes"),
        &outcome,
        &previous,
    )
    .await
}
