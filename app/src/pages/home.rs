//! The incident list (the installed app's start page) and the user's teams.

use crate::api::account::DismissOnboarding;
use crate::api::load;
use crate::api::session::current_user;
use crate::api::teams::CreateTeam;
use crate::components::form::{clear_on_success, ActionError};
use crate::components::loaded::{Failed, Loading};
use crate::components::team_list::TeamList;
use crate::pages::incidents::IncidentList;
use klaxon_domain::account::Me;
use leptos::prelude::*;

#[component]
pub fn HomePage() -> impl IntoView {
    let create = ServerAction::<CreateTeam>::new();
    let dismiss = ServerAction::<DismissOnboarding>::new();
    // Reloaded after each team created, so the new team shows without a page load.
    let me = load(
        move || create.version().get() + dismiss.version().get(),
        |_| current_user(),
    );

    view! {
        // Open incidents first: the first-steps card never sits above them.
        <IncidentList />
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                me.await
                    .ok()
                    .flatten()
                    .filter(|m| m.onboarding_dismissed_at.is_none())
                    .map(|m| view! { <FirstSteps me=m dismiss /> })
            })}
        </Transition>
        <section aria-labelledby="teams-title">
            <h2 id="teams-title">"My teams"</h2>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match me.await {
                        Ok(Some(me)) => view! { <TeamList teams=me.teams /> }.into_any(),
                        Ok(None) => ().into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| me.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <CreateTeamForm action=create />
        </section>
    }
}

/// The first-sign-in card: what makes paging work for this person. Dismissed once, on the
/// server, so it does not come back on another phone.
#[component]
fn FirstSteps(me: Me, dismiss: ServerAction<DismissOnboarding>) -> impl IntoView {
    let step = |done: bool| {
        if done {
            "first-step done"
        } else {
            "first-step"
        }
    };
    let done = |done: bool| done.then(|| view! { <span class="chip">"done"</span> });
    let reaches_phone = me.pages_reach_phone;
    let tested = me.test_page_at.is_some();
    let has_team = !me.teams.is_empty();
    view! {
        <section class="card notice onboarding" aria-labelledby="first-steps-title">
            <h2 id="first-steps-title">"First steps"</h2>
            <ol>
                <li class=step(reaches_phone)>
                    <a href="/me">"Get pages on your phone"</a>
                    ": a private ntfy topic in one tap, or this phone by Web Push."
                    {done(reaches_phone)}
                </li>
                <li class=step(tested)>
                    <a href="/me">"Send yourself a test page"</a>
                    " and check it makes a sound."
                    {done(tested)}
                </li>
                <li class=step(has_team)>
                    "Join a team through an invite link, or create one below."
                    {done(has_team)}
                </li>
            </ol>
            <ActionForm action=dismiss>
                <button type="submit" class="secondary wide">"Got it, hide this"</button>
            </ActionForm>
            <ActionError action=dismiss />
        </section>
    }
}

#[component]
pub fn CreateTeamForm(action: ServerAction<CreateTeam>) -> impl IntoView {
    let made = clear_on_success(action);
    view! {
        <details class="card">
            <summary>"Create a team"</summary>
            <ActionForm action node_ref=made attr:class="stack" attr:aria-label="Create a team">
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
