//! A team's reports over the last 4, 13 or 52 weeks: on-call health (who held the pager, who was
//! woken, who answered and how fast, and whether pages fell fairly) and alert noise (the alerts
//! that page most for least, each with what would quiet it).

use crate::api::load;
use crate::api::reports::{get_alert_noise, get_oncall_health, WEEKS};
use crate::api::teams::get_team;
use crate::components::loaded::{Failed, Loading};
use crate::components::report_charts::ShareBars;
use crate::components::team_page::TeamSubpageHeading;
use crate::components::text::span;
use klaxon_domain::health::{AckTimes, OncallHealth, PersonHealth};
use klaxon_domain::noise::{AlertNoise, NoiseRow};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

#[component]
pub fn TeamReportsPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let id = move || params.with(|p| p.get("id").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0));
    let weeks = move || {
        query
            .with(|q| q.get("weeks").and_then(|v| v.parse::<i64>().ok()))
            .filter(|w| WEEKS.contains(w))
            .unwrap_or(4)
    };
    let team = load(id, get_team);
    let health = load(move || (id(), weeks()), |(id, w)| get_oncall_health(id, w));
    let noise = load(move || (id(), weeks()), |(id, w)| get_alert_noise(id, w));
    let ranges = move || {
        let (team_id, now) = (id(), weeks());
        WEEKS
            .iter()
            .map(|&w| {
                let current = (w == now).then_some("page");
                view! {
                    <a class="chip range" aria-current=current href=format!("/teams/{team_id}/reports?weeks={w}")>
                        {format!("{w} weeks")}
                    </a>
                }
            })
            .collect_view()
    };
    view! {
        <TeamSubpageHeading team team_id=Signal::derive(id) title="Reports" />
        <nav class="ranges" aria-label="Period">{ranges}</nav>
        <section aria-labelledby="health-title">
            <h2 id="health-title">"On-call health"</h2>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match health.await {
                        Ok(h) => view! { <Health health=h /> }.into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| health.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
        </section>
        <section aria-labelledby="noise-title">
            <h2 id="noise-title">"Alert noise"</h2>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match noise.await {
                        Ok(n) => view! { <Noise noise=n /> }.into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| noise.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// `2 min (9 min for the slowest tenth)`, or a dash.
fn ack_words(t: &AckTimes) -> String {
    match (t.median_seconds, t.p90_seconds) {
        (Some(m), Some(p)) if p > m => {
            format!("{} typically, {} for the slowest tenth", span(m), span(p))
        }
        (Some(m), _) => span(m),
        _ => "–".into(),
    }
}

fn hours(h: f64) -> String {
    if h.fract() == 0.0 {
        format!("{h:.0} h")
    } else {
        format!("{h:.1} h")
    }
}

#[component]
fn Health(health: OncallHealth) -> impl IntoView {
    let t = health.team.clone();
    let people = health.people.clone();
    let rows = people
        .iter()
        .cloned()
        .map(|p| view! { <Person p /> })
        .collect_view();
    let empty = people.is_empty().then(|| {
        view! { <p class="hint">"Nobody held the pager or was paged in this period."</p> }
    });
    view! {
        <dl class="facts">
            <div><dt>"Incidents"</dt><dd>{t.incidents}</dd></div>
            <div><dt>"Pages"</dt><dd>{format!("{} ({} at night)", t.pages, t.night_pages)}</dd></div>
            <div><dt>"Acknowledged in"</dt><dd>{ack_words(&t.time_to_acknowledge)}</dd></div>
            <div><dt>"Escalated"</dt><dd>{format!("{} past the person paged", t.escalated_past)}</dd></div>
            <div><dt>"Nobody on call"</dt><dd>{hours(t.hours_uncovered)}</dd></div>
        </dl>
        {(!people.is_empty()).then(|| view! { <ShareBars people=people.clone() /> })}
        {empty}
        <ul class="list people-health">{rows}</ul>
    }
}

#[component]
fn Person(p: PersonHealth) -> impl IntoView {
    let roads = p
        .pages_by_road
        .iter()
        .map(|(road, n)| format!("{n} by {road}"))
        .collect::<Vec<_>>()
        .join(", ");
    let pages = match p.pages {
        0 => "none".to_string(),
        n if roads.is_empty() => n.to_string(),
        n => format!("{n}: {roads}"),
    };
    let fair = match p.fairness {
        Some(f) if f > 1.5 => format!("{f:.1}× their share: more than their hours would bring"),
        Some(f) => format!("{f:.1}× their share"),
        None => "–".into(),
    };
    view! {
        <li class="card person-health">
            <p class="row-main">
                <strong>{p.username.clone()}</strong>
                <span class="meta">{format!("nights in {}", p.time_zone)}</span>
            </p>
            <dl class="facts">
                <div><dt>"On call"</dt><dd>{hours(p.hours_on_call)}</dd></div>
                <div><dt>"Pages"</dt><dd>{pages}</dd></div>
                <div><dt>"At night"</dt><dd>{format!("{} between 22:00 and 07:00", p.night_pages)}</dd></div>
                <div><dt>"Answered"</dt><dd>{format!("{} acknowledged, {} resolved", p.acknowledged, p.resolved)}</dd></div>
                <div><dt>"Acknowledges in"</dt><dd>{ack_words(&p.time_to_acknowledge)}</dd></div>
                <div><dt>"Escalated past"</dt><dd>{p.escalated_past}</dd></div>
                <div><dt>"Fairness"</dt><dd>{fair}</dd></div>
            </dl>
        </li>
    }
}

#[component]
fn Noise(noise: AlertNoise) -> impl IntoView {
    let summary = format!(
        "{} incidents opened; {} of them resolved themselves within five minutes with nobody acting.",
        noise.incidents, noise.flapping
    );
    let empty = noise
        .rows
        .is_empty()
        .then(|| view! { <p class="hint">"No incidents in this period."</p> });
    let rows = noise
        .rows
        .into_iter()
        .map(|r| view! { <NoisyAlert r /> })
        .collect_view();
    view! {
        <p>{summary}</p>
        {empty}
        <ul class="list noise">{rows}</ul>
    }
}

#[component]
fn NoisyAlert(r: NoiseRow) -> impl IntoView {
    let mut parts = vec![format!(
        "{} incident{}, {} page{}",
        r.incidents,
        if r.incidents == 1 { "" } else { "s" },
        r.pages,
        if r.pages == 1 { "" } else { "s" }
    )];
    if r.flapping > 0 {
        parts.push(format!("{} resolved by themselves", r.flapping));
    }
    if r.reopened > 0 {
        parts.push(format!("{} came back within the hour", r.reopened));
    }
    if r.unacknowledged > 0 {
        parts.push(format!("{} never acknowledged", r.unacknowledged));
    }
    let from = r
        .integration
        .clone()
        .unwrap_or_else(|| "no integration".into());
    view! {
        <li class="card noisy">
            <p class="row-main">
                <strong class="alertname">{r.alertname.clone()}</strong>
                <span class="meta">{format!("from {from}")}</span>
            </p>
            <p>{parts.join(" · ")}</p>
            <p><a class="button" href=r.action_url.clone()>{r.action.clone()}</a></p>
        </li>
    }
}
