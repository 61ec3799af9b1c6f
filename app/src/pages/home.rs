//! The incident list (the installed app's start page) and the user's teams.

use crate::api::error_text;
use crate::api::session::current_user;
use crate::api::teams::CreateTeam;
use crate::components::form::ActionError;
use crate::components::team_list::TeamList;
use crate::pages::incidents::IncidentList;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn HomePage() -> impl IntoView {
    let create = ServerAction::<CreateTeam>::new();
    // Reloaded after each team created, so the new team shows without a page load.
    let me = Resource::new(move || create.version().get(), |_| current_user());

    view! {
        <Title text="Incidents" />
        <IncidentList />
        <section aria-labelledby="teams-title">
            <h2 id="teams-title">"My teams"</h2>
            <Transition fallback=|| view! { <p class="loading">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match me.await {
                        Ok(Some(me)) => view! { <TeamList teams=me.teams /> }.into_any(),
                        Ok(None) => ().into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
            <CreateTeamForm action=create />
        </section>
    }
}

#[component]
pub fn CreateTeamForm(action: ServerAction<CreateTeam>) -> impl IntoView {
    view! {
        <details class="card">
            <summary>"Create a team"</summary>
            <ActionForm action attr:class="stack" attr:aria-label="Create a team">
                <label for="team-name">"Name"</label>
                <input id="team-name" name="name" type="text" required autocapitalize="none" spellcheck="false" aria-describedby="team-name-hint" />
                <p id="team-name-hint" class="hint">"Lowercase letters, digits, - and _, e.g. payments-oncall."</p>
                <label for="team-display">"Display name"</label>
                <input id="team-display" name="display_name" type="text" placeholder="Payments on call" />
                <ActionError action />
                <button type="submit" class="primary" disabled=move || action.pending().get()>"Create team"</button>
            </ActionForm>
        </details>
    }
}
