//! A team's maintenance windows on the team page: when paging is paused, and the owner's forms to
//! start, plan and end a window.

use crate::api::load;
use crate::api::maintenance::{list_maintenance, EndMaintenance, StartMaintenance};
use crate::components::form::{clear_on_success, failed, ActionError, Fold};
use crate::components::loaded::WhenLoaded;
use crate::components::text::{when_in, ViewerZone};
use klaxon_domain::maintenance::Maintenance;
use leptos::prelude::*;

#[component]
pub fn MaintenanceWindows(team_id: Signal<i64>, is_owner: Signal<bool>) -> impl IntoView {
    let start = ServerAction::<StartMaintenance>::new();
    let end = ServerAction::<EndMaintenance>::new();
    let team_changes = crate::components::live::use_team_changes();
    let list = load(
        move || {
            (
                team_id.get(),
                start.version().get() + end.version().get() + team_changes(),
            )
        },
        |(team, _)| list_maintenance(team),
    );
    let sent = clear_on_success(start);
    view! {
        <section class="card" aria-labelledby="maintenance-title">
            <h2 id="maintenance-title">"Maintenance"</h2>
            <p class="hint">
                "During a window, alerts are kept and incidents open, but nobody is paged. "
                "What would have been paged waits on the incident's timeline and goes when the window ends, if the incident is still unacknowledged."
            </p>
            <WhenLoaded resource=list let:listed>
                {let zone = listed.time_zone.clone();
                let items = listed.windows;
                if items.is_empty() {
                    view! { <p class="empty">"No maintenance planned."</p> }.into_any()
                } else {
                    view! {
                        <ul class="list windows">
                            {items.into_iter().map(|w| view! { <WindowRow window=w zone=zone.clone() is_owner end /> }).collect_view()}
                        </ul>
                    }
                    .into_any()
                }}
            </WhenLoaded>
            <ActionError action=end />
            <Fold key="new-window" class="inner" hidden=move || !is_owner.get() open=move || failed(start)>
                <summary>"Start or plan a window"</summary>
                <ActionForm action=start node_ref=sent attr:class="stack">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <label for="maintenance-duration">"How long"</label>
                    <input id="maintenance-duration" name="duration" type="text" required value="1h"
                        autocapitalize="off" aria-describedby="maintenance-duration-hint" />
                    <p id="maintenance-duration-hint" class="hint">"5m to 24h, e.g. 30m, 2h or 1h30m."</p>
                    <label for="maintenance-start">"Starts (the team's time)"</label>
                    <input id="maintenance-start" name="starts_at" type="datetime-local" aria-describedby="maintenance-start-hint" />
                    <p id="maintenance-start-hint" class="hint">"Leave empty to start now."</p>
                    <ActionError action=start />
                    <button type="submit" class="primary" disabled=move || start.pending().get()>"Pause paging"</button>
                </ActionForm>
            </Fold>
        </section>
    }
}

#[component]
fn WindowRow(
    window: Maintenance,
    /// The team's zone: the window is shown in it, and in the viewer's when that differs.
    zone: String,
    is_owner: Signal<bool>,
    end: ServerAction<EndMaintenance>,
) -> impl IntoView {
    // "On now" is the server's answer at load time: the list reloads when a window changes.
    let at = |z: &str| {
        format!(
            "{} to {}",
            when_in(window.starts_at, Some(z)),
            when_in(window.ends_at, Some(z))
        )
    };
    let mut text = at(&zone);
    let viewer = use_context::<ViewerZone>().and_then(|z| z.0);
    let viewer = viewer.as_deref().unwrap_or("UTC");
    if viewer != zone {
        text.push_str(&format!(" (your time: {})", at(viewer)));
    }
    view! {
        <li class="row">
            <span class="row-main">
                <strong>"Paging paused"</strong>
                <span class="meta">{text}</span>
            </span>
            <ActionForm action=end attr:hidden=move || !is_owner.get()>
                <input type="hidden" name="team_id" value=window.team_id />
                <input type="hidden" name="id" value=window.id />
                <button type="submit" class="secondary">"End now"</button>
            </ActionForm>
        </li>
    }
}
