//! One incident, answering in order: what is broken, since when, who has it, what to do,
//! what happened, and how it was fixed last time. Every action is a form that also works
//! before the page is interactive; the page reloads itself when the incident changes.

mod controls;
mod history;

use crate::api::incidents::{
    incident_page, Acknowledge, AddNote, Assign, ExpireSilence, PinResolutionNote, Resolve,
    SetArchived, SilenceIncident, Snooze, Unsnooze,
};
use crate::api::load;
use crate::components::live::{use_page_live, Freshness};
use crate::components::loaded::{Failed, Loading};
use crate::components::severity::{snoozed, IncidentBadges};
use crate::components::text::{ago, span, web_link, when, Linked};
use controls::{Announcer, Controls};
use history::History;
use klaxon_domain::incident::Alert;
use klaxon_domain::incident_page::{IncidentView, NextStep, SimilarIncident};
use klaxon_domain::live::EventKind;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

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

/// The actions of the page; any of them finishing reloads what the page shows.
#[derive(Clone, Copy)]
pub(super) struct Actions {
    pub ack: ServerAction<Acknowledge>,
    pub resolve: ServerAction<Resolve>,
    pub snooze: ServerAction<Snooze>,
    pub unsnooze: ServerAction<Unsnooze>,
    pub assign: ServerAction<Assign>,
    pub note: ServerAction<AddNote>,
    pub pin: ServerAction<PinResolutionNote>,
    pub archive: ServerAction<SetArchived>,
    pub silence: ServerAction<SilenceIncident>,
    pub unsilence: ServerAction<ExpireSilence>,
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
            silence: ServerAction::new(),
            unsilence: ServerAction::new(),
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
            + self.silence.version().get()
            + self.unsilence.version().get()
    }
}

#[component]
pub fn IncidentPage() -> impl IntoView {
    let params = use_params_map();
    // A malformed id is asked for anyway: the server answers it like any unknown incident.
    let id = move || params.with(|p| p.get("id").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0));
    let actions = Actions::new();
    let updates = use_page_live(move |kind, e| kind == EventKind::Incident && e.id == id());
    let page = load(
        move || (id(), actions.changes(), updates.changes()),
        |(id, _, _)| incident_page(id),
    );
    // The forms load once per change made here, not on every live update, so a half-typed
    // note or an open menu survives another responder's changes.
    let controls = load(
        move || (id(), actions.changes()),
        |(id, _)| incident_page(id),
    );
    let last = RwSignal::new(None::<IncidentView>);
    let last_controls = RwSignal::new(None::<IncidentView>);
    // A failed load of the controls is tried again whenever the page's own load is (a live
    // update, the stream reopening, the retries while it fails).
    let controls_failed = RwSignal::new(false);
    Effect::new(move |seen: Option<u64>| {
        let now = updates.changes();
        if seen.is_some_and(|s| s != now) && controls_failed.get_untracked() {
            controls_failed.set(false);
            controls.refetch();
        }
        now
    });
    // What the server last said the caller may do, from either load: decides which
    // controls are shown.
    let live = Memo::new(move |_| {
        page.get()
            .and_then(Result::ok)
            .or_else(|| controls.get().and_then(Result::ok))
            .map(|d| d.may)
    });

    view! {
        <p class="back"><a href="/">"← Incidents"</a></p>
        <Announcer actions />
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                let data = match page.await {
                    Ok(d) => {
                        updates.loaded();
                        last.set(Some(d.clone()));
                        d
                    }
                    Err(e) => {
                        crate::components::loaded::page_not_found(&e);
                        match last.get_untracked() {
                            Some(d) => {
                                // Shown as it was, said to be old, and asked for again.
                                updates.failed();
                                d
                            }
                            None => return view! {
                                <Title text="Incident" />
                                <h1>"Incident"</h1>
                                <Failed error=e retry=move |_| page.refetch() />
                            }
                            .into_any(),
                        }
                    }
                };
                view! { <Summary data /> }.into_any()
            })}
        </Transition>
        <Freshness page=updates />
        // The controls never vanish: a failed load keeps the last ones on screen under the
        // sentence and a retry, and tries again with the page's own retries.
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match controls.await {
                    Ok(d) => {
                        last_controls.set(Some(d.clone()));
                        view! { <Controls data=d actions live /> }.into_any()
                    }
                    Err(e) => {
                        controls_failed.set(true);
                        // Without earlier controls the page's own sentence says it already.
                        last_controls.get_untracked().map(|d| view! {
                            <Failed error=e retry=move |_| controls.refetch() />
                            <Controls data=d actions live />
                        })
                        .into_any()
                    }
                }
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
fn Summary(data: IncidentView) -> impl IntoView {
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
    // The sender's graph of the alert (Alertmanager's `generatorURL`).
    let source = data
        .detail
        .alerts
        .iter()
        .find_map(|a| a.generator_url.as_deref().and_then(web_link))
        .map(str::to_string);
    let long_title = i.title.chars().count() > LONG_TITLE;
    let last_fix = last_fix(&data.similar);
    let my_name = data
        .assignable
        .iter()
        .find(|m| m.user_id == data.me)
        .map(|m| m.username.clone());
    let next = data
        .next
        .clone()
        .map(|n| next_words(&n, my_name.as_deref()));
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
    let silenced = data
        .detail
        .silence
        .as_ref()
        .map(|s| format!("Silenced in Alertmanager until {}", when(s.ends_at)));
    view! {
        <Title text=i.title.clone() />
        <header class="incident-head" data-state=i.state.as_str()>
            <IncidentBadges incident=i.clone() now />
            <h1 class="title">{i.title.clone()}</h1>
            {long_title.then(|| view! {
                <details class="full-title"><summary>"Full title"</summary><p>{i.title.clone()}</p></details>
            })}
            {summary.map(|s| view! { <p class="summary"><Linked text=s /></p> })}
            {(runbook.is_some() || source.is_some()).then(|| view! {
                <p class="source-links">
                    {runbook.map(|u| view! { <a href=u rel="noreferrer noopener" target="_blank">"Runbook"</a> })}
                    {source.map(|u| view! { <a href=u rel="noreferrer noopener" target="_blank">"Open in Prometheus"</a> })}
                </p>
            })}
        </header>
        {last_fix.map(|(href, head, text)| view! {
            <p class="last-fix"><a href=href>{head}</a>" "<Linked text /></p>
        })}
        <LabelList labels />
        <dl class="facts">
            <div><dt>"Since"</dt><dd>{since}</dd></div>
            <div>
                <dt>"Who has it"</dt>
                <dd>
                    {has_it}
                    {acked.map(|a| view! { <span class="meta block">{a}</span> })}
                    {snooze_text.map(|s| view! { <span class="meta block">{s}</span> })}
                    {silenced.map(|s| view! { <span class="meta block">{s}</span> })}
                </dd>
            </div>
            {next.map(|n| view! { <div><dt>"Next"</dt><dd class="next-step">{n}</dd></div> })}
            <div><dt>"Team"</dt><dd><a href=format!("/teams/{}", i.team_id)>{data.team_name.clone()}</a></dd></div>
        </dl>
        {i.resolved_at.is_some().then(|| view! {
            <p><a class="button" href=format!("/incidents/{}/review", i.id)>"Review it: what happened, what to follow up"</a></p>
        })}
        <ChangesBefore changes=data.detail.changes_before.clone() />
    }
    .into_any()
}

/// The labels that matter; a long value is cut to two lines, the whole of it one tap away, so
/// the facts below stay on the first screen.
#[component]
fn LabelList(labels: Vec<(String, String)>) -> impl IntoView {
    (!labels.is_empty()).then(|| {
        view! {
            <dl class="labels" aria-label="Labels">
                {labels
                    .into_iter()
                    .map(|(k, v)| {
                        let whole = (v.chars().count() > LONG_LABEL).then(|| v.clone());
                        view! {
                            <div>
                                <dt>{k.clone()}</dt>
                                <dd>
                                    <span class="label-value">{v}</span>
                                    {whole.map(|v| view! {
                                        <details class="full-title">
                                            <summary aria-label=format!("Whole value of {k}")>"Whole value"</summary>
                                            <p>{v}</p>
                                        </details>
                                    })}
                                </dd>
                            </div>
                        }
                    })
                    .collect_view()}
            </dl>
        }
    })
}

/// The team's reported changes (deploys, configuration) in the two hours before the incident
/// began: the first suspects.
#[component]
fn ChangesBefore(changes: Vec<klaxon_domain::change::Change>) -> impl IntoView {
    (!changes.is_empty()).then(|| {
        view! {
            <section class="changes-before" aria-labelledby="changes-before-title">
                <h2 id="changes-before-title">"Changes before it began"</h2>
                <ul class="list">
                    {changes
                        .into_iter()
                        .map(|c| {
                            let meta = match &c.source {
                                Some(source) => format!("{} · {source}", when(c.at)),
                                None => when(c.at),
                            };
                            let link = c.link.as_deref().and_then(web_link).map(str::to_string);
                            let text = c.link_text.clone().unwrap_or_else(|| "Details".into());
                            view! {
                                <li>
                                    <span class="row-main">
                                        <strong>{c.summary}</strong>
                                        <span class="meta">{meta}</span>
                                    </span>
                                    {link.map(|href| view! { <a href=href rel="noreferrer noopener" target="_blank">{text}</a> })}
                                </li>
                            }
                        })
                        .collect_view()}
                </ul>
            </section>
        }
    })
}

/// Titles longer than this are clamped to three lines, with the whole one a tap away.
const LONG_TITLE: usize = 90;
/// A label value longer than this is cut to two lines.
const LONG_LABEL: usize = 60;

/// "Last time (#2, fixed by ana):" and the fix, from the newest similar incident with a note
/// marked as the fix (else its newest note).
fn last_fix(similar: &[SimilarIncident]) -> Option<(String, String, String)> {
    let s = similar.first()?;
    let note = s
        .notes
        .iter()
        .rev()
        .find(|n| n.resolution)
        .or_else(|| s.notes.last())?;
    let by = note
        .author
        .as_deref()
        .map(|a| format!(", fixed by {a}"))
        .unwrap_or_default();
    Some((
        format!("/incidents/{}", s.incident.id),
        format!("Last time (#{}{by}):", s.incident.id),
        note.text.clone(),
    ))
}

/// What happens next, in words: "Escalates to level 2 (ana, bo) at 2026-11-28 03:42 UTC
/// unless acknowledged"; the reader (`me`, their username) is "you".
fn next_words(next: &NextStep, me: Option<&str>) -> String {
    let who = |name: &str| match Some(name) == me {
        true => "you".to_string(),
        false => name.to_string(),
    };
    match next {
        NextStep::Escalates { level, names, at } => {
            format!(
                "Escalates to level {level} — {} — at {} unless acknowledged",
                names.iter().map(|n| who(n)).collect::<Vec<_>>().join(", "),
                when(*at)
            )
        }
        NextStep::Fallback { topic, at } => format!(
            "The ladder runs out at {}: the fallback topic {topic} is paged unless acknowledged",
            when(*at)
        ),
        NextStep::Reminds {
            name: Some(name),
            at,
        } => format!(
            "Pages {} again at {} unless acknowledged",
            who(name),
            when(*at)
        ),
        NextStep::Reminds { name: None, at } => {
            format!("Paged again at {} unless acknowledged", when(*at))
        }
        NextStep::Wakes { at } => format!("Snoozed: paging resumes at {}", when(*at)),
        NextStep::LadderDone => {
            "Every level of the ladder has been paged: nothing more is sent".to_string()
        }
    }
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
