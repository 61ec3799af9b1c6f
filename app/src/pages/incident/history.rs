//! What happened: notes, who was paged, the timeline, the alerts, and how it was fixed last
//! time.

use super::Actions;
use crate::api::incidents::PinResolutionNote;
use crate::components::form::ActionError;
use crate::components::text::{sentence, span, when, Linked};
use klaxon_domain::alerting::AlertStatus;
use klaxon_domain::incident::{Alert, Note, TimelineEntry};
use klaxon_domain::incident_page::{IncidentView, SimilarIncident};
use klaxon_domain::paging::{Page, PageKind, PageStatus};
use klaxon_domain::Timestamp;
use leptos::prelude::*;

/// Notes, who was paged, the timeline, the alerts, and how it was fixed last time.
#[component]
pub(super) fn History(data: IncidentView, actions: Actions) -> impl IntoView {
    let id = data.detail.incident.id;
    let IncidentView {
        detail,
        similar,
        now,
        ..
    } = data;
    view! {
        <section aria-labelledby="notes-title">
            <h2 id="notes-title">"Notes"</h2>
            <Notes notes=detail.notes incident_id=id pin=actions.pin />
        </section>
        <section aria-labelledby="paging-title">
            <h2 id="paging-title">"Paging"</h2>
            <Paging pages=detail.pages now />
        </section>
        <section aria-labelledby="timeline-title">
            <h2 id="timeline-title">"Timeline"</h2>
            <Timeline entries=detail.timeline />
        </section>
        <section aria-labelledby="alerts-title">
            <h2 id="alerts-title">{format!("Alerts ({})", detail.alerts.len())}</h2>
            <Alerts alerts=detail.alerts />
        </section>
        <section aria-labelledby="similar-title">
            <h2 id="similar-title">"How it was fixed last time"</h2>
            <Similar similar />
        </section>
    }
    .into_any()
}

#[component]
fn Notes(
    notes: Vec<Note>,
    incident_id: i64,
    pin: ServerAction<PinResolutionNote>,
) -> impl IntoView {
    if notes.is_empty() {
        return view! { <p class="empty">"No notes yet."</p> }.into_any();
    }
    view! {
        <ul class="list notes">
            {notes
                .into_iter()
                .map(|n| {
                    let by = n.author.clone().unwrap_or_else(|| "Klaxon".to_string());
                    view! {
                        <li class="note">
                            <p class="meta">
                                {format!("{by} · {}", when(n.created_at))}
                                {n.resolution.then(|| view! { <span class="chip chip-fix">"the fix"</span> })}
                            </p>
                            <p class="note-text"><Linked text=n.text.clone() /></p>
                            {(!n.resolution).then(|| view! {
                                <ActionForm action=pin>
                                    <input type="hidden" name="id" value=incident_id />
                                    <input type="hidden" name="note_id" value=n.id />
                                    <button type="submit" class="link-button">"Mark as the fix"</button>
                                </ActionForm>
                            })}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
        <ActionError action=pin />
    }
    .into_any()
}

/// Who was paged, why, and whether it reached them: one row per page, oldest first.
#[component]
fn Paging(pages: Vec<Page>, now: Timestamp) -> impl IntoView {
    if pages.is_empty() {
        return view! { <p class="empty">"Nobody has been paged for this incident."</p> }
            .into_any();
    }
    view! {
        <ul class="list pages">
            {pages.into_iter().map(|p| view! { <PageRow page=p now /> }).collect_view()}
        </ul>
    }
    .into_any()
}

#[component]
fn PageRow(page: Page, now: Timestamp) -> impl IntoView {
    let p = page;
    let who = match (&p.recipient, &p.topic) {
        (Some(user), _) => match &p.via {
            Some(via) => format!("{user} · {via}"),
            None => user.clone(),
        },
        (None, Some(topic)) => format!("Fallback topic {topic}"),
        (None, None) => "Fallback topic".to_string(),
    };
    let kind = match p.kind {
        PageKind::Opening => "Opening page",
        PageKind::Reminder => "Reminder",
        PageKind::Escalation => "Escalation",
        PageKind::Fallback => "Fallback",
        PageKind::AllClear => "All clear",
        PageKind::Handoff => "Hand-off notice",
    };
    let error = p.last_error.clone().unwrap_or_default();
    let tries = match p.attempts {
        1 => "1 attempt".to_string(),
        n => format!("{n} attempts"),
    };
    // (class, chip word, when, what happened in a sentence)
    let (class, word, at, detail) = match p.status {
        PageStatus::Sent => (
            "sent",
            "delivered",
            format!("sent {}", when(p.sent_at.unwrap_or(p.created_at))),
            None,
        ),
        PageStatus::Pending if p.attempts == 0 => (
            "pending",
            "pending",
            format!("queued {}", when(p.created_at)),
            Some(match p.next_attempt_at {
                Some(t) if t.0 > now.0 => format!("Goes in {} ({}).", span(t.0 - now.0), when(t)),
                _ => "Waiting to be sent.".to_string(),
            }),
        ),
        PageStatus::Pending => {
            let next = match p.next_attempt_at {
                Some(t) if t.0 > now.0 => {
                    format!("Next try in {} ({}).", span(t.0 - now.0), when(t))
                }
                _ => "Next try now.".to_string(),
            };
            (
                "retrying",
                "retrying",
                format!("queued {}", when(p.created_at)),
                Some(format!("Failed after {tries}: {error}. {next}")),
            )
        }
        PageStatus::Failed => (
            "failed",
            "failed",
            format!("queued {}", when(p.created_at)),
            Some(if p.attempts <= 1 {
                format!("Failed: {error}.")
            } else {
                format!("Gave up after {tries}: {error}.")
            }),
        ),
        PageStatus::Cancelled => (
            "cancelled",
            "cancelled",
            format!("queued {}", when(p.created_at)),
            (!error.is_empty()).then(|| sentence(&error)),
        ),
    };
    view! {
        <li class=format!("page page-{class}")>
            <div class="row">
                <span class="row-main">
                    <strong>{who}</strong>
                    <span class="meta">{format!("{kind} · {at}")}</span>
                    {detail.map(|d| view! { <span class="page-detail">{d}</span> })}
                </span>
                <span class=format!("chip page-status page-status-{class}")>{word}</span>
            </div>
        </li>
    }
    .into_any()
}

#[component]
fn Timeline(entries: Vec<TimelineEntry>) -> impl IntoView {
    view! {
        <ol class="timeline">
            {entries
                .into_iter()
                .map(|e| {
                    let who = e.actor.clone().map(|a| format!("{a}: ")).unwrap_or_default();
                    view! {
                        <li class=format!("tl tl-{}", e.kind.as_str())>
                            <time datetime=e.at.to_rfc3339()>{when(e.at)}</time>
                            <span>{who}{e.text.clone()}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
    }
    .into_any()
}

#[component]
fn Alerts(alerts: Vec<Alert>) -> impl IntoView {
    view! {
        <ul class="list alerts">
            {alerts
                .into_iter()
                .map(|a| {
                    let name = a.labels.get("alertname").cloned().unwrap_or_else(|| "alert".into());
                    let place = a.labels.get("instance").or_else(|| a.labels.get("service")).cloned();
                    let summary = a.annotations.get("summary").cloned();
                    let status = a.status.as_str();
                    let times = match (a.status, a.ends_at) {
                        (AlertStatus::Resolved, Some(end)) => format!("{} to {}", when(a.starts_at), when(end)),
                        _ => format!("Firing since {}", when(a.starts_at)),
                    };
                    view! {
                        <li class="row">
                            <span class="row-main">
                                <strong>{name}{place.map(|p| format!(" · {p}"))}</strong>
                                {summary.map(|s| view! { <span><Linked text=s /></span> })}
                                <span class="meta">{times}</span>
                            </span>
                            <span class=format!("chip alert-{status}")>{status}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

#[component]
fn Similar(similar: Vec<SimilarIncident>) -> impl IntoView {
    if similar.is_empty() {
        return view! { <p class="empty">"No earlier incident like this one has notes."</p> }
            .into_any();
    }
    view! {
        <ul class="list similar">
            {similar
                .into_iter()
                .map(|s| {
                    let mut notes = s.notes.clone();
                    notes.sort_by_key(|n| !n.resolution);
                    let resolved = s.incident.resolved_at.map(when).unwrap_or_default();
                    view! {
                        <li class="similar-item">
                            <a href=format!("/incidents/{}", s.incident.id)>{s.incident.title.clone()}</a>
                            <span class="meta block">{format!("Resolved {resolved}")}</span>
                            <ul class="plain">
                                {notes
                                    .into_iter()
                                    .map(|n| view! {
                                        <li class=if n.resolution { "fix" } else { "" }>
                                            {n.resolution.then(|| view! { <span class="chip chip-fix">"the fix"</span> " " })}
                                            {n.text}
                                        </li>
                                    })
                                    .collect_view()}
                            </ul>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}
