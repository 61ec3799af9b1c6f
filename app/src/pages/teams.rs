//! The user's teams and one team's members.

use crate::api::error_text;
use crate::api::session::current_user;
use crate::api::teams::{get_team, list_members, CreateTeam};
use crate::components::layout::use_session_user;
use crate::components::team_list::TeamList;
use crate::pages::home::CreateTeamForm;
use crate::pages::team_integrations::Integrations;
use crate::pages::team_schedule::TeamSchedule;
use klaxon_domain::team::Role;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

#[component]
pub fn TeamsPage() -> impl IntoView {
    let create = ServerAction::<CreateTeam>::new();
    let me = Resource::new(move || create.version().get(), |_| current_user());
    view! {
        <Title text="Teams" />
        <h1>"Teams"</h1>
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
    }
}

#[component]
pub fn TeamPage() -> impl IntoView {
    let params = use_params_map();
    // A malformed id is asked for anyway: the server answers it like any unknown team.
    let id = move || params.with(|p| p.get("id").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0));
    let team = Resource::new(id, get_team);
    let members = Resource::new(id, list_members);
    let session = use_session_user();
    let me = Signal::derive(move || session.get().and_then(Result::ok).flatten());
    let my_id = Signal::derive(move || me.with(|m| m.as_ref().map(|m| m.user.id)));
    // Only decides which forms to offer; core checks the right again on every change.
    let is_owner = Signal::derive(move || {
        let team = id();
        me.with(|m| {
            m.as_ref().is_some_and(|m| {
                m.user.is_admin
                    || m.teams
                        .iter()
                        .any(|t| t.id == team && t.role == Role::Owner)
            })
        })
    });
    let team_id = Signal::derive(id);

    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match team.await {
                    Ok(team) => view! {
                        <Title text=team.display_name.clone() />
                        <h1>{team.display_name.clone()}</h1>
                        <p class="muted">{team.name.clone()}</p>
                    }
                    .into_any(),
                    Err(e) => view! {
                        <Title text="Team" />
                        <h1>"Team"</h1>
                        <p class="error" role="alert">{error_text(&e)}</p>
                        <p><a href="/teams">"Back to teams"</a></p>
                    }
                    .into_any(),
                }
            })}
        </Suspense>
        <section aria-labelledby="members-title">
            <h2 id="members-title">"Members"</h2>
            <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match members.await {
                        Ok(list) if list.is_empty() => view! { <p class="empty">"No members."</p> }.into_any(),
                        Ok(list) => view! {
                            <ul class="list">
                                {list
                                    .into_iter()
                                    .map(|m| view! {
                                        <li class="row">
                                            <span class="row-main">{m.username}</span>
                                            <span class="chip">{m.role.as_str()}</span>
                                        </li>
                                    })
                                    .collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
        <Integrations team_id is_owner />
        <TeamSchedule team_id members me=my_id />
    }
}
