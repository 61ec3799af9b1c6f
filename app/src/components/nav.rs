//! The bottom navigation bar: within thumb reach on a phone.

use crate::components::icons::{Icon, IconKind};
use leptos::prelude::*;
use leptos_router::components::A;

#[component]
pub fn BottomNav(is_admin: bool) -> impl IntoView {
    view! {
        <nav class="bottom-nav" aria-label="Main">
            <ul>
                <li><A href="/" exact=true><Icon kind=IconKind::Incidents />"Incidents"</A></li>
                <li><A href="/schedule"><Icon kind=IconKind::Schedule />"Schedule"</A></li>
                <li><A href="/teams"><Icon kind=IconKind::Teams />"Teams"</A></li>
                <li><A href="/me"><Icon kind=IconKind::Me />"Me"</A></li>
                {is_admin.then(|| view! { <li><A href="/admin"><Icon kind=IconKind::Admin />"Admin"</A></li> })}
            </ul>
        </nav>
    }
}
