//! Sign-in. The form posts straight to the server, so it works before the WASM arrives.

use crate::api::session::{sign_in_options, Login, SignInSetup};
use crate::app::use_hydrated;
use crate::components::form::ActionError;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let next = move || use_query_map().with(|q| q.get("next").unwrap_or_default());
    let info = Resource::new(|| (), |_| sign_in_options());
    let hydrated = use_hydrated();
    let (show_password, set_show_password) = signal(false);

    view! {
        <Title text="Sign in" />
        <main class="content narrow sign-in">
            <h1 class="wordmark">"Klaxon"</h1>
            <Suspense>
                {move || Suspend::new(async move {
                    info.await.ok().filter(|i| i.config.needs_bootstrap).map(|i| view! { <BootstrapHelp info=i /> })
                })}
            </Suspense>
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
            <p class="muted center">"No account? " <a href="/signup">"Join with an invite"</a></p>
        </main>
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
