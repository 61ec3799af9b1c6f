//! A read's three states, said the same way on every page: loading, failed (the sentence and a
//! way to try again), loaded.

use crate::api::{error_text, Loaded};
use leptos::prelude::*;
use leptos_router::hooks::use_location;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::Arc;

pub use crate::sentences::NOT_FOUND;

/// A page whose own subject (`/incidents/999`) is missing answers 404 when rendered on the
/// server; the signed-in pages render whole before their status is sent (`SsrMode::Async`).
pub fn page_not_found(e: &ServerFnError) {
    let missing = matches!(e, ServerFnError::ServerError(m) if m == NOT_FOUND);
    #[cfg(feature = "ssr")]
    if missing {
        if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
            response.set_status(axum::http::StatusCode::NOT_FOUND);
        }
    }
    #[cfg(not(feature = "ssr"))]
    let _ = missing;
}

/// What shows while a read is on its way.
#[component]
pub fn Loading() -> impl IntoView {
    view! { <p class="loading">"Loading…"</p> }
}

/// A read that failed: its sentence, and "Try again", which reads it again (`retry`) or, without
/// one, loads the page afresh (a plain link, so it works before the page is hydrated too).
#[component]
pub fn Failed(
    error: ServerFnError,
    #[prop(optional, into)] retry: Option<Callback<()>>,
) -> impl IntoView {
    let again = match retry {
        Some(retry) => view! {
            <button type="button" class="secondary" on:click=move |_| retry.run(())>"Try again"</button>
        }
        .into_any(),
        None => {
            let here = use_location();
            let href = format!("{}{}", here.pathname.get_untracked(), here.search.get_untracked());
            view! { <a href=href rel="external">"Try again"</a> }.into_any()
        }
    };
    view! {
        <div class="failed">
            <p class="error" role="alert">{error_text(&error)}</p>
            <p>{again}</p>
        </div>
    }
}

/// A read in its three states. While a new value loads, the last one stays on screen
/// (`Transition`); a failure offers to read again.
#[component]
pub fn WhenLoaded<T, V, F>(resource: Loaded<T>, children: F) -> impl IntoView
where
    T: Clone + Serialize + DeserializeOwned + Send + Sync + 'static,
    V: IntoView + 'static,
    F: Fn(T) -> V + Send + Sync + 'static,
{
    let children = Arc::new(children);
    view! {
        <Transition fallback=Loading>
            {move || {
                let children = children.clone();
                Suspend::new(async move {
                    match resource.await {
                        Ok(value) => children(value).into_any(),
                        Err(error) => view! {
                            <Failed error retry=move |_| resource.refetch() />
                        }
                        .into_any(),
                    }
                })
            }}
        </Transition>
    }
}
