//! Whether the wasm has taken the page over, for controls that only work client-side. The app
//! provides it; pages read it here, so no page imports the app's root module.

use leptos::prelude::*;

/// True once the WASM has taken over the server-rendered page. Controls that only work
/// client-side stay hidden or disabled until then.
#[derive(Clone, Copy)]
pub struct Hydrated(pub ReadSignal<bool>);

pub fn use_hydrated() -> ReadSignal<bool> {
    use_context::<Hydrated>()
        .map(|h| h.0)
        .unwrap_or_else(|| signal(false).0)
}
