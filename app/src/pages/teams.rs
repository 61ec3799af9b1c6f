//! The user's teams and one team's page, which reloads itself when the team changes.

use crate::api::incidents::weekly_stats;
use crate::api::load;
use crate::api::paging::get_escalation_policy;
use crate::api::session::current_user;
use crate::api::teams::{get_team, list_members, CreateTeam};
use crate::components::charts::WeeklyChart;
use crate::components::coverage::CoverageWarnings;
use crate::components::layout::use_session_user;
use crate::components::live::{use_page_live, TeamUpdates};
use crate::components::loaded::{Failed, Loading};
use crate::components::team_list::TeamList;
use crate::components::team_page::{use_channel_kinds, use_may_manage};
use crate::pages::home::CreateTeamForm;
use crate::pages::review::OpenFollowUps;
use crate::pages::team_access::{InviteLinks, ServiceAccounts};
use crate::pages::team_channels::Channels;
use crate::pages::team_deadman::DeadmanSwitches;
use crate::pages::team_integrations::Integrations;
use crate::pages::team_maintenance::MaintenanceWindows;
use crate::pages::team_members::{MemberActions, Members};
use crate::pages::team_schedule::TeamSchedule;
use klaxon_domain::live::EventKind;
use klaxon_domain::paging::EscalationPolicy;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

#[component]
pub fn TeamsPage() -> impl IntoView {
    let create = ServerAction::<CreateTeam>::new();
    let me = load(move || create.version().get(), |_| current_user());
    view! {
        <Title text="Teams" />
        <h1>"Teams"</h1>
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
    }
}

#[component]
pub fn TeamPage() -> impl IntoView {
    let params = use_params_map();
    // A malformed id is asked for anyway: the server answers it like any unknown team.
    let id = move || params.with(|p| p.get("id").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0));
    let updates = use_page_live(move |kind, e| {
        matches!(kind, EventKind::Team | EventKind::Schedule) && e.id == id()
    });
    provide_context(TeamUpdates(updates));
    let team = load(move || (id(), updates.changes()), |(id, _)| get_team(id));
    let member_actions = MemberActions::new();
    let members = load(
        move || (id(), updates.changes(), member_actions.changes()),
        |(id, _, _)| list_members(id),
    );
    let session = use_session_user();
    let me = Signal::derive(move || session.get().and_then(Result::ok).flatten());
    let my_id = Signal::derive(move || me.with(|m| m.as_ref().map(|m| m.user.id)));
    let team_id = Signal::derive(id);
    let is_owner = use_may_manage(team);
    let kinds = use_channel_kinds(team);

    // Transitions, not Suspense: a live update reloads the team, and the title and heading must not
    // vanish while it does.
    view! {
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                match team.await {
                    Ok(view) => view! {
                        <Title text=view.team.display_name.clone() />
                        <h1>{view.team.display_name.clone()}</h1>
                        <p class="muted">{view.team.name.clone()}</p>
                        <CoverageWarnings gaps=view.gap.into_iter().collect() />
                    }
                    .into_any(),
                    Err(e) => {
                        crate::components::loaded::page_not_found(&e);
                        view! {
                        <Title text="Team" />
                        <h1>"Team"</h1>
                        <Failed error=e retry=move |_| team.refetch() />
                        <p><a href="/teams">"Back to teams"</a></p>
                    }
                    .into_any()
                    }
                }
            })}
        </Transition>
        <Members team_id members is_owner actions=member_actions />
        // Only the people who may manage the team see who may get into it; inviting is what
        // an owner comes to the members for, so the links sit right under them.
        <Show when=move || is_owner.get()>
            <InviteLinks team_id />
        </Show>
        <ResponseTimes team_id />
        <OpenFollowUps team_id />
        <EscalationLink team_id />
        <Integrations team_id is_owner />
        <Channels team_id is_owner kinds />
        <DeadmanSwitches team_id is_owner />
        <MaintenanceWindows team_id is_owner />
        <Show when=move || is_owner.get()>
            <ServiceAccounts team_id />
        </Show>
        <TeamSchedule team_id members me=my_id is_owner />
        <AsFile team_id />
    }
}

/// The team's set-up as the YAML file `klaxon apply` reads (`GET /api/teams/{id}/config`), a
/// plain download link, so it works before the wasm arrives.
#[component]
fn AsFile(team_id: Signal<i64>) -> impl IntoView {
    view! {
        <section aria-labelledby="file-title">
            <h2 id="file-title">"As a file"</h2>
            <p class="hint">"This team's set-up as YAML, to keep in version control: change it, see the change with "<code>"klaxon diff"</code>" and make it with "<code>"klaxon apply"</code>"."</p>
            <p>
                <a class="button" rel="external" download=""
                    href=move || format!("/api/teams/{}/config?format=yaml", team_id.get())>
                    "Export as file"
                </a>
            </p>
        </section>
    }
}

/// The team's last twelve weeks: how fast its incidents were acknowledged and resolved.
#[component]
fn ResponseTimes(team_id: Signal<i64>) -> impl IntoView {
    let updates = expect_context::<TeamUpdates>().0;
    // Incidents of the team do not move the team page's counter; the weeks change slowly.
    let weeks = load(
        move || (team_id.get(), updates.changes()),
        |(id, _)| weekly_stats(id),
    );
    view! {
        <section aria-labelledby="response-title">
            <h2 id="response-title">"Response times"</h2>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match weeks.await {
                        Ok(weeks) => view! { <WeeklyChart weeks /> }.into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| weeks.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// The way to the team's escalation ladder, with what it does now in a few words.
#[component]
fn EscalationLink(team_id: Signal<i64>) -> impl IntoView {
    let policy = load(move || team_id.get(), get_escalation_policy);
    view! {
        <section aria-labelledby="paging-title">
            <h2 id="paging-title">"Paging"</h2>
            <ul class="list">
                <li>
                    <a class="row" href=move || format!("/teams/{}/escalation", team_id.get())>
                        <span class="row-main">
                            <strong>"Escalation ladder"</strong>
                            <Transition fallback=|| view! { <span class="meta">"Who is paged, and when"</span> }>
                                {move || Suspend::new(async move {
                                    let text = match policy.await {
                                        Ok(p) => ladder_summary(&p),
                                        Err(_) => "Who is paged, and when".to_string(),
                                    };
                                    view! { <span class="meta">{text}</span> }
                                })}
                            </Transition>
                        </span>
                        <span class="go" aria-hidden="true">"›"</span>
                    </a>
                </li>
            </ul>
        </section>
    }
}

/// "No ladder: reminders", "2 levels, runs 3 times", "1 level, then fallback-topic".
fn ladder_summary(p: &EscalationPolicy) -> String {
    if p.levels.is_empty() {
        return "No ladder: reminders instead".to_string();
    }
    let mut text = match p.levels.len() {
        1 => "1 level".to_string(),
        n => format!("{n} levels"),
    };
    match p.repeat {
        0 => {}
        1 => text.push_str(", runs twice"),
        n => text.push_str(&format!(", runs {} times", n + 1)),
    }
    if let Some(t) = &p.fallback_topic {
        text.push_str(&format!(", then {t}"));
    }
    text
}
