//! The browser entry point: takes over the server-rendered page.

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    klaxon_app::account_changes_load_in_full();
    // Asynchronous: the code of every page but the incident list is in a chunk (lazy routes),
    // fetched before that part of the page can be taken over.
    wasm_bindgen_futures::spawn_local(async {
        leptos::mount::hydrate_from_async(leptos::tachys::dom::body(), klaxon_app::App)
            .await
            .forget();
        klaxon_app::hydration_finished();
    });
}
