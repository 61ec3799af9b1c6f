//! "Nobody is on call for payments from Tuesday 23 December", with the way to fill it: shown on
//! the incident list, the team page and the schedule page, so a hole in the rota is seen before
//! an incident falls into it.

use klaxon_domain::schedule::CoverageGap;
use leptos::prelude::*;

#[component]
pub fn CoverageWarnings(gaps: Vec<CoverageGap>) -> impl IntoView {
    (!gaps.is_empty()).then(|| {
        view! {
            <ul class="coverage-gaps" aria-label="Gaps in the rota">
                {gaps
                    .into_iter()
                    .map(|g| view! {
                        <li class="warning coverage-gap">
                            {format!("{}. ", g.words())}
                            <a href=format!("/teams/{}?fill={}#give-days", g.team_id, g.from)>"Fill it"</a>
                        </li>
                    })
                    .collect_view()}
            </ul>
        }
    })
}
