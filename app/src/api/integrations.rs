//! A team's integrations: the keys Alertmanager posts with.

use klaxon_domain::incident::{Integration, IntegrationKind, NewIntegration};
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
) -> Result<NewIntegration, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.create_integration(&actor, team_id, &name, kind)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn rename_integration(
    team_id: i64,
    id: i64,
    name: String,
) -> Result<Integration, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.rename_integration(&actor, team_id, id, &name)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn revoke_integration(team_id: i64, id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.revoke_integration(&actor, team_id, id)
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
