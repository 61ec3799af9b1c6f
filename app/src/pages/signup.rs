//! Joining Klaxon through an invite link (or without one when the install is open): the only
//! page besides sign-in that works signed out. The form posts straight to the server, so it
//! works before the WASM arrives, and lands the new person on the incident list.

use crate::api::load;
use crate::api::session::current_user;
use crate::api::signup::{signup_options, JoinTeam, SignUp};
use crate::components::form::ActionError;
use crate::components::loaded::Loading;
use klaxon_domain::invite::SignupCheck;
use klaxon_domain::settings::SignupMode;
use klaxon_domain::team::Role;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn SignupPage() -> impl IntoView {
    let invite = move || use_query_map().with(|q| q.get("invite").unwrap_or_default());
    let check = load(invite, |t| signup_options(Some(t)));
    // Someone already signed in joins with one button instead of making a second account.
    let me = load(|| (), |_| current_user());
    view! {
        <Title text="Join Klaxon" />
        <main class="content narrow sign-in">
            <h1 class="wordmark">"Klaxon"</h1>
            <Suspense fallback=Loading>
                {move || Suspend::new(async move {
                    let me = me.await.ok().flatten();
                    match check.await {
                        Ok(c) => match (me, c.team.clone(), c.role) {
                            (Some(me), Some(team), Some(role)) => view! {
                                <JoinSignedIn username=me.user.username team_name=team.display_name role invite=invite() />
                            }
                            .into_any(),
                            _ => view! { <Join check=c invite=invite() /> }.into_any(),
                        },
                        Err(_) => view! {
                            <p class="error" role="alert">"Klaxon could not be reached; try again in a moment."</p>
                        }
                        .into_any(),
                    }
                })}
            </Suspense>
            // Signing in first comes back to this link, to join with one button.
            <p class="muted center">"Have an account? " <a href=move || sign_in_then_back(&invite())>"Sign in"</a></p>
        </main>
    }
}

/// The sign-in page, then back to this invite link.
fn sign_in_then_back(invite: &str) -> String {
    match invite {
        "" => "/login".to_string(),
        t => crate::paths::sign_in_url(&format!("/signup?invite={t}")),
    }
}

/// "Join payments as member": one button for someone who has an account and is signed in.
#[component]
fn JoinSignedIn(username: String, team_name: String, role: Role, invite: String) -> impl IntoView {
    let join = ServerAction::<JoinTeam>::new();
    let label = format!("Join {team_name} as {}", role.as_str());
    let form_label = label.clone();
    view! {
        <section class="card stack" aria-labelledby="join-title">
            <h2 id="join-title">{format!("Join {team_name}")}</h2>
            <p class="hint">{format!("You are signed in as {username}. The link makes you {} of {team_name}.", match role { Role::Owner => "an owner", Role::Member => "a member" })}</p>
            <ActionForm action=join attr:class="stack" attr:aria-label=form_label>
                <input type="hidden" name="invite" value=invite />
                <ActionError action=join />
                <button type="submit" class="primary" disabled=move || join.pending().get()>{label}</button>
            </ActionForm>
            <p class="hint"><a href="/">"Not now: go to incidents"</a></p>
        </section>
    }
}

#[component]
fn Join(check: SignupCheck, invite: String) -> impl IntoView {
    let open = check.signup_mode == SignupMode::Open;
    let heading = match (&check.team, open) {
        (Some(team), _) => format!("Join {}", team.display_name),
        (None, true) => "Create your account".to_string(),
        (None, false) => "Join Klaxon".to_string(),
    };
    // One neutral sentence for every link that cannot be used, as the server answers.
    let note = match (&check.team, open, invite.is_empty()) {
        (Some(_), _, _) => None,
        (None, true, false) => Some("This invite link cannot be used, but you can still create an account; ask a team owner to add you."),
        (None, true, true) => None,
        (None, false, false) => Some("This invite link cannot be used. Ask a team owner for a new one."),
        (None, false, true) => Some("Joining needs an invite link. Ask a team owner for one."),
    };
    let can_join = check.team.is_some() || open;
    let signup = ServerAction::<SignUp>::new();
    view! {
        <section class="card stack" aria-labelledby="join-title">
            <h2 id="join-title">{heading}</h2>
            {note.map(|n| view! { <p class="notice">{n}</p> })}
            {check.team.as_ref().map(|t| view! {
                <p class="hint">{format!("You will be a member of {} once your account exists.", t.display_name)}</p>
            })}
            {can_join.then(|| view! {
                <ActionForm action=signup attr:class="stack" attr:aria-label="Create your account">
                    // An unusable link is not sent: the account is made as the mode allows.
                    <input type="hidden" name="invite" value=if check.team.is_some() { invite.clone() } else { String::new() } />
                    <label for="username">"Username"</label>
                    <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="64" aria-describedby="username-hint" />
                    <p id="username-hint" class="hint">"Letters, digits and . _ @ -"</p>
                    <label for="password">"Password"</label>
                    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" aria-describedby="password-hint" />
                    <p id="password-hint" class="hint">"At least 8 characters."</p>
                    <ActionError action=signup />
                    <button type="submit" class="primary" disabled=move || signup.pending().get()>
                        {move || if signup.pending().get() { "Creating your account…" } else { "Create account" }}
                    </button>
                </ActionForm>
            })}
        </section>
    }
}
