//! Instance administration. Only the navigation entry depends on the admin flag; every
//! operation checks rights again on the server.

use crate::components::layout::use_session_user;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn AdminPage() -> impl IntoView {
    let me = use_session_user();
    view! {
        <Title text="Admin" />
        <Suspense>
            {move || Suspend::new(async move {
                let is_admin = matches!(me.await, Ok(Some(ref m)) if m.user.is_admin);
                if is_admin {
                    view! {
                        <h1>"Administration"</h1>
                        <p class="empty">"Users, teams and settings will be managed here."</p>
                    }
                    .into_any()
                } else {
                    view! {
                        <h1>"Administration"</h1>
                        <p>"This page is for Klaxon administrators only. Ask one if you need a change made."</p>
                    }
                    .into_any()
                }
            })}
        </Suspense>
    }
}
