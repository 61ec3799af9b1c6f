//! A team's dead man's switches.

use klaxon_domain::deadman::DeadmanSwitch;
#[cfg(feature = "ssr")]
use klaxon_domain::ids::{SwitchId, TeamId};
use leptos::prelude::*;

#[server(prefix = "/rpc")]
pub async fn list_switches(team_id: i64) -> Result<Vec<DeadmanSwitch>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.list_switches(&actor, team_id).await.map_err(fail)
}

/// The form's text fields as the API's body; the checks themselves are core's. A switch fed
/// by pings has no matcher field, and says so in a hidden `pings` field.
#[cfg(feature = "ssr")]
fn spec(
    name: String,
    matcher: Option<String>,
    pings: Option<String>,
    timeout: String,
    severity: String,
) -> Result<klaxon_domain::deadman::SwitchSpec, ServerFnError> {
    use klaxon_domain::alerting::Severity;
    let invalid = |m: String| crate::server::fail(klaxon_core::Error::Invalid(m));
    Ok(klaxon_domain::deadman::SwitchSpec {
        name: crate::server::field("name", klaxon_domain::text::Label::parse(&name))?,
        matcher: matcher.unwrap_or_default(),
        pings: pings.as_deref() == Some("true"),
        timeout: timeout
            .trim()
            .parse()
            .map_err(|e| invalid(format!("timeout: {e}")))?,
        severity: Severity::parse(&severity)
            .ok_or_else(|| invalid("severity must be info, warning or critical".into()))?,
    })
}

#[server(prefix = "/rpc")]
pub async fn create_switch(
    team_id: i64,
    name: String,
    matcher: Option<String>,
    pings: Option<String>,
    timeout: String,
    severity: String,
) -> Result<DeadmanSwitch, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let spec = spec(name, matcher, pings, timeout, severity)?;
    core.create_switch(&actor, team_id, &spec)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn update_switch(
    team_id: i64,
    id: i64,
    name: String,
    matcher: Option<String>,
    pings: Option<String>,
    timeout: String,
    severity: String,
) -> Result<DeadmanSwitch, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let spec = spec(name, matcher, pings, timeout, severity)?;
    core.update_switch(&actor, TeamId(team_id), SwitchId(id), &spec)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn delete_switch(team_id: i64, id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.delete_switch(&actor, TeamId(team_id), SwitchId(id))
        .await
        .map_err(fail)
}
