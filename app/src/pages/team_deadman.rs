//! A team's dead man's switches: coloured status rows, a row per cluster when several report,
//! and the owner's forms to add, change and remove switches.

use crate::api::deadman::{list_switches, CreateSwitch, DeleteSwitch, UpdateSwitch};
use crate::api::load;
use crate::components::form::{clear_on_success, failed, ActionDone, ActionError, Confirm, Drafts};
use crate::components::loaded::{Failed, Loading};
use crate::components::text::when;
use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::deadman::{DeadmanSwitch, SwitchStatus};
use leptos::prelude::*;

#[component]
pub fn DeadmanSwitches(team_id: Signal<i64>, is_owner: Signal<bool>) -> impl IntoView {
    let create = ServerAction::<CreateSwitch>::new();
    let update = ServerAction::<UpdateSwitch>::new();
    let remove = ServerAction::<DeleteSwitch>::new();
    let team_changes = crate::components::live::use_team_changes();
    let list = load(
        move || {
            (
                team_id.get(),
                create.version().get()
                    + update.version().get()
                    + remove.version().get()
                    + team_changes(),
            )
        },
        |(team, _)| list_switches(team),
    );
    // The rows (and their forms) are drawn again at every reload, which heartbeats bring often:
    // what was typed into a form, and which were open, is kept here until it is sent.
    let drafts = Drafts::default();
    Effect::new(move |_| {
        if let Some(Ok(s)) = update.value().get() {
            drafts.forget(&format!("switch-{}-", s.id));
        }
    });
    let added = clear_on_success(create);
    view! {
        <section class="card" aria-labelledby="deadman-title">
            <h2 id="deadman-title">"Dead man's switches"</h2>
            <p class="hint">
                "A switch watches a heartbeat alert that always fires, such as Prometheus's Watchdog. "
                "When it stops arriving for longer than the timeout, the alerting pipeline itself is down: "
                "Klaxon opens an incident and pages whoever is on call."
            </p>
            <details class="inner" hidden=move || !is_owner.get() open=move || failed(create)>
                <summary>"Add a switch"</summary>
                <ActionForm action=create node_ref=added attr:class="stack">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <SwitchFields prefix="new-switch".into() name="Watchdog".into()
                        matcher="{alertname=\"Watchdog\"}".into() timeout="10m".into() severity=Severity::Critical drafts=None />
                    <ActionError action=create />
                    <button type="submit" class="primary" disabled=move || create.pending().get()>"Add switch"</button>
                </ActionForm>
            </details>
            <ActionDone action=create text="Added: Klaxon watches that heartbeat now." />
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match list.await {
                        Ok(items) if items.is_empty() => view! { <p class="empty">"No dead man's switches."</p> }.into_any(),
                        Ok(mut items) => {
                            // Dead switches first: they are what the page is opened for.
                            items.sort_by_key(|s| s.status != SwitchStatus::Dead);
                            // Keyed by what each row shows: a row whose switch did not change keeps
                            // its element (and what was typed into it); a changed one is drawn anew
                            // from `drafts`, and never takes over another switch's form.
                            view! {
                                <ul class="list switches">
                                    <For each=move || items.clone() key=|s| format!("{s:?}") let:s>
                                        <SwitchRow switch=s is_owner update remove drafts />
                                    </For>
                                </ul>
                            }
                            .into_any()
                        }
                        Err(e) => view! { <Failed error=e retry=move |_| list.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=update />
            <ActionError action=remove />
            <ActionDone action=remove text="Removed: that heartbeat is no longer watched." />
        </section>
    }
    .into_any()
}

/// The four fields of a switch, for adding and for changing one; a row's fields keep what was
/// typed through a redraw (`drafts`).
#[component]
fn SwitchFields(
    prefix: String,
    name: String,
    matcher: String,
    timeout: String,
    severity: Severity,
    drafts: Option<Drafts>,
) -> impl IntoView {
    let id = |field: &str| format!("{prefix}-{field}");
    let hint_id = id("matcher-hint");
    let drafts = drafts.unwrap_or_default();
    let typed = |field: &str, stored: String| drafts.value(&id(field), stored);
    let severity = typed("severity", severity.as_str().to_string());
    view! {
        <label for=id("name")>"Name"</label>
        <input id=id("name") name="name" type="text" required maxlength="100" value=typed("name", name)
            on:input=drafts.keep(id("name")) />
        <label for=id("matcher")>"Heartbeat matcher"</label>
        <input id=id("matcher") name="matcher" type="text" required maxlength="1000" value=typed("matcher", matcher)
            on:input=drafts.keep(id("matcher"))
            autocapitalize="off" autocomplete="off" spellcheck="false" aria-describedby=hint_id.clone() />
        <p class="hint" id=hint_id>
            "Alertmanager matcher syntax; it must name the alert, e.g. {alertname=\"Watchdog\", cluster=~\"prod-.*\"}."
        </p>
        <label for=id("timeout")>"Dead after this much silence"</label>
        <input id=id("timeout") name="timeout" type="text" required value=typed("timeout", timeout)
            on:input=drafts.keep(id("timeout"))
            autocapitalize="off" inputmode="text" placeholder="10m" />
        <label for=id("severity")>"Severity of the incident"</label>
        <select id=id("severity") name="severity" on:change=drafts.keep(id("severity"))>
            {[Severity::Critical, Severity::Warning, Severity::Info]
                .into_iter()
                .map(|s| view! { <option value=s.as_str() selected=s.as_str() == severity>{s.as_str()}</option> })
                .collect_view()}
        </select>
    }
}

fn status_chip(status: SwitchStatus) -> impl IntoView {
    let (class, text) = match status {
        SwitchStatus::Healthy => ("healthy", "healthy"),
        SwitchStatus::Dead => ("dead", "dead"),
        SwitchStatus::Dormant => ("dormant", "dormant"),
    };
    view! { <span class=format!("chip switch-status status-{class}")>{text}</span> }
}

#[component]
fn SwitchRow(
    switch: DeadmanSwitch,
    is_owner: Signal<bool>,
    update: ServerAction<UpdateSwitch>,
    remove: ServerAction<DeleteSwitch>,
    drafts: Drafts,
) -> impl IntoView {
    let s = switch;
    let heard = match s.last_heartbeat_at {
        Some(t) => format!("last heartbeat {}", when(t)),
        None => "no heartbeat heard yet".to_string(),
    };
    let incident = s.last_incident.clone().map(|i| {
        if i.state == IncidentState::Resolved {
            view! { <p class="meta">{format!("Last incident #{} (resolved)", i.id)}</p> }.into_any()
        } else {
            view! {
                <p class="switch-incident">
                    <a href=format!("/incidents/{}", i.id)>{format!("Incident #{} is open", i.id)}</a>
                </p>
            }
            .into_any()
        }
    });
    let clusters = (!s.clusters.is_empty()).then(|| {
        view! {
            <ul class="clusters" aria-label=format!("Clusters of {}", s.name)>
                {s.clusters
                    .iter()
                    .map(|c| view! {
                        <li class=format!("cluster-row status-edge-{}", format!("{:?}", c.status).to_lowercase())>
                            <span class="row-main">
                                <strong>{c.cluster.clone().unwrap_or_else(|| "(no cluster label)".into())}</strong>
                                <span class="meta">{format!("last heartbeat {}", when(c.last_heartbeat_at))}</span>
                            </span>
                            {status_chip(c.status)}
                        </li>
                    })
                    .collect_view()}
            </ul>
        }
    });
    let prefix = format!("switch-{}", s.id);
    let tools = format!("{prefix}-open");
    let (change_text, remove_text) = (
        format!("Change {}", s.name),
        format!("Yes, remove {}", s.name),
    );
    let edge = format!("{:?}", s.status).to_lowercase();
    view! {
        <li class=format!("switch status-edge-{edge}")>
            <div class="row">
                <span class="row-main">
                    <strong>{s.name.clone()}</strong>
                    <span class="meta mono">{s.matcher.clone()}</span>
                    <span class="meta">{format!("dead after {} of silence · {} · {heard}", s.timeout, s.severity.as_str())}</span>
                </span>
                {status_chip(s.status)}
            </div>
            {incident}
            {clusters}
            <details class="row-tools" hidden=move || !is_owner.get() open=drafts.open(&tools)
                on:toggle=drafts.keep_open(tools.clone())>
                <summary>{change_text}</summary>
                <ActionForm action=update attr:class="stack">
                    <input type="hidden" name="team_id" value=s.team_id />
                    <input type="hidden" name="id" value=s.id />
                    <SwitchFields prefix name=s.name.clone() matcher=s.matcher.clone()
                        timeout=s.timeout.to_string() severity=s.severity drafts=Some(drafts) />
                    <button type="submit" class="secondary">"Save"</button>
                </ActionForm>
                <Confirm key=format!("remove-switch-{}", s.id) summary="Remove…">
                    <ActionForm action=remove attr:class="stack">
                        <input type="hidden" name="team_id" value=s.team_id />
                        <input type="hidden" name="id" value=s.id />
                        <p class="hint">"Removing stops the watching. An incident it opened stays open until someone resolves it."</p>
                        <button type="submit" class="danger wide">{remove_text}</button>
                    </ActionForm>
                </Confirm>
            </details>
        </li>
    }
    .into_any()
}
