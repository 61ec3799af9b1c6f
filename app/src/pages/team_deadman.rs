//! A team's dead man's switches: coloured status rows, a row per cluster when several report,
//! and the owner's forms to add, change and remove switches.

use crate::api::deadman::{list_switches, CreateSwitch, DeleteSwitch, UpdateSwitch};
use crate::api::load;
use crate::components::form::{clear_on_success, failed, ActionDone, ActionError, Confirm, Fold};
use crate::components::loaded::{Failed, Loading};
use crate::components::secret::ShownOnce;
use crate::components::text::when;
use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::deadman::{DeadmanSwitch, SwitchStatus};
use leptos::prelude::*;

#[component]
pub fn DeadmanSwitches(team_id: Signal<i64>, is_owner: Signal<bool>) -> impl IntoView {
    let create = ServerAction::<CreateSwitch>::new();
    // A switch fed by pings: its own action, so its URL (answered once) is shown once.
    let create_pinged = ServerAction::<CreateSwitch>::new();
    let update = ServerAction::<UpdateSwitch>::new();
    let remove = ServerAction::<DeleteSwitch>::new();
    let team_changes = crate::components::live::use_team_changes();
    // The first load draws the list (on the server, and as hydration finds it). After it, the
    // rows stay on the page while their switch exists and read what they show from `shown`,
    // which every later load sets (heartbeats bring them often): a reload never draws a form
    // again under the finger, so what was typed, the focus and which folds are open stay.
    let first = load(move || team_id.get(), list_switches);
    // The later loads: none until something changed, so the first is not loaded twice.
    let list = load(
        move || {
            (
                team_id.get(),
                create.version().get()
                    + create_pinged.version().get()
                    + update.version().get()
                    + remove.version().get()
                    + team_changes(),
            )
        },
        |(team, changes)| async move {
            if changes == 0 {
                return Ok(None);
            }
            list_switches(team).await.map(Some)
        },
    );
    let shown = RwSignal::new(Vec::<DeadmanSwitch>::new());
    let reload_failed = RwSignal::new(None::<ServerFnError>);
    Effect::new(move |_| match list.get() {
        Some(Ok(Some(items))) => {
            shown.set(dead_first(items));
            reload_failed.set(None);
        }
        Some(Err(e)) => reload_failed.set(Some(e)),
        Some(Ok(None)) | None => {}
    });
    let added = clear_on_success(create);
    let added_pinged = clear_on_success(create_pinged);
    let new_url = move || {
        create_pinged
            .value()
            .get()
            .and_then(Result::ok)
            .and_then(|s| Some((s.name, s.ping_url?)))
    };
    view! {
        <section class="card" aria-labelledby="deadman-title">
            <h2 id="deadman-title">"Dead man's switches"</h2>
            <p class="hint">
                "A switch watches a heartbeat alert that always fires, such as Prometheus's Watchdog. "
                "When it stops arriving for longer than the timeout, the alerting pipeline itself is down: "
                "Klaxon opens an incident and pages whoever is on call. "
                "A job that cannot send alerts (a cron job, a backup) pings a heartbeat URL instead."
            </p>
            <Fold key="new-switch" class="inner" hidden=move || !is_owner.get() open=move || failed(create)>
                <summary>"Add a switch"</summary>
                <ActionForm action=create node_ref=added attr:class="stack">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <SwitchFields prefix="new-switch".into() stored=Signal::stored(Fields::new_switch()) />
                    <ActionError action=create />
                    <button type="submit" class="primary" disabled=move || create.pending().get()>"Add switch"</button>
                </ActionForm>
            </Fold>
            <ActionDone action=create text="Added: Klaxon watches that heartbeat now." />
            <Fold key="new-heartbeat-url" class="inner" hidden=move || !is_owner.get() open=move || failed(create_pinged)>
                <summary>"Add a heartbeat URL"</summary>
                <ActionForm action=create_pinged node_ref=added_pinged attr:class="stack">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <SwitchFields prefix="new-ping".into() stored=Signal::stored(Fields::new_pinged()) pings=true />
                    <ActionError action=create_pinged />
                    <button type="submit" class="primary" disabled=move || create_pinged.pending().get()>"Add heartbeat URL"</button>
                </ActionForm>
            </Fold>
            {move || new_url().map(|(name, url)| view! {
                <ShownOnce id="new-heartbeat-url" label=format!("Heartbeat URL of “{name}”") value=url.clone()>
                    <p class="hint">"Ping it when the job succeeds, add /start when it begins and /fail when it fails, for example at the end of a cron line:"</p>
                    <pre class="command">{format!("curl -fsS -m 10 --retry 5 {url}")}</pre>
                </ShownOnce>
            })}
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match first.await {
                        Ok(items) => {
                            shown.set(dead_first(items));
                            view! {
                                <p class="empty" hidden=move || !shown.with(Vec::is_empty)>"No dead man's switches."</p>
                                <ul class="list switches" hidden=move || shown.with(Vec::is_empty)>
                                    <For each=move || shown.get() key=|s| s.id let:s>
                                        <SwitchRow first=s shown is_owner update remove />
                                    </For>
                                </ul>
                                {move || reload_failed.get().map(|e| view! { <Failed error=e retry=move |_| list.refetch() /> })}
                            }
                            .into_any()
                        }
                        Err(e) => view! { <Failed error=e retry=move |_| first.refetch() /> }.into_any(),
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

/// Dead switches first: they are what the page is opened for.
fn dead_first(mut items: Vec<DeadmanSwitch>) -> Vec<DeadmanSwitch> {
    items.sort_by_key(|s| s.status != SwitchStatus::Dead);
    items
}

/// What a switch's form starts from: the usual Watchdog switch, or a switch as stored.
#[derive(Clone, PartialEq)]
struct Fields {
    name: String,
    matcher: String,
    timeout: String,
    severity: Severity,
}

impl Fields {
    fn new_switch() -> Self {
        Fields {
            name: "Watchdog".into(),
            matcher: "{alertname=\"Watchdog\"}".into(),
            timeout: "10m".into(),
            severity: Severity::Critical,
        }
    }

    fn new_pinged() -> Self {
        Fields {
            name: "Nightly backup".into(),
            matcher: String::new(),
            timeout: "25h".into(),
            severity: Severity::Critical,
        }
    }

    fn of(s: &DeadmanSwitch) -> Self {
        Fields {
            name: s.name.clone(),
            matcher: s.matcher.clone(),
            timeout: s.timeout.to_string(),
            severity: s.severity,
        }
    }
}

/// The fields of a switch, for adding and for changing one: a switch fed by `pings` has no
/// matcher. `stored` is each field's default (an HTML `value` attribute): a field nobody typed
/// into follows it, one that was typed into keeps what was typed.
#[component]
fn SwitchFields(
    prefix: String,
    stored: Signal<Fields>,
    #[prop(optional)] pings: bool,
) -> impl IntoView {
    let id = |field: &str| format!("{prefix}-{field}");
    let hint_id = id("matcher-hint");
    let field = move |f: fn(&Fields) -> String| move || stored.with(f);
    let feed = if pings {
        view! { <input type="hidden" name="pings" value="true" /> }.into_any()
    } else {
        view! {
            <label for=id("matcher")>"Heartbeat matcher"</label>
            <input id=id("matcher") name="matcher" type="text" required maxlength="1000" value=field(|f| f.matcher.clone())
                autocapitalize="off" autocomplete="off" spellcheck="false" aria-describedby=hint_id.clone() />
            <p class="hint" id=hint_id>
                "Alertmanager matcher syntax; it must name the alert, e.g. {alertname=\"Watchdog\", cluster=~\"prod-.*\"}."
            </p>
        }
        .into_any()
    };
    view! {
        <label for=id("name")>"Name"</label>
        <input id=id("name") name="name" type="text" required maxlength="100" value=field(|f| f.name.clone()) />
        {feed}
        <label for=id("timeout")>"Dead after this much silence"</label>
        <input id=id("timeout") name="timeout" type="text" required value=field(|f| f.timeout.clone())
            autocapitalize="off" inputmode="text" placeholder="10m" />
        <label for=id("severity")>"Severity of the incident"</label>
        <select id=id("severity") name="severity">
            {[Severity::Critical, Severity::Warning, Severity::Info]
                .into_iter()
                .map(|s| view! {
                    <option value=s.as_str() selected=move || stored.with(|f| f.severity == s)>{s.as_str()}</option>
                })
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

fn edge(status: SwitchStatus) -> String {
    format!("{status:?}").to_lowercase()
}

/// One switch: its status, clusters and last incident as the latest load says, and the owner's
/// forms, which are drawn once and keep what was typed through every reload.
#[component]
fn SwitchRow(
    first: DeadmanSwitch,
    shown: RwSignal<Vec<DeadmanSwitch>>,
    is_owner: Signal<bool>,
    update: ServerAction<UpdateSwitch>,
    remove: ServerAction<DeleteSwitch>,
) -> impl IntoView {
    let (id, team_id, first_pings) = (first.id, first.team_id, first.pings);
    // The switch as last loaded; kept as it was while the row is on its way out.
    let s = Memo::new(move |last: Option<&DeadmanSwitch>| {
        shown
            .with(|all| all.iter().find(|x| x.id == id).cloned())
            .or_else(|| last.cloned())
            .unwrap_or_else(|| first.clone())
    });
    let meta = move || {
        s.with(|s| {
            let heard = match s.last_heartbeat_at {
                Some(t) => format!("last heartbeat {}", when(t)),
                None => "no heartbeat heard yet".to_string(),
            };
            let running = s
                .running_since
                .map(|t| format!(" · running since {}", when(t)))
                .unwrap_or_default();
            format!(
                "dead after {} of silence · {} · {heard}{running}",
                s.timeout,
                s.severity.as_str()
            )
        })
    };
    let incident = move || {
        s.with(|s| s.last_incident.clone()).map(|i| {
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
        })
    };
    let clusters = move || {
        let s = s.get();
        (!s.clusters.is_empty()).then(|| {
            view! {
                <ul class="clusters" aria-label=format!("Clusters of {}", s.name)>
                    {s.clusters
                        .iter()
                        .map(|c| view! {
                            <li class=format!("cluster-row status-edge-{}", edge(c.status))>
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
        })
    };
    // A change that was saved closes the form.
    let tools = NodeRef::<leptos::html::Details>::new();
    Effect::new(move |_| {
        if update
            .value()
            .with(|v| matches!(v, Some(Ok(saved)) if saved.id == id))
        {
            if let Some(d) = tools.get_untracked() {
                let _ = d.remove_attribute("open");
            }
        }
    });
    let name = move || s.with(|s| s.name.clone());
    view! {
        <li class=move || format!("switch status-edge-{}", edge(s.with(|s| s.status)))>
            <div class="row">
                <span class="row-main">
                    <strong>{name}</strong>
                    <span class="meta mono">{move || s.with(|s| if s.pings { "pinged at its heartbeat URL".to_string() } else { s.matcher.clone() })}</span>
                    {move || s.with(|s| s.failure.clone()).map(|said| view! { <span class="meta">{format!("failed: {said}")}</span> })}
                    <span class="meta">{meta}</span>
                </span>
                {move || status_chip(s.with(|s| s.status))}
            </div>
            {incident}
            {clusters}
            <details class="row-tools" hidden=move || !is_owner.get() node_ref=tools>
                <summary>{move || format!("Change {}", name())}</summary>
                <ActionForm action=update attr:class="stack">
                    <input type="hidden" name="team_id" value=team_id />
                    <input type="hidden" name="id" value=id />
                    <SwitchFields prefix=format!("switch-{id}") stored=Signal::derive(move || s.with(Fields::of)) pings=first_pings />
                    <button type="submit" class="secondary">"Save"</button>
                </ActionForm>
                <Confirm key=format!("remove-switch-{id}") summary="Remove…">
                    <ActionForm action=remove attr:class="stack">
                        <input type="hidden" name="team_id" value=team_id />
                        <input type="hidden" name="id" value=id />
                        <p class="hint">"Removing stops the watching. An incident it opened stays open until someone resolves it."</p>
                        <button type="submit" class="danger wide">{move || format!("Yes, remove {}", name())}</button>
                    </ActionForm>
                </Confirm>
            </details>
        </li>
    }
    .into_any()
}
