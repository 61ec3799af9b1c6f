//! A list of the signed-in user's teams with their role in each.

use klaxon_domain::account::MyTeam;
use leptos::prelude::*;

#[component]
pub fn TeamList(teams: Vec<MyTeam>) -> impl IntoView {
    if teams.is_empty() {
        return view! { <p class="empty">"You are not in any team yet."</p> }.into_any();
    }
    view! {
        <ul class="list">
            {teams
                .into_iter()
                .map(|t| {
                    view! {
                        <li>
                            <a class="row" href=format!("/teams/{}", t.id)>
                                <span class="row-main">{t.display_name}</span>
                                <span class="chip">{t.role.as_str()}</span>
                            </a>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}
