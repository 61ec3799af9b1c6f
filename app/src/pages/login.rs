//! Sign-in. The form posts straight to the server, so it works before the WASM arrives.

use crate::api::load;
use crate::api::session::{sign_in_options, Login, SignInSetup};
use crate::components::form::ActionError;
use crate::components::hydration::use_hydrated;
use crate::components::loaded::Loading;
use klaxon_domain::account::AuthConfig;
use klaxon_domain::sso::SsoRefusal;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let query = use_query_map();
    let next = move || query.with(|q| q.get("next").unwrap_or_default());
    let refusal = move || {
        query.with(|q| {
            q.get("sso_error")
                .map(|w| SsoRefusal::parse(&w).unwrap_or(SsoRefusal::Failed))
        })
    };
    let info = load(|| (), |_| sign_in_options());

    view! {
        <Title text="Sign in" />
        <main class="content narrow sign-in">
            <h1 class="wordmark">"Klaxon"</h1>
            {move || refusal().map(|r| view! { <p class="error card" role="alert">{r.sentence()}</p> })}
            <Suspense fallback=Loading>
                {move || Suspend::new(async move {
                    let info = info.await.ok()?;
                    let config = info.config.clone();
                    Some(view! {
                        {config.needs_bootstrap.then(|| view! { <BootstrapHelp info=info.clone() /> })}
                        {config.oidc.then(|| view! { <SingleSignOn config=config.clone() next=next() /> })}
                        {config.password_login.then(|| view! { <PasswordSignIn login next=next() /> })}
                    })
                })}
            </Suspense>
            <p class="muted center">"No account? " <a href="/signup">"Join with an invite"</a></p>
        </main>
    }
}

/// The provider's button: a plain link, so it works before the page is interactive;
/// `rel="external"` keeps the router from handling it as a page of the app once it is.
#[component]
fn SingleSignOn(config: AuthConfig, next: String) -> impl IntoView {
    let name = config.oidc_name.unwrap_or_else(|| "single sign-on".into());
    view! {
        <section class="card stack" aria-label="Single sign-on">
            <a class="button primary wide" rel="external" href=crate::paths::sso_login_url(&next)>
                {format!("Sign in with {name}")}
            </a>
            {(!config.oidc_available).then(|| view! {
                <p class="hint">"Klaxon has not reached the identity provider yet; if signing in fails, try again in a minute."</p>
            })}
        </section>
    }
}

#[component]
fn PasswordSignIn(login: ServerAction<Login>, next: String) -> impl IntoView {
    let hydrated = use_hydrated();
    let (show_password, set_show_password) = signal(false);
    view! {
        <ActionForm action=login attr:class="card stack" attr:aria-label="Sign in">
            <h2>"Sign in"</h2>
            <input type="hidden" name="next" value=next />
            <label for="username">"Username"</label>
            <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required />
            <label for="password">"Password"</label>
            <div class="with-button">
                <input
                    id="password"
                    name="password"
                    type=move || if show_password.get() { "text" } else { "password" }
                    autocomplete="current-password"
                    required
                />
                // Purely client-side, so it only appears once the page is interactive.
                <button
                    type="button"
                    class="secondary"
                    hidden=move || !hydrated.get()
                    aria-controls="password"
                    aria-pressed=move || show_password.get().to_string()
                    aria-label=move || if show_password.get() { "Hide password" } else { "Show password" }
                    on:click=move |_| set_show_password.update(|s| *s = !*s)
                >
                    {move || if show_password.get() { "Hide" } else { "Show" }}
                </button>
            </div>
            <ActionError action=login />
            <button type="submit" class="primary" disabled=move || login.pending().get()>
                {move || if login.pending().get() { "Signing in…" } else { "Sign in" }}
            </button>
        </ActionForm>
    }
}

/// Shown while no user exists: how to create the first administrator.
#[component]
fn BootstrapHelp(info: SignInSetup) -> impl IntoView {
    let command = format!(
        "curl -X POST {}/api/bootstrap -H 'content-type: application/json' -d '{{\"username\":\"admin\",\"password\":\"…\"}}'",
        info.public_url
    );
    view! {
        <section class="card notice" aria-labelledby="bootstrap-title">
            <h2 id="bootstrap-title">"Set up Klaxon"</h2>
            <p>"Nobody has an account yet. Create the first administrator from a terminal:"</p>
            <pre class="command"><code>{command}</code></pre>
            <p class="muted">"Pick a password of at least 8 characters, then sign in here. The answer includes an API key, shown once."</p>
        </section>
    }
}
