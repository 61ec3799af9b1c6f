//! Any address the app does not know.

use crate::api::load;
use crate::api::session::current_user;
use crate::components::layout::Frame;
use crate::components::loaded::Loading;
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

/// Unknown addresses: "Not found" inside the usual frame for a signed-in user, on its own
/// otherwise. Not a redirect to sign-in, since there is nothing to come back to.
#[component]
pub fn NotFoundShell() -> impl IntoView {
    // Set before anything streams, so the status reaches the response.
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(axum::http::StatusCode::NOT_FOUND);
    }
    let me = load(|| (), |_| current_user());
    view! {
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                match me.await {
                    Ok(Some(me)) => view! { <Frame me><NotFoundPage /></Frame> }.into_any(),
                    _ => view! { <main class="content narrow"><NotFoundPage /></main> }.into_any(),
                }
            })}
        </Suspense>
    }
}
