//! Severity and state at a glance: always a colour together with its word.

use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::incident::Incident;
use klaxon_domain::Timestamp;
use leptos::prelude::*;

#[component]
pub fn SeverityBadge(severity: Severity) -> impl IntoView {
    let name = severity.as_str();
    view! {
        <span class=format!("sev sev-{name}")>
            <span class="sev-dot" aria-hidden="true"></span>
            {name}
        </span>
    }
    .into_any()
}

#[component]
pub fn StateChip(state: IncidentState) -> impl IntoView {
    let name = state.as_str();
    view! { <span class=format!("chip state state-{name}")>{name}</span> }
}

/// True while the incident is snoozed at `now`.
pub fn snoozed(incident: &Incident, now: Timestamp) -> bool {
    incident.state.is_open() && incident.snoozed_until.is_some_and(|t| t.0 > now.0)
}

/// Severity, state and, while it lasts, "snoozed".
#[component]
pub fn IncidentBadges(incident: Incident, now: Timestamp) -> impl IntoView {
    let is_snoozed = snoozed(&incident, now);
    view! {
        <span class="badges">
            <SeverityBadge severity=incident.severity />
            <StateChip state=incident.state />
            {is_snoozed.then(|| view! { <span class="chip state state-snoozed">"snoozed"</span> })}
        </span>
    }
    .into_any()
}
