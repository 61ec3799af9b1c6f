//! The incident list: open incidents first (triggered, then acknowledged), then the recently
//! resolved. Reloads itself when an incident of the caller's teams changes. In a storm it is
//! narrowed by whose incidents, severity and state (the query string, so a filtered list is a
//! link), drawn one line per incident, and acknowledged all at once.

use crate::api::incidents::{get_incident_board, AcknowledgeShown};
use crate::api::load;
use crate::components::coverage::CoverageWarnings;
use crate::components::form::{ActionDone, ActionError, Fold};
use crate::components::live::{use_page_live, Freshness};
use crate::components::loaded::{Failed, Loading};
use crate::components::severity::IncidentBadges;
use crate::components::text::{ago, when};
use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::board::IncidentBoard;
use klaxon_domain::board::{differing_starts, BoardFilter, BoardScope, BoardState, COMPACT_FROM};
use klaxon_domain::incident::Incident;
use klaxon_domain::live::EventKind;
use klaxon_domain::Timestamp;
use leptos::prelude::*;
use leptos::web_sys::FormData;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;
use std::sync::Arc;

#[component]
pub fn IncidentList() -> impl IntoView {
    // Team events carry maintenance windows starting and ending.
    let live = use_page_live(|kind, _| matches!(kind, EventKind::Incident | EventKind::Team));
    // A summary push links here with `?bundle={id}`: its incidents are listed first.
    let query = use_query_map();
    let bundle = move || query.with(|q| q.get("bundle").and_then(|b| b.parse::<i64>().ok()));
    // Words the page does not know are dropped here, so an old link still shows the list.
    let filter = move || {
        query.with(|q| {
            BoardFilter::from_query(q.get_str("show"), q.get_str("severity"), q.get_str("state"))
        })
    };
    let ack_all = ServerAction::<AcknowledgeShown>::new();
    let board = load(
        move || (live.changes(), bundle(), filter(), ack_all.version().get()),
        |(_, b, f, _)| {
            get_incident_board(
                b,
                Some(f.scope.as_str().into()),
                f.severity.map(|s| s.as_str().into()),
                Some(f.state.as_str().into()),
            )
        },
    );
    // What the page showed last, kept on screen while a refresh fails.
    let last = RwSignal::new(None::<IncidentBoard>);
    // The tab's title counts the open incidents assigned to the caller.
    let for_me = RwSignal::new(0usize);
    let title = move || match for_me.get() {
        0 => "Incidents".to_string(),
        n => format!("({n}) Incidents"),
    };

    view! {
        <Title text=title />
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
                            for_me.set(b.for_me);
                            last.set(Some(b.clone()));
                            view! { <Board board=b ack_all /> }.into_any()
                        }
                        Err(e) => {
                            live.failed();
                            match last.get_untracked() {
                                Some(b) => view! { <Board board=b ack_all /> }.into_any(),
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
fn Board(board: IncidentBoard, ack_all: ServerAction<AcknowledgeShown>) -> impl IntoView {
    let IncidentBoard {
        now,
        me,
        teams: _,
        team_names,
        filter,
        may_see_all,
        for_me,
        open_in_scope,
        open,
        resolved,
        maintenance,
        bundle,
        gaps,
    } = board;
    let team_name = move |id: i64| {
        team_names
            .iter()
            .find(|t| t.0 == id)
            .map(|t| t.1.clone())
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
        let titles: Vec<&str> = list.iter().map(|i| i.title.as_str()).collect();
        let starts = differing_starts(&titles);
        list.into_iter()
            .zip(starts)
            .map(|(i, differs)| {
                let team = team_name(i.team_id);
                view! { <IncidentRow incident=i team now me differs /> }
            })
            .collect_view()
    };
    let shown = open.len();
    let triggered: Vec<i64> = open
        .iter()
        .filter(|i| i.state == IncidentState::Triggered)
        .map(|i| i.id)
        .collect();
    let compact = shown >= COMPACT_FROM;
    let open_view = if open.is_empty() {
        let text = if filter.narrows() {
            format!("No open incidents {}.", filter.describe())
        } else {
            "No open incidents.".to_string()
        };
        view! { <p class="empty">{text}</p> }.into_any()
    } else {
        let class = if compact {
            "list incidents compact"
        } else {
            "list incidents"
        };
        view! {
            {(shown < open_in_scope).then(|| view! {
                <p class="hint shown-count">{format!("{shown} of {open_in_scope} open incidents: {}.", filter.describe())}</p>
            })}
            <ul class=class aria-label="Open incidents">{rows(open)}</ul>
        }
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
    view! {
        {paused}
        {bundle_view}
        <Filters filter may_see_all for_me />
        {(triggered.len() >= 2).then(|| view! { <AcknowledgeAll ids=triggered action=ack_all /> })}
        <ActionError action=ack_all />
        <ActionDone action=ack_all text="Acknowledged." />
        {open_view}
        <CoverageWarnings gaps />
        {resolved_view}
    }
}

/// Whose incidents (links, one tap each) and, folded away, severity and state (a GET form): the
/// page's query string either way, so they work before the wasm arrives.
#[component]
fn Filters(filter: BoardFilter, may_see_all: bool, for_me: usize) -> impl IntoView {
    let scopes = BoardScope::ALL
        .iter()
        .copied()
        .filter(|s| *s != BoardScope::All || may_see_all)
        .map(|scope| {
            let href = BoardFilter { scope, ..filter }.query();
            let current = (scope == filter.scope).then_some("page");
            let label = match scope {
                BoardScope::Mine => format!("Mine ({for_me})"),
                other => other.label().to_string(),
            };
            view! { <a class="segment" href=href aria-current=current>{label}</a> }
        })
        .collect_view();
    let narrowed = filter.severity.is_some() || filter.state != BoardState::Open;
    let severity_options = std::iter::once(("", "Every severity"))
        .chain(Severity::ALL.iter().rev().map(|s| (s.as_str(), s.as_str())))
        .map(|(value, label)| {
            let selected = filter.severity.map(Severity::as_str).unwrap_or("") == value;
            view! { <option value=value selected=selected>{label}</option> }
        })
        .collect_view();
    let state_options = BoardState::ALL
        .iter()
        .map(|s| {
            let label = match s {
                BoardState::Open => "Every open incident",
                BoardState::Triggered => "Triggered (nobody has it)",
                BoardState::Acknowledged => "Acknowledged",
            };
            view! { <option value=s.as_str() selected=*s == filter.state>{label}</option> }
        })
        .collect_view();
    let summary = if narrowed {
        format!("Filter: {}", filter.describe())
    } else {
        "Filter by severity or state".to_string()
    };
    view! {
        <nav class="segments" aria-label="Whose incidents">{scopes}</nav>
        <Fold key="filters" class="filters" open=narrowed>
            <summary>{summary}</summary>
            // The router's form adds its button as a nameless field (`&=` in the address).
            <Form method="get" action="/" on_form_data=Arc::new(|data: &FormData| data.delete("")) attr:class="stack" attr:aria-label="Filter incidents">
                <input type="hidden" name="show" value=filter.scope.as_str() />
                <label for="filter-severity">"Severity"</label>
                <select id="filter-severity" name="severity">{severity_options}</select>
                <label for="filter-state">"State"</label>
                <select id="filter-state" name="state">{state_options}</select>
                <button type="submit" class="secondary">"Show"</button>
                {narrowed.then(|| view! {
                    <a class="clear-filter" href=BoardFilter { scope: filter.scope, ..Default::default() }.query()>"Show every open incident"</a>
                })}
            </Form>
        </Fold>
    }
}

/// "Acknowledge all N shown", asked once: the shown incidents nobody has acknowledged yet.
#[component]
fn AcknowledgeAll(ids: Vec<i64>, action: ServerAction<AcknowledgeShown>) -> impl IntoView {
    let n = ids.len();
    let ids = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    view! {
        <details class="confirm ack-all">
            <summary class="button primary">{format!("Acknowledge all {n} shown")}</summary>
            <ActionForm action attr:class="stack">
                <input type="hidden" name="ids" value=ids />
                <p>{format!("You take all {n}: their pages and escalations stop.")}</p>
                <button type="submit" class="primary wide" disabled=move || action.pending().get()>
                    {format!("Yes, acknowledge {n} incidents")}
                </button>
            </ActionForm>
        </details>
    }
}

#[component]
fn IncidentRow(
    incident: Incident,
    team: String,
    now: Timestamp,
    me: i64,
    /// Where the title stops repeating its neighbours' (`differing_starts`): a compact row
    /// shortens the shared start, never the part that tells it apart.
    differs: usize,
) -> impl IntoView {
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
                    <TitleParts title=incident.title.clone() differs />
                    <span class="meta">{meta}</span>
                </span>
            </a>
        </li>
    }
    .into_any()
}

/// An incident's title in two parts, the shared start and the part that differs.
#[component]
fn TitleParts(title: String, differs: usize) -> impl IntoView {
    let (same, rest) = title.split_at(differs.min(title.len()));
    let class = match same.ends_with(char::is_whitespace) {
        true => "same spaced",
        false => "same",
    };
    view! {
        <strong class="incident-title">
            {(!same.is_empty()).then(|| view! { <span class=class>{same.to_string()}</span> })}
            <span class="differs">{rest.to_string()}</span>
        </strong>
    }
}
