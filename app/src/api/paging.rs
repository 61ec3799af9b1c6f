//! Paging: a team's escalation ladder and the caller's test page.

use klaxon_domain::paging::EscalationPolicy;
use leptos::prelude::*;

#[server(prefix = "/rpc")]
pub async fn get_escalation_policy(team_id: i64) -> Result<EscalationPolicy, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.escalation_policy(&actor, team_id).await.map_err(fail)
}

/// Replaces the whole ladder; returns it as stored (normalised). Sent as JSON: the policy is
/// nested (levels of targets) and is only ever built by the page's editor.
#[server(prefix = "/rpc", input = leptos::server_fn::codec::Json)]
pub async fn set_escalation_policy(
    team_id: i64,
    policy: EscalationPolicy,
) -> Result<EscalationPolicy, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.set_escalation_policy(&actor, team_id, &policy)
        .await
        .map_err(fail)
}

/// Publishes a test page to the caller's own push topic.
#[server(prefix = "/rpc")]
pub async fn send_test_page() -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.send_test_page(&actor).await.map_err(fail)
}
