//! The incident list: open incidents first (triggered, then acknowledged), then the recently
//! resolved. Reloads itself when an incident of the caller's teams changes.

use crate::api::incidents::get_incident_board;
use crate::api::load;
use crate::components::coverage::CoverageWarnings;
use crate::components::live::{use_page_live, Freshness};
use crate::components::loaded::{Failed, Loading};
use crate::components::severity::IncidentBadges;
use crate::components::text::{ago, when};
use klaxon_domain::incident::Incident;
use klaxon_domain::incident::IncidentBoard;
use klaxon_domain::live::EventKind;
use klaxon_domain::Timestamp;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

#[component]
pub fn IncidentList() -> impl IntoView {
    // Team events carry maintenance windows starting and ending.
    let live = use_page_live(|kind, _| matches!(kind, EventKind::Incident | EventKind::Team));
    // A summary push links here with `?bundle={id}`: its incidents are listed first.
    let query = use_query_map();
    let bundle = move || query.with(|q| q.get("bundle").and_then(|b| b.parse::<i64>().ok()));
    let board = load(
        move || (live.changes(), bundle()),
        |(_, b)| get_incident_board(b),
    );
    // What the page showed last, kept on screen while a refresh fails.
    let last = RwSignal::new(None::<IncidentBoard>);

    view! {
        <section aria-labelledby="incidents-title">
            <div class="title-row">
                <h1 id="incidents-title">"Incidents"</h1>
                <Freshness page=live />
            </div>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match board.await {
                        Ok(b) => {
                            live.loaded();
                            last.set(Some(b.clone()));
                            view! { <Board board=b /> }.into_any()
                        }
                        Err(e) => {
                            live.failed();
                            match last.get_untracked() {
                                Some(b) => view! { <Board board=b /> }.into_any(),
                                None => view! { <Failed error=e retry=move |_| board.refetch() /> }.into_any(),
                            }
                        }
                    }
                })}
            </Transition>
        </section>
    }
    .into_any()
}

#[component]
fn Board(board: IncidentBoard) -> impl IntoView {
    let IncidentBoard {
        now,
        me,
        teams,
        open,
        resolved,
        maintenance,
        bundle,
        gaps,
    } = board;
    let team_name = move |id: i64| {
        teams
            .iter()
            .find(|t| t.id == id)
            .map(|t| t.display_name.clone())
            .unwrap_or_else(|| format!("Team {id}"))
    };
    let paused = maintenance
        .iter()
        .map(|(team, end)| {
            let text = format!(
                "{} is in maintenance until {}: its incidents open, nobody is paged.",
                team_name(*team),
                when(*end)
            );
            view! { <li><a href=format!("/teams/{team}")>{text}</a></li> }
        })
        .collect::<Vec<_>>();
    let paused = (!paused.is_empty()).then(
        || view! { <ul class="card notice maintenance" aria-label="Maintenance">{paused}</ul> },
    );
    let rows = |list: Vec<Incident>| {
        list.into_iter()
            .map(|i| {
                let team = team_name(i.team_id);
                view! { <IncidentRow incident=i team now me /> }
            })
            .collect_view()
    };
    let open_view = if open.is_empty() {
        view! { <p class="empty">"No open incidents."</p> }.into_any()
    } else {
        view! { <ul class="list incidents" aria-label="Open incidents">{rows(open)}</ul> }
            .into_any()
    };
    let resolved_view = (!resolved.is_empty()).then(|| {
        view! {
            <h2 id="resolved-title">"Recently resolved"</h2>
            <ul class="list incidents" aria-labelledby="resolved-title">{rows(resolved)}</ul>
        }
    });
    let bundle_view = bundle.map(|list| {
        let heading = match list.len() {
            1 => "1 incident paged together".to_string(),
            n => format!("{n} incidents paged together"),
        };
        view! {
            <section class="card bundle" aria-labelledby="bundle-title">
                <h2 id="bundle-title">{heading}</h2>
                <ul class="list incidents" aria-labelledby="bundle-title">{rows(list)}</ul>
                <p><a href="/">"Show all incidents"</a></p>
            </section>
        }
    });
    // Open incidents come first; what needs doing about the rota follows them.
    view! { {paused} {bundle_view} {open_view} <CoverageWarnings gaps /> {resolved_view} }
}

#[component]
fn IncidentRow(incident: Incident, team: String, now: Timestamp, me: i64) -> impl IntoView {
    let mine = incident.assignee_id == Some(me);
    let who = match (&incident.assignee, mine) {
        (_, true) => "assigned to you".to_string(),
        (Some(name), false) => name.clone(),
        (None, false) => match &incident.paged {
            Some(paged) => format!("unassigned, paged {paged}"),
            None => "unassigned, nobody paged".to_string(),
        },
    };
    let class = format!(
        "incident sev-edge-{}{}",
        incident.severity.as_str(),
        if mine { " mine" } else { "" }
    );
    let meta = format!("{team} · {} · {who}", ago(now, incident.created_at));
    view! {
        <li class=class>
            <a class="row" href=format!("/incidents/{}", incident.id)>
                <span class="row-main">
                    <IncidentBadges incident=incident.clone() now />
                    <strong class="incident-title">{incident.title.clone()}</strong>
                    <span class="meta">{meta}</span>
                </span>
            </a>
        </li>
    }
    .into_any()
}
