//! A team's reports (on-call health, alert noise) and post-incident reviews with their
//! follow-up items.

use klaxon_domain::health::OncallHealth;
use klaxon_domain::noise::AlertNoise;
use klaxon_domain::review::{FollowUp, Review};
use leptos::prelude::*;

/// The weeks a report may cover, as the page offers them.
pub const WEEKS: [i64; 3] = [4, 13, 52];

/// The range of the last `weeks` weeks (4, 13 or 52; 4 for anything else).
#[cfg(feature = "ssr")]
fn last_weeks(core: &klaxon_core::Core, weeks: i64) -> klaxon_core::reports::ReportQuery {
    let weeks = if WEEKS.contains(&weeks) { weeks } else { 4 };
    let to = core.now() + 1;
    klaxon_core::reports::ReportQuery {
        from: Some(to - weeks * 7 * 86_400),
        to: Some(to),
        person: None,
    }
}

#[server(prefix = "/rpc")]
pub async fn get_oncall_health(team_id: i64, weeks: i64) -> Result<OncallHealth, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let q = last_weeks(&core, weeks);
    core.oncall_health(&actor, team_id, q).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn get_alert_noise(team_id: i64, weeks: i64) -> Result<AlertNoise, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let q = last_weeks(&core, weeks);
    core.alert_noise(&actor, team_id, q).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn get_review(incident_id: i64) -> Result<Review, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.incident_review(&actor, incident_id)
        .await
        .map_err(fail)
}

/// `owner_id` as the form's select sends it: empty for nobody.
#[server(prefix = "/rpc")]
pub async fn add_follow_up(
    incident_id: i64,
    text: String,
    owner_id: String,
) -> Result<FollowUp, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::review::NewFollowUp;
    let (core, actor) = signed_in().await?;
    let owner_id = match owner_id.trim() {
        "" => None,
        id => Some(id.parse::<i64>().map_err(|_| {
            fail(klaxon_core::Error::Invalid(
                "owner_id: choose someone from the list".into(),
            ))
        })?),
    };
    let new = NewFollowUp { text, owner_id };
    core.add_follow_up(&actor, incident_id, new)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn set_follow_up_done(id: i64, done: bool) -> Result<FollowUp, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.set_follow_up_done(&actor, id, done)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn remove_follow_up(id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.delete_follow_up(&actor, id).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn get_open_follow_ups(team_id: i64) -> Result<Vec<FollowUp>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.open_follow_ups(&actor, team_id).await.map_err(fail)
}
