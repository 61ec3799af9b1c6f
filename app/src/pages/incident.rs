//! One incident, answering in order: what is broken, since when, who has it, what to do,
//! what happened, and how it was fixed last time. Every action is a form that also works
//! before the page is interactive; the page refreshes itself while open.

use crate::api::error_text;
use crate::api::incidents::{
    incident_page, Acknowledge, AddNote, Assign, IncidentPageData, PinResolutionNote, Resolve,
    SetArchived, Snooze, Unsnooze,
};
use crate::components::form::{failed, ActionError};
use crate::components::poll::{use_poll, Freshness};
use crate::components::severity::{snoozed, IncidentBadges};
use crate::components::text::{ago, sentence, span, web_link, when};
use klaxon_domain::alerting::{AlertStatus, IncidentState};
use klaxon_domain::incident::{Alert, Incident, Note, SimilarIncident, TimelineEntry};
use klaxon_domain::paging::{Page, PageKind, PageStatus};
use klaxon_domain::team::Member;
use klaxon_domain::Timestamp;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

/// Seconds between refreshes.
const POLL_SECONDS: u64 = 10;

/// Labels worth showing first, in this order, when the alerts carry them.
const KEY_LABELS: &[&str] = &[
    "alertname",
    "service",
    "job",
    "instance",
    "namespace",
    "cluster",
    "pod",
    "environment",
    "env",
    "region",
];

/// Snooze choices: (value sent, words on the button).
const SNOOZES: &[(&str, &str)] = &[("30m", "30 min"), ("1h", "1 hour"), ("4h", "4 hours")];

/// The actions of the page; any of them finishing reloads what the page shows.
#[derive(Clone, Copy)]
struct Actions {
    ack: ServerAction<Acknowledge>,
    resolve: ServerAction<Resolve>,
    snooze: ServerAction<Snooze>,
    unsnooze: ServerAction<Unsnooze>,
    assign: ServerAction<Assign>,
    note: ServerAction<AddNote>,
    pin: ServerAction<PinResolutionNote>,
    archive: ServerAction<SetArchived>,
}

impl Actions {
    fn new() -> Self {
        Actions {
            ack: ServerAction::new(),
            resolve: ServerAction::new(),
            snooze: ServerAction::new(),
            unsnooze: ServerAction::new(),
            assign: ServerAction::new(),
            note: ServerAction::new(),
            pin: ServerAction::new(),
            archive: ServerAction::new(),
        }
    }
    fn changes(&self) -> usize {
        self.ack.version().get()
            + self.resolve.version().get()
            + self.snooze.version().get()
            + self.unsnooze.version().get()
            + self.assign.version().get()
            + self.note.version().get()
            + self.pin.version().get()
            + self.archive.version().get()
    }
}

#[component]
pub fn IncidentPage() -> impl IntoView {
    let params = use_params_map();
    // A malformed id is asked for anyway: the server answers it like any unknown incident.
    let id = move || params.with(|p| p.get("id").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0));
    let actions = Actions::new();
    let poll = use_poll(POLL_SECONDS);
    let page = Resource::new(
        move || (id(), actions.changes(), poll.round()),
        |(id, _, _)| incident_page(id),
    );
    // The forms load once per change made here, not on every refresh, so a half-typed note
    // or an open menu survives the polling.
    let controls = Resource::new(
        move || (id(), actions.changes()),
        |(id, _)| incident_page(id),
    );
    let last = RwSignal::new(None::<IncidentPageData>);
    // The incident as last seen by either load: decides which controls apply.
    let live = Memo::new(move |_| {
        page.get()
            .and_then(Result::ok)
            .or_else(|| controls.get().and_then(Result::ok))
            .map(|d| (d.detail.incident, d.now))
    });

    view! {
        <p class="back"><a href="/">"← Incidents"</a></p>
        <Transition fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let data = match page.await {
                    Ok(d) => {
                        poll.loaded();
                        last.set(Some(d.clone()));
                        d
                    }
                    Err(e) => {
                        poll.failed();
                        match last.get_untracked() {
                            Some(d) => d,
                            None => return view! {
                                <Title text="Incident" />
                                <h1>"Incident"</h1>
                                <p class="error" role="alert">{error_text(&e)}</p>
                            }
                            .into_any(),
                        }
                    }
                };
                view! { <Summary data /> }.into_any()
            })}
        </Transition>
        <Freshness poll />
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                controls.await.ok().map(|d| view! { <Controls data=d actions live /> })
            })}
        </Transition>
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                let data = match page.await {
                    Ok(d) => d,
                    Err(_) => last.get_untracked()?,
                };
                Some(view! { <History data actions /> })
            })}
        </Transition>
    }
    .into_any()
}

/// What is broken, since when, who has it.
#[component]
fn Summary(data: IncidentPageData) -> impl IntoView {
    let i = data.detail.incident.clone();
    let now = data.now;
    let labels = key_labels(&data.detail.alerts);
    let first_alert = data.detail.alerts.first();
    // The title usually carries the summary already; the description says more.
    let summary = first_alert.and_then(|a| {
        a.annotations
            .get("description")
            .or_else(|| a.annotations.get("summary"))
            .filter(|s| !i.title.contains(s.as_str()))
            .cloned()
    });
    let runbook = first_alert
        .and_then(|a| a.annotations.get("runbook_url"))
        .and_then(|u| web_link(u))
        .map(str::to_string);
    // Alertmanager may have held the alert before sending it: the first alert's start counts.
    let started = data
        .detail
        .alerts
        .iter()
        .map(|a| a.starts_at)
        .chain([i.created_at])
        .min()
        .unwrap_or(i.created_at);
    let since = match i.resolved_at {
        Some(r) => format!(
            "{} · resolved after {}",
            when(started),
            span(r.0 - started.0)
        ),
        None => format!("{} ({})", ago(now, started), when(started)),
    };
    let has_it = match (&i.assignee, i.assignee_id == Some(data.me)) {
        (_, true) => "You".to_string(),
        (Some(name), false) => name.clone(),
        (None, false) => "Nobody yet".to_string(),
    };
    let acked = match (&i.acknowledged_by, i.acknowledged_at) {
        (Some(by), Some(at)) => Some(format!("Acknowledged by {by}, {}", ago(now, at))),
        (None, Some(at)) => Some(format!("Acknowledged {}", ago(now, at))),
        _ => None,
    };
    let snooze_text = snoozed(&i, now)
        .then(|| {
            i.snoozed_until
                .map(|t| format!("Snoozed until {}", when(t)))
        })
        .flatten();
    view! {
        <Title text=i.title.clone() />
        <header class="incident-head" data-state=i.state.as_str()>
            <IncidentBadges incident=i.clone() now />
            <h1>{i.title.clone()}</h1>
            {summary.map(|s| view! { <p class="summary">{s}</p> })}
            {runbook.map(|u| view! { <p><a href=u rel="noreferrer noopener" target="_blank">"Runbook"</a></p> })}
        </header>
        {(!labels.is_empty()).then(|| view! {
            <dl class="labels" aria-label="Labels">
                {labels
                    .into_iter()
                    .map(|(k, v)| view! { <div><dt>{k}</dt><dd>{v}</dd></div> })
                    .collect_view()}
            </dl>
        })}
        <dl class="facts">
            <div><dt>"Since"</dt><dd>{since}</dd></div>
            <div>
                <dt>"Who has it"</dt>
                <dd>
                    {has_it}
                    {acked.map(|a| view! { <span class="meta block">{a}</span> })}
                    {snooze_text.map(|s| view! { <span class="meta block">{s}</span> })}
                </dd>
            </div>
            <div><dt>"Team"</dt><dd><a href=format!("/teams/{}", i.team_id)>{data.team_name.clone()}</a></dd></div>
        </dl>
    }
    .into_any()
}

/// Distinct values of the labels that matter, across the incident's alerts.
fn key_labels(alerts: &[Alert]) -> Vec<(String, String)> {
    KEY_LABELS
        .iter()
        .filter_map(|k| {
            let mut values: Vec<&str> = Vec::new();
            for a in alerts {
                if let Some(v) = a.labels.get(*k) {
                    if !values.contains(&v.as_str()) {
                        values.push(v);
                    }
                }
            }
            (!values.is_empty()).then(|| (k.to_string(), values.join(", ")))
        })
        .collect()
}

/// Snooze, assign, add a note, archive; and the action bar with Acknowledge and Resolve.
#[component]
fn Controls(
    data: IncidentPageData,
    actions: Actions,
    live: Memo<Option<(Incident, Timestamp)>>,
) -> impl IntoView {
    let id = data.detail.incident.id;
    let start = (data.detail.incident.clone(), data.now);
    let current = Signal::derive(move || live.get().unwrap_or_else(|| start.clone()));
    let state = move || current.with(|(i, _)| i.state);
    let is_open = move || state().is_open();
    let is_snoozed = move || current.with(|(i, now)| snoozed(i, *now));
    let archived = move || current.with(|(i, _)| i.archived);
    let members = data.members.clone();
    let me = data.me;
    let Actions {
        ack,
        resolve,
        snooze,
        unsnooze,
        assign,
        note,
        archive,
        ..
    } = actions;

    view! {
        <section class="controls" aria-label="More actions">
            <details class="card" hidden=move || !is_open() open=move || failed(snooze) || failed(unsnooze)>
                <summary>"Snooze"</summary>
                <p class="hint">"Pages stop until then; the incident stays open."</p>
                <ActionForm action=snooze attr:class="choices">
                    <input type="hidden" name="id" value=id />
                    {SNOOZES
                        .iter()
                        .map(|(value, words)| view! {
                            <button type="submit" class="secondary" name="duration" value=*value aria-label=format!("Snooze for {words}")>
                                {*words}
                            </button>
                        })
                        .collect_view()}
                </ActionForm>
                <ActionError action=snooze />
                <ActionForm action=unsnooze attr:class="stack">
                    <input type="hidden" name="id" value=id />
                    <button type="submit" class="secondary wide" hidden=move || !is_snoozed()>"Wake it now"</button>
                </ActionForm>
                <ActionError action=unsnooze />
            </details>
            <details class="card" hidden=move || !is_open() open=move || failed(assign)>
                <summary>"Assign"</summary>
                <ActionForm action=assign attr:class="stack">
                    <input type="hidden" name="id" value=id />
                    <label for="assignee">"Give it to"</label>
                    <select id="assignee" name="user_id">
                        {members
                            .into_iter()
                            .map(|m: Member| {
                                let label = if m.user_id == me { format!("{} (you)", m.username) } else { m.username };
                                view! { <option value=m.user_id selected=m.user_id == me>{label}</option> }
                            })
                            .collect_view()}
                    </select>
                    <ActionError action=assign />
                    <button type="submit" class="primary" disabled=move || assign.pending().get()>"Assign"</button>
                </ActionForm>
            </details>
            <details class="card" open=move || failed(note)>
                <summary>"Add a note"</summary>
                <ActionForm action=note attr:class="stack">
                    <input type="hidden" name="id" value=id />
                    <label for="note-text">"Note"</label>
                    <textarea id="note-text" name="text" rows="3" required></textarea>
                    <label class="check">
                        <input type="checkbox" name="resolution" value="true" />
                        "This is what fixed it"
                    </label>
                    <ActionError action=note />
                    <button type="submit" class="primary" disabled=move || note.pending().get()>"Add note"</button>
                </ActionForm>
            </details>
            <ActionForm action=archive attr:class="archive">
                <input type="hidden" name="id" value=id />
                <input type="hidden" name="archived" value=move || (!archived()).to_string() />
                <button type="submit" class="secondary wide" hidden=is_open>
                    {move || if archived() { "Unarchive" } else { "Archive" }}
                </button>
                <ActionError action=archive />
            </ActionForm>
        </section>
        <div class="action-space" aria-hidden="true" hidden=move || !is_open()></div>
        <section class="action-bar" aria-label="Actions" hidden=move || !is_open()>
            <ActionError action=ack />
            <div class="action-row">
                <ActionForm action=ack attr:class="ack">
                    <input type="hidden" name="id" value=id />
                    <button type="submit" class="primary big" hidden=move || state() != IncidentState::Triggered disabled=move || ack.pending().get()>
                        "Acknowledge"
                    </button>
                </ActionForm>
                <details class="resolve" open=move || failed(resolve)>
                    <summary class="big">"Resolve"</summary>
                    <ActionForm action=resolve attr:class="stack">
                        <input type="hidden" name="id" value=id />
                        <label for="resolution">"What fixed it?"</label>
                        <textarea id="resolution" name="resolution" rows="3" aria-describedby="resolution-hint"></textarea>
                        <p id="resolution-hint" class="hint">"Optional. Whoever gets this alert next will see it."</p>
                        <ActionError action=resolve />
                        <button type="submit" class="primary big" disabled=move || resolve.pending().get()>"Resolve incident"</button>
                    </ActionForm>
                </details>
            </div>
        </section>
    }
    .into_any()
}

/// Notes, who was paged, the timeline, the alerts, and how it was fixed last time.
#[component]
fn History(data: IncidentPageData, actions: Actions) -> impl IntoView {
    let id = data.detail.incident.id;
    let IncidentPageData {
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
                            <p class="note-text">{n.text.clone()}</p>
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
        (Some(user), _) => user.clone(),
        (None, Some(topic)) => format!("Fallback topic {topic}"),
        (None, None) => "Fallback topic".to_string(),
    };
    let kind = match p.kind {
        PageKind::Opening => "Opening page",
        PageKind::Reminder => "Reminder",
        PageKind::Escalation => "Escalation",
        PageKind::Fallback => "Fallback",
        PageKind::AllClear => "All clear",
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
            Some("Waiting to be sent.".to_string()),
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
            Some(format!("Gave up after {tries}: {error}.")),
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
                        <li class=format!("tl tl-{}", e.kind)>
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
                                {summary.map(|s| view! { <span>{s}</span> })}
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
