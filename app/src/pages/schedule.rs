//! Who is on call. The calendar arrives with schedules.

use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn SchedulePage() -> impl IntoView {
    view! {
        <Title text="Schedule" />
        <h1>"Schedule"</h1>
        <p class="empty">"No schedule yet."</p>
    }
}
