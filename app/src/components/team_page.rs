//! What the team page and its sub-pages (escalation, rota) share: the heading that leads back
//! to the team, and whether the caller may manage it.

use crate::api::Loaded;
use crate::components::loaded::Loading;
use klaxon_domain::channel::ChannelKind;
use klaxon_domain::team::TeamView;
use leptos::prelude::*;
use leptos_meta::Title;

pub type TeamResource = Loaded<TeamView>;

/// True once the page is interactive and the server said the caller may manage the team (it
/// checks again on every change). Owners' forms wait for hydration: the team arrives after the
/// rest of the page is rendered, and the server's HTML and the first client render must agree.
/// The kinds of channel the install offers, once the page is interactive (every kind before: the
/// server's first render and hydration agree, and adding a channel waits for hydration anyway).
pub fn use_channel_kinds(team: TeamResource) -> Signal<Vec<ChannelKind>> {
    let hydrated = crate::components::hydration::use_hydrated();
    Signal::derive(move || {
        let offered = team
            .get()
            .and_then(Result::ok)
            .map(|t| t.channel_kinds)
            .filter(|_| hydrated.get());
        offered.unwrap_or_else(|| ChannelKind::ALL.to_vec())
    })
}

pub fn use_may_manage(team: TeamResource) -> Signal<bool> {
    let hydrated = crate::components::hydration::use_hydrated();
    Signal::derive(move || {
        hydrated.get()
            && team
                .get()
                .and_then(Result::ok)
                .is_some_and(|t| t.may_manage)
    })
}

/// A sub-page's title and heading, under a link back to the team.
#[component]
pub fn TeamSubpageHeading(
    team: TeamResource,
    team_id: Signal<i64>,
    title: &'static str,
) -> impl IntoView {
    view! {
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                let team_id = team_id.get_untracked();
                let name = match team.await {
                    Ok(t) => t.team.display_name,
                    Err(_) => "Team".to_string(),
                };
                view! {
                    <Title text=format!("{title} · {name}") />
                    <p class="back"><a href=format!("/teams/{team_id}")>{format!("← {name}")}</a></p>
                    <h1>{title}</h1>
                }
            })}
        </Transition>
    }
}
