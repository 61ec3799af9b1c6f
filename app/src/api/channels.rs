//! A team's channels: where its incidents are announced.
// Each box of the add form is an argument of its own, so the form posts without the page's
// script; the macro's generated client function repeats them.
#![allow(clippy::too_many_arguments)]

use klaxon_domain::channel::{Channel, NewChannelAnswer};
#[cfg(feature = "ssr")]
use klaxon_domain::ids::TeamId;
use leptos::prelude::*;

#[server(prefix = "/rpc")]
pub async fn list_channels(team_id: i64) -> Result<Vec<Channel>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.list_channels(&actor, TeamId(team_id))
        .await
        .map_err(fail)
}

/// The events and severities a form ticked, as `NewChannel` takes them: each box is a field
/// of its own (`hear_opened`, `only_critical`), so the form posts without the page's script.
#[cfg(feature = "ssr")]
fn picks<T: Copy>(all: &[T], ticked: &[Option<String>]) -> Vec<T> {
    all.iter()
        .zip(ticked)
        .filter(|(_, t)| t.is_some())
        .map(|(v, _)| *v)
        .collect()
}

/// Adds a channel; a signed webhook's secret is in this answer only.
#[server(prefix = "/rpc")]
pub async fn create_channel(
    team_id: i64,
    name: String,
    kind: String,
    target: String,
    hear_opened: Option<String>,
    hear_acknowledged: Option<String>,
    hear_escalated: Option<String>,
    hear_resolved: Option<String>,
    hear_reassigned: Option<String>,
    hear_resolution_note: Option<String>,
    only_info: Option<String>,
    only_warning: Option<String>,
    only_critical: Option<String>,
) -> Result<NewChannelAnswer, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    use klaxon_domain::alerting::Severity;
    use klaxon_domain::channel::{ChannelEvent, ChannelKind, NewChannel};
    let name = field("name", klaxon_domain::text::Label::parse(&name))?;
    let kind = field(
        "kind",
        ChannelKind::parse(&kind).ok_or_else(|| "choose where the channel posts".to_string()),
    )?;
    let events = picks(
        ChannelEvent::ALL,
        &[
            hear_opened,
            hear_acknowledged,
            hear_escalated,
            hear_resolved,
            hear_reassigned,
            hear_resolution_note,
        ],
    );
    let severities = picks(Severity::ALL, &[only_info, only_warning, only_critical]);
    let (core, actor) = signed_in().await?;
    let new = NewChannel {
        name,
        kind,
        target,
        events: Some(events),
        severities: Some(severities),
    };
    core.create_channel(&actor, TeamId(team_id), new)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn delete_channel(team_id: i64, id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.delete_channel(&actor, TeamId(team_id), id)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn test_channel(team_id: i64, id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.test_channel(&actor, TeamId(team_id), id)
        .await
        .map_err(fail)
}

/// Checks a Matrix channel's room for its code: the channel, proven.
#[server(prefix = "/rpc")]
pub async fn verify_channel(team_id: i64, id: i64) -> Result<Channel, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.prove_channel(&actor, TeamId(team_id), id)
        .await
        .map_err(fail)
}
