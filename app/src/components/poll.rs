//! Live pages by polling: a one-second clock that runs only in the browser, a refresh round
//! every few seconds, and the line saying how fresh the page is.

use leptos::prelude::*;
use std::time::Duration;

/// The clock of one polling page.
#[derive(Clone, Copy)]
pub struct Poll {
    /// Seconds since the page became interactive; stays 0 on the server.
    seconds: RwSignal<u64>,
    every: u64,
    /// `seconds` at the last successful load.
    loaded_at: RwSignal<u64>,
    /// True while the last refresh failed.
    failing: RwSignal<bool>,
}

impl Poll {
    /// Changes every `every` seconds: a resource keyed on it reloads that often.
    pub fn round(&self) -> u64 {
        self.seconds.get() / self.every
    }
    /// Records a successful load.
    pub fn loaded(&self) {
        self.loaded_at.set(self.seconds.get_untracked());
        self.failing.set(false);
    }
    /// Records a failed refresh.
    pub fn failed(&self) {
        self.failing.set(true);
    }
}

/// Starts a clock that ticks once a second after hydration (effects never run on the server).
pub fn use_poll(every_seconds: u64) -> Poll {
    let poll = Poll {
        seconds: RwSignal::new(0),
        every: every_seconds.max(1),
        loaded_at: RwSignal::new(0),
        failing: RwSignal::new(false),
    };
    let seconds = poll.seconds;
    Effect::new(move |_| {
        if let Ok(handle) =
            set_interval_with_handle(move || seconds.update(|s| *s += 1), Duration::from_secs(1))
        {
            on_cleanup(move || handle.clear());
        }
    });
    poll
}

/// "Updated 7 s ago", and, while refreshing fails, an announced notice that the page is stale.
/// The age itself is not a live region: it changes every second.
#[component]
pub fn Freshness(poll: Poll) -> impl IntoView {
    let age = move || poll.seconds.get().saturating_sub(poll.loaded_at.get());
    let text = move || match age() {
        0..=2 => "Updated just now".to_string(),
        a => format!("Updated {} ago", crate::components::text::span(a as i64)),
    };
    view! {
        <div class="freshness">
            <p class="updated">{text}</p>
            <p class="stale" role="alert" hidden=move || !poll.failing.get()>
                "Could not refresh, so this may be out of date. Check the connection; Klaxon keeps trying."
            </p>
        </div>
    }
}
