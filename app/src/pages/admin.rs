//! The administrator's console: users (create, disable or enable, grant or revoke the admin
//! flag, delete), teams with their size and open incidents (create, delete), and the settings
//! with their bounds, saved or refused as one. Only what is offered depends on the admin flag;
//! every change is checked again on the server, and a refusal (the last administrator,
//! oneself) is explained next to the control.

use crate::api::admin::{
    admin_console, AdminCreateUser, AdminDeleteTeam, AdminDeleteUser, AdminSaveSettings,
    AdminSetAdmin, AdminSetDisabled,
};
use crate::api::teams::CreateTeam;
use crate::api::{load, Loaded};
use crate::components::form::{failed, ActionDone, ActionError, Confirm, Fold};
use crate::components::layout::use_session_user;
use crate::components::loaded::{Loading, WhenLoaded};
use crate::pages::home::CreateTeamForm;
use klaxon_domain::account::{AccountKind, AdminView, ConsoleUser, User};
use klaxon_domain::settings::{label, AdminSettings, SignupMode, DURATION_SETTINGS, SIGNUP_MODE};
use klaxon_domain::sso::GrantSource;
use klaxon_domain::team::TeamSummary;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn AdminPage() -> impl IntoView {
    let me = use_session_user();
    let actions = Actions {
        create_user: ServerAction::new(),
        disable: ServerAction::new(),
        admin: ServerAction::new(),
        delete_user: ServerAction::new(),
        create_team: ServerAction::new(),
        delete_team: ServerAction::new(),
        settings: ServerAction::new(),
    };
    // Made before the admin check is awaited, not under it, so the browser finds the server's
    // answer when it takes the page over. Anyone else gets a refusal that is never shown.
    let console = load(move || actions.changes(), |_| admin_console());
    view! {
        <Title text="Admin" />
        <h1>"Administration"</h1>
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                let is_admin = matches!(me.await, Ok(Some(ref m)) if m.user.is_admin);
                if is_admin {
                    view! { <ConsolePage console actions /> }.into_any()
                } else {
                    view! {
                        <p>"This page is for Klaxon administrators only. Ask one if you need a change made."</p>
                    }
                    .into_any()
                }
            })}
        </Suspense>
    }
}

/// The actions of the console; any of them finishing reloads it.
#[derive(Clone, Copy)]
struct Actions {
    create_user: ServerAction<AdminCreateUser>,
    disable: ServerAction<AdminSetDisabled>,
    admin: ServerAction<AdminSetAdmin>,
    delete_user: ServerAction<AdminDeleteUser>,
    create_team: ServerAction<CreateTeam>,
    delete_team: ServerAction<AdminDeleteTeam>,
    settings: ServerAction<AdminSaveSettings>,
}

impl Actions {
    fn changes(&self) -> usize {
        self.create_user.version().get()
            + self.disable.version().get()
            + self.admin.version().get()
            + self.delete_user.version().get()
            + self.create_team.version().get()
            + self.delete_team.version().get()
            + self.settings.version().get()
    }
}

#[component]
fn ConsolePage(console: Loaded<AdminView>, actions: Actions) -> impl IntoView {
    view! {
        <WhenLoaded resource=console let:c>
            <Sections console=c actions />
        </WhenLoaded>
    }
}

#[component]
fn Sections(console: AdminView, actions: Actions) -> impl IntoView {
    let AdminView {
        users,
        teams,
        settings,
    } = console;
    view! {
        <Users users actions />
        <Teams teams actions />
        <Settings settings action=actions.settings />
    }
}

#[component]
fn Users(users: Vec<ConsoleUser>, actions: Actions) -> impl IntoView {
    let create = actions.create_user;
    view! {
        <section class="card" aria-labelledby="users-title">
            <h2 id="users-title">"Users"</h2>
            <Fold key="new-person" class="inner" open=move || failed(create)>
                <summary>"Add a person"</summary>
                <ActionForm action=create attr:class="stack" attr:aria-label="Add a person">
                    <label for="new-username">"Username"</label>
                    <input id="new-username" name="username" type="text" required maxlength="64" autocapitalize="none" spellcheck="false" />
                    <label for="new-password">"First password"</label>
                    <input id="new-password" name="password" type="password" required minlength="8" autocomplete="new-password" aria-describedby="new-password-hint" />
                    <p id="new-password-hint" class="hint">"At least 8 characters. Give it to them in person; they can change it on their profile. An invite link is often easier."</p>
                    <label for="new-email">"Email (optional)"</label>
                    <input id="new-email" name="email" type="email" maxlength="254" autocapitalize="none" spellcheck="false" aria-describedby="new-email-hint" />
                    <p id="new-email-hint" class="hint">"With single sign-on, their first sign-in through the provider joins this account when the provider vouches for this address."</p>
                    <label class="check"><input type="checkbox" name="is_admin" value="on" />"Administrator"</label>
                    <ActionError action=create />
                    <button type="submit" class="primary" disabled=move || create.pending().get()>"Add person"</button>
                </ActionForm>
            </Fold>
            <ActionError action=actions.disable />
            <ActionError action=actions.admin />
            <ActionError action=actions.delete_user />
            <ActionDone action=actions.delete_user text="Deleted." />
            <ul class="list">
                {users.into_iter().map(|u| view! { <UserRow row=u actions /> }).collect_view()}
            </ul>
        </section>
    }
}

#[component]
fn UserRow(row: ConsoleUser, actions: Actions) -> impl IntoView {
    let ConsoleUser {
        user,
        you,
        may_change_admin,
    } = row;
    let name = user.username.clone();
    let mut chips = Vec::new();
    if user.is_admin {
        chips.push("admin");
    }
    if user.disabled {
        chips.push("disabled");
    }
    if user.kind == AccountKind::Service {
        chips.push("service");
    }
    let (disable_label, admin_label, delete_text) = (
        format!(
            "{} {name}",
            if user.disabled { "Enable" } else { "Disable" }
        ),
        format!(
            "{} {name}",
            if user.is_admin {
                "Revoke admin from"
            } else {
                "Make admin:"
            }
        ),
        format!("Yes, delete {name}"),
    );
    view! {
        <li class="admin-user">
            <div class="row">
                <span class="row-main">
                    <strong>{if you { format!("{name} (you)") } else { name.clone() }}</strong>
                    <span class="meta">{sign_in_method(&user)}</span>
                </span>
                {chips.into_iter().map(|c| view! { <span class=format!("chip chip-{c}")>{c}</span> }).collect_view()}
            </div>
            <div class="row-tools">
                <ActionForm action=actions.disable>
                    <input type="hidden" name="user_id" value=user.id />
                    <input type="hidden" name="disabled" value=(!user.disabled).to_string() />
                    <button type="submit" class="secondary" aria-label=disable_label>
                        {if user.disabled { "Enable" } else { "Disable" }}
                    </button>
                </ActionForm>
                // The provider's groups grant this flag; only they change it.
                {may_change_admin.then(|| view! {
                    <ActionForm action=actions.admin>
                        <input type="hidden" name="user_id" value=user.id />
                        <input type="hidden" name="is_admin" value=(!user.is_admin).to_string() />
                        <button type="submit" class="secondary" aria-label=admin_label>
                            {if user.is_admin { "Revoke admin" } else { "Make admin" }}
                        </button>
                    </ActionForm>
                })}
                <Confirm key=format!("delete-user-{}", user.id) summary="Delete…">
                    <ActionForm action=actions.delete_user attr:class="stack">
                        <input type="hidden" name="user_id" value=user.id />
                        <p class="hint">"Their sessions and keys stop working; their notes and history stay, without their name."</p>
                        <button type="submit" class="danger wide">{delete_text}</button>
                    </ActionForm>
                </Confirm>
            </div>
        </li>
    }
}

#[component]
fn Teams(teams: Vec<TeamSummary>, actions: Actions) -> impl IntoView {
    view! {
        <section class="card" aria-labelledby="admin-teams-title">
            <h2 id="admin-teams-title">"Teams"</h2>
            <CreateTeamForm action=actions.create_team />
            <ActionError action=actions.delete_team />
            {if teams.is_empty() {
                view! { <p class="empty">"No teams yet."</p> }.into_any()
            } else {
                view! {
                    <ul class="list">
                        {teams.into_iter().map(|t| {
                            let meta = format!("{} · {} members · {} open incidents", t.team.name, t.member_count, t.open_incidents);
                            let name = t.team.display_name.clone();
                            view! {
                                <li class="admin-team">
                                    <a class="row" href=format!("/teams/{}", t.team.id)>
                                        <span class="row-main">
                                            <strong>{name.clone()}</strong>
                                            <span class="meta">{meta}</span>
                                        </span>
                                    </a>
                                    <Confirm key=format!("delete-team-{}", t.team.id) summary="Delete…">
                                        <ActionForm action=actions.delete_team attr:class="stack">
                                            <input type="hidden" name="team_id" value=t.team.id />
                                            <p class="hint">"Its incidents, alerts, schedule, links and integrations go with it."</p>
                                            <button type="submit" class="danger wide">{format!("Yes, delete {name}")}</button>
                                        </ActionForm>
                                    </Confirm>
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }
                .into_any()
            }}
        </section>
    }
}

/// Every setting in one form, each duration with its bounds beside it.
#[component]
fn Settings(settings: AdminSettings, action: ServerAction<AdminSaveSettings>) -> impl IntoView {
    let s = settings.settings;
    let values = [s.notify_repeat_interval, s.stale_after, s.archive_after];
    let (help, status) = (
        [
            "How often an unacknowledged incident pages again, for teams without a ladder.",
            "A firing alert not heard of for this long is resolved as expired.",
            "Resolved alerts older than this leave the lists.",
        ],
        [
            if settings.push.configured {
                "Push service configured."
            } else {
                "No push service is configured: nobody can be paged."
            },
            match (settings.oidc.configured, settings.oidc.available) {
                (true, true) => "Single sign-on is configured and its provider answers.",
                (true, false) => "Single sign-on is configured, but its provider has not answered yet; Klaxon keeps trying.",
                (false, _) => "Single sign-on is not configured.",
            },
        ]
        .join(" "),
    );
    view! {
        <section class="card" aria-labelledby="settings-title">
            <h2 id="settings-title">"Settings"</h2>
            <p class="hint">{status}</p>
            <ActionForm action attr:class="stack" attr:aria-label="Settings">
                <label for="signup_mode">{label(SIGNUP_MODE)}</label>
                <select id="signup_mode" name="signup_mode">
                    <option value="invite_only" selected=s.signup_mode == SignupMode::InviteOnly>"Only people with an invite link"</option>
                    <option value="open" selected=s.signup_mode == SignupMode::Open>"Anyone who reaches this page"</option>
                </select>
                {DURATION_SETTINGS.iter().zip(values).zip(help).map(|(((key, _, bounds), value), help)| {
                    let hint = format!("{help} Between {} and {}.", bounds.min, bounds.max);
                    let hint_id = format!("{key}-hint");
                    let name = label(key);
                    // The refusal names each bad value by its label: those fields are marked.
                    let refused = move || action.value().with(|v| matches!(v, Some(Err(e)) if e.to_string().contains(name)));
                    view! {
                        <label for=*key>{name}</label>
                        <input id=*key name=*key type="text" required value=value.to_string() aria-describedby=hint_id.clone() aria-invalid=move || refused().then_some("true") />
                        <p id=hint_id class="hint">{hint}</p>
                    }
                }).collect_view()}
                <ActionError action />
                <ActionDone action text="Saved." />
                <button type="submit" class="primary" disabled=move || action.pending().get()>"Save settings"</button>
            </ActionForm>
        </section>
    }
}

/// How the person signs in, and whether the provider makes them an administrator.
fn sign_in_method(user: &User) -> &'static str {
    match (user.sso, user.source) {
        (true, GrantSource::Oidc) => "single sign-on · admin from provider groups",
        (true, GrantSource::Manual) => "single sign-on",
        (false, _) if user.kind == AccountKind::Service => "API keys",
        (false, _) => "password",
    }
}
