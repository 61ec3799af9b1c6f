//! Inline SVG icons drawn by the app (no icon fonts or external images). Decorative: the
//! text label next to each carries the meaning.

use leptos::prelude::*;

#[derive(Clone, Copy)]
pub enum IconKind {
    Incidents,
    Schedule,
    Teams,
    Me,
    Admin,
}

impl IconKind {
    fn path(self) -> &'static str {
        match self {
            // A bell.
            IconKind::Incidents => "M12 3a6 6 0 0 0-6 6v4l-2 3h16l-2-3V9a6 6 0 0 0-6-6zM10 19a2 2 0 0 0 4 0",
            // A calendar page.
            IconKind::Schedule => "M4 6h16v14H4zM4 10h16M8 3v5M16 3v5",
            // Two people.
            IconKind::Teams => "M9 11a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM3 20a6 6 0 0 1 12 0M16 5a3 3 0 0 1 0 6M18 14a6 6 0 0 1 3 6",
            // One person.
            IconKind::Me => "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21a8 8 0 0 1 16 0",
            // A shield.
            IconKind::Admin => "M12 3l8 3v6c0 5-3.5 8-8 9-4.5-1-8-4-8-9V6z",
        }
    }
}

#[component]
pub fn Icon(kind: IconKind) -> impl IntoView {
    view! {
        <svg class="icon" viewBox="0 0 24 24" width="24" height="24" aria-hidden="true" focusable="false">
            <path d=kind.path() fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" />
        </svg>
    }
}
