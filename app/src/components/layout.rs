//! The frame of every signed-in page: top bar, content, bottom navigation. Pages below it
//! render only for a signed-in user; anyone else is sent to sign in and brought back.

use crate::api::session::current_user;
use crate::api::{load, Loaded};
use crate::components::live::provide_live;
use crate::components::loaded::{Failed, Loading};
use crate::components::nav::BottomNav;
use crate::paths::sign_in_url;
use klaxon_domain::account::Me;
use leptos::prelude::*;
use leptos_router::components::{Outlet, Redirect};
use leptos_router::hooks::use_location;

/// The signed-in user as loaded by the shell, shared with the pages inside it.
#[derive(Clone, Copy)]
pub struct SessionUser(pub Loaded<Option<Me>>);

/// The shell's copy of the signed-in user (loaded once per visit).
pub fn use_session_user() -> Loaded<Option<Me>> {
    expect_context::<SessionUser>().0
}

#[component]
pub fn SignedInShell() -> impl IntoView {
    let location = use_location();
    let me = load(|| (), |_| current_user());
    provide_context(SessionUser(me));

    // A `Transition`, not a `Suspense`: pages read their loads in memos under this boundary too,
    // and a `Suspense` would take the whole frame away (top bar, page, navigation) each time one
    // of them reloads, say when the live stream opens, and draw it again: a blink, a layout
    // shift and a new largest paint. The "Loading" line is for the first load only.
    view! {
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                match me.await {
                    Ok(Some(me)) => view! { <Frame me><Outlet /></Frame> }.into_any(),
                    Ok(None) => {
                        let path = location.pathname.get_untracked();
                        let query = location.search.get_untracked();
                        let here = if query.is_empty() { path } else { format!("{path}?{query}") };
                        view! { <Redirect path=sign_in_url(&here) /> }.into_any()
                    }
                    Err(e) => view! {
                        <main class="content">
                            <h1>"Klaxon is not answering"</h1>
                            <Failed error=e />
                        </main>
                    }
                    .into_any(),
                }
            })}
        </Transition>
    }
}

/// Top bar, the page, and the bottom navigation; the tab's live-update stream.
#[component]
pub fn Frame(me: Me, children: Children) -> impl IntoView {
    provide_live();
    provide_context(crate::components::text::ViewerZone(me.time_zone.clone()));
    provide_context(crate::components::form::OpenFolds::default());
    view! {
        <header class="topbar">
            <a class="brand" href="/">"Klaxon"</a>
            <span class="who">{me.user.username.clone()}</span>
        </header>
        <main class="content">{children()}</main>
        <BottomNav is_admin=me.user.is_admin />
    }
}
