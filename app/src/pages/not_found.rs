//! Any address the app does not know.

use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn NotFoundPage() -> impl IntoView {
    view! {
        <Title text="Not found" />
        <h1>"Not found"</h1>
        <p>"There is nothing at this address. It may have been mistyped or removed."</p>
        <p><a href="/">"Go to incidents"</a></p>
    }
}
