//! A team's integrations: the keys Alertmanager posts with.

#[cfg(feature = "ssr")]
use klaxon_domain::ids::{IntegrationId, TeamId};
use klaxon_domain::incident::{Integration, IntegrationKind, NewIntegration};
use klaxon_domain::mapping::{TemplatePreview, TemplateTrial, WebhookTemplates};
use klaxon_domain::routing::{RoutingRule, RulesTrial, SimulatedAlert};
use leptos::prelude::*;

#[server(prefix = "/rpc")]
pub async fn list_integrations(team_id: i64) -> Result<Vec<Integration>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.list_integrations(&actor, team_id).await.map_err(fail)
}

/// Returns the webhook URL with its key: the only time either is ever shown.
#[server(prefix = "/rpc")]
pub async fn create_integration(
    team_id: i64,
    name: String,
    kind: IntegrationKind,
    templates: Option<WebhookTemplates>,
) -> Result<NewIntegration, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    let name = field("name", klaxon_domain::text::Label::parse(&name))?;
    let (core, actor) = signed_in().await?;
    core.create_integration(&actor, team_id, &name, kind, templates)
        .await
        .map_err(fail)
}

/// What a sample body would become with these templates: the "try it" button. Sent as JSON:
/// only the templates editor builds it.
#[server(prefix = "/rpc", input = leptos::server_fn::codec::Json)]
pub async fn try_templates(trial: TemplateTrial) -> Result<TemplatePreview, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.try_templates(&actor, &trial).map_err(fail)
}

/// Replaces a generic webhook's templates. Sent as JSON, as the editor builds it.
#[server(prefix = "/rpc", input = leptos::server_fn::codec::Json)]
pub async fn set_templates(
    team_id: i64,
    id: i64,
    templates: WebhookTemplates,
) -> Result<Integration, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let change = klaxon_domain::incident::IntegrationChange {
        templates: Some(templates),
        ..Default::default()
    };
    core.update_integration(&actor, TeamId(team_id), IntegrationId(id), change)
        .await
        .map_err(fail)
}

/// Replaces an integration's routing rules, in order. Sent as JSON, as the rules editor builds
/// them.
#[server(prefix = "/rpc", input = leptos::server_fn::codec::Json)]
pub async fn set_rules(
    team_id: i64,
    id: i64,
    rules: Vec<RoutingRule>,
) -> Result<Integration, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.set_integration_rules(&actor, TeamId(team_id), IntegrationId(id), rules)
        .await
        .map_err(fail)
}

/// What a sample request would do under the rules being edited: the "simulate" button.
#[server(prefix = "/rpc", input = leptos::server_fn::codec::Json)]
pub async fn simulate_rules(
    team_id: i64,
    id: i64,
    trial: RulesTrial,
) -> Result<Vec<SimulatedAlert>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.simulate_rules(&actor, TeamId(team_id), IntegrationId(id), trial)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn rename_integration(
    team_id: i64,
    id: i64,
    name: String,
) -> Result<Integration, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    let name = field("name", klaxon_domain::text::Label::parse(&name))?;
    let (core, actor) = signed_in().await?;
    let change = klaxon_domain::incident::IntegrationChange {
        name: Some(name),
        ..Default::default()
    };
    core.update_integration(&actor, TeamId(team_id), IntegrationId(id), change)
        .await
        .map_err(fail)
}

/// Sets the Alertmanager an integration's alerts come from, for silences; an empty `url`
/// clears it. Credentials: a `token` means bearer, a `username` basic auth with `password`;
/// with neither, the stored ones are kept unless `forget` is ticked.
#[server(prefix = "/rpc")]
pub async fn set_alertmanager(
    team_id: i64,
    id: i64,
    url: String,
    username: Option<String>,
    password: Option<String>,
    token: Option<String>,
    forget: Option<String>,
) -> Result<Integration, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    use klaxon_domain::silence::AlertmanagerAuth;
    use klaxon_domain::text::Secret;
    let given = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    let url = url.trim();
    let auth = match (given(token), given(username)) {
        (Some(token), _) => Some(Some(AlertmanagerAuth::Bearer {
            token: field("token", Secret::parse(&token))?,
        })),
        (None, Some(username)) => Some(Some(AlertmanagerAuth::Basic {
            username,
            password: field("password", Secret::parse(&password.unwrap_or_default()))?,
        })),
        (None, None) => forget.map(|_| None),
    };
    let (core, actor) = signed_in().await?;
    let change = klaxon_domain::incident::IntegrationChange {
        name: None,
        alertmanager_url: Some((!url.is_empty()).then(|| url.to_string())),
        alertmanager_auth: auth,
        ..Default::default()
    };
    core.update_integration(&actor, TeamId(team_id), IntegrationId(id), change)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn revoke_integration(team_id: i64, id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.revoke_integration(&actor, TeamId(team_id), IntegrationId(id))
        .await
        .map_err(fail)
}

/// Alerts per hour over the last day of each of the team's integrations, for their sparklines.
#[server(prefix = "/rpc")]
pub async fn integration_volumes(
    team_id: i64,
) -> Result<Vec<(i64, Vec<klaxon_domain::incident::HourVolume>)>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.integration_volumes(&actor, team_id)
        .await
        .map_err(fail)
}
