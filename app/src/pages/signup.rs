//! Joining Klaxon. Invite links arrive in a later release.

use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn SignupPage() -> impl IntoView {
    view! {
        <Title text="Join" />
        <main class="content narrow">
            <h1>"Join Klaxon"</h1>
            <p>"Ask your team owner for an invite link."</p>
            <p><a href="/login">"Back to sign in"</a></p>
        </main>
    }
}
