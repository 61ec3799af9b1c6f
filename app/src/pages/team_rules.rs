//! An integration's routing rules: in order, the first whose matchers hold an alert's labels
//! sends it to another team, sets its severity and labels, or drops it. The owner edits them
//! next to a sample request and sees what each of its alerts would do ("Simulate") before saving.

use crate::api::integrations::{SetRules, SimulateRules};
use crate::components::drafts::Drafts;
use crate::components::form::{ActionDone, ActionError};
use crate::components::hydration::use_hydrated;
use klaxon_domain::alerting::Severity;
use klaxon_domain::incident::{Integration, IntegrationKind};
use klaxon_domain::mapping::parse_label_lines;
use klaxon_domain::routing::{check, RoutingRule, RulesTrial, SimulatedAlert};
use leptos::ev::SubmitEvent;
use leptos::prelude::*;

/// A request like the integration's sender posts, to simulate on until the owner pastes one.
fn sample(kind: IntegrationKind) -> &'static str {
    match kind {
        IntegrationKind::Alertmanager | IntegrationKind::Grafana => {
            r#"{"version": "4", "status": "firing", "receiver": "klaxon",
 "groupKey": "{}:{alertname=\"DiskFull\"}",
 "alerts": [{"status": "firing", "fingerprint": "a1",
   "labels": {"alertname": "DiskFull", "service": "db-main", "severity": "warning"},
   "annotations": {"summary": "Disk 95% full on db-1"},
   "startsAt": "2026-12-06T03:00:00Z"}]}"#
        }
        IntegrationKind::PagerDuty => {
            r#"{"routing_key": "key", "event_action": "trigger",
 "payload": {"summary": "Disk 95% full on db-1", "source": "db-1", "severity": "warning",
   "component": "db-main"}}"#
        }
        IntegrationKind::Opsgenie => {
            r#"{"message": "Disk 95% full on db-1", "alias": "db-1-disk", "priority": "P3",
 "tags": ["db-main"], "details": {"service": "db-main"}}"#
        }
        IntegrationKind::Webhook => {
            r#"{"title": "Disk 95% full on db-1", "severity": "warning", "status": "firing",
 "service": "db-main"}"#
        }
    }
}

/// One rule as the form holds it. `key` tells rows apart while they move.
#[derive(Clone, Debug, Default, PartialEq)]
struct RuleText {
    key: usize,
    matchers: String,
    /// `keep`, `team` or `drop`.
    action: String,
    team: String,
    severity: String,
    labels: String,
}

impl RuleText {
    fn of(key: usize, r: &RoutingRule) -> RuleText {
        let action = match (r.drop, &r.team) {
            (true, _) => "drop",
            (false, Some(_)) => "team",
            (false, None) => "keep",
        };
        RuleText {
            key,
            matchers: r.matchers.clone(),
            action: action.into(),
            team: r.team.clone().unwrap_or_default(),
            severity: r
                .severity
                .map(|s| s.as_str().to_string())
                .unwrap_or_default(),
            labels: r
                .labels
                .iter()
                .map(|(k, v)| format!("{k}: {v}\n"))
                .collect(),
        }
    }

    fn rule(&self, n: usize) -> Result<RoutingRule, String> {
        let drop = self.action == "drop";
        let severity = match self.severity.as_str() {
            "" => None,
            s => Some(Severity::parse(s).ok_or_else(|| format!("rule {n}: no severity {s}"))?),
        };
        Ok(RoutingRule {
            matchers: self.matchers.trim().to_string(),
            team: (self.action == "team").then(|| self.team.trim().to_string()),
            severity: severity.filter(|_| !drop),
            labels: if drop {
                Default::default()
            } else {
                parse_label_lines(&self.labels).map_err(|e| format!("rule {n}: {e}"))?
            },
            drop,
        })
    }
}

/// One integration's editor state.
#[derive(Clone, Copy)]
pub struct RulesDraft {
    rules: RwSignal<Vec<RuleText>>,
    next: StoredValue<usize>,
    sample: RwSignal<String>,
    invalid: RwSignal<Option<String>>,
    simulated: ServerAction<SimulateRules>,
    save: ServerAction<SetRules>,
}

impl RulesDraft {
    fn new(integration: &Integration) -> RulesDraft {
        let rules: Vec<RuleText> = (integration.rules.iter().enumerate())
            .map(|(k, r)| RuleText::of(k, r))
            .collect();
        RulesDraft {
            next: StoredValue::new(rules.len()),
            rules: RwSignal::new(rules),
            sample: RwSignal::new(sample(integration.kind).to_string()),
            invalid: RwSignal::new(None),
            simulated: ServerAction::new(),
            save: ServerAction::new(),
        }
    }

    fn built(&self) -> Result<Vec<RoutingRule>, String> {
        let rules = self.rules.get_untracked();
        let built = (rules.iter().enumerate())
            .map(|(i, r)| r.rule(i + 1))
            .collect::<Result<Vec<_>, _>>()?;
        check(&built)?;
        Ok(built)
    }

    /// Changes the rule `key` in place.
    fn edit(&self, key: usize, change: impl FnOnce(&mut RuleText)) {
        self.rules.update(|v| {
            if let Some(r) = v.iter_mut().find(|r| r.key == key) {
                change(r)
            }
        });
    }
}

/// The rules editors' state, kept by the integrations section.
pub type RuleDrafts = Drafts<RulesDraft>;

#[component]
pub fn RulesEditor(integration: Integration, drafts: RuleDrafts) -> impl IntoView {
    let hydrated = use_hydrated();
    let d = drafts.of(integration.id, || RulesDraft::new(&integration));
    let (team_id, id) = (integration.team_id, integration.id);
    let saved = integration.rules.len();
    // The count of rules kept: the last save's, else the list's.
    let count = move || match d.save.value().get() {
        Some(Ok(i)) => i.rules.len(),
        _ => saved,
    };
    let simulate = move |_| match d.built() {
        Ok(rules) => {
            d.invalid.set(None);
            let trial = RulesTrial {
                rules: Some(rules),
                sample: d.sample.get_untracked(),
            };
            d.simulated.dispatch(SimulateRules { team_id, id, trial });
        }
        Err(e) => d.invalid.set(Some(e)),
    };
    let submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        match d.built() {
            Ok(rules) => {
                d.invalid.set(None);
                d.save.dispatch(SetRules { team_id, id, rules });
            }
            Err(e) => d.invalid.set(Some(e)),
        }
    };
    let add = move |_| {
        let key = d.next.get_value();
        d.next.set_value(key + 1);
        d.rules.update(|v| {
            v.push(RuleText {
                key,
                action: "keep".into(),
                ..Default::default()
            })
        });
    };
    let sample_id = format!("rules-{id}-sample");
    view! {
        <details class="inner">
            <summary>{move || format!("Routing rules ({})", count())}</summary>
            <form class="stack rules" on:submit=submit>
                <p class="hint">
                    "In order, the first rule whose matchers hold an alert's labels decides; an alert no rule matches stays here as sent. Matchers as Alertmanager writes them, e.g. "
                    <code>"{service=~\"db-.*\"}"</code>"; empty matches every alert."
                </p>
                <ol class="rule-list">
                    <For each=move || d.rules.get() key=|r| r.key let:r>
                        <RuleFields d key=r.key id />
                    </For>
                </ol>
                <button type="button" class="secondary" on:click=add>"Add a rule"</button>
                <label for=sample_id.clone()>"Sample request"</label>
                <textarea id=sample_id class="code" rows="6" spellcheck="false"
                    prop:value=move || d.sample.get() on:input=move |ev| d.sample.set(event_target_value(&ev))></textarea>
                <button type="button" class="secondary" on:click=simulate disabled=move || !hydrated.get() || d.simulated.pending().get()>
                    "Simulate"
                </button>
                {move || d.invalid.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                <ActionError action=d.simulated />
                {move || d.simulated.value().get().and_then(Result::ok).map(|alerts| view! { <Simulated alerts /> })}
                <ActionError action=d.save />
                <ActionDone action=d.save text="Saved: the next alerts are routed by these rules." />
                <button type="submit" class="primary" disabled=move || !hydrated.get() || d.save.pending().get()>
                    "Save rules"
                </button>
            </form>
        </details>
    }
    .into_any()
}

/// One rule's fields, read and written by its key. A text is kept as it is typed and again when
/// it is committed (`change`), so a value set without typing (autofill) is not lost on a redraw.
#[component]
fn RuleFields(d: RulesDraft, key: usize, id: i64) -> impl IntoView {
    let get = move |f: fn(&RuleText) -> String| {
        move || {
            d.rules
                .with(|v| v.iter().find(|r| r.key == key).map(f).unwrap_or_default())
        }
    };
    let action = get(|r| r.action.clone());
    let position = move || {
        d.rules
            .with(|v| v.iter().position(|r| r.key == key).unwrap_or(0) + 1)
    };
    let f = move |name: &str| format!("rule-{id}-{key}-{name}");
    let remove = move |_| d.rules.update(|v| v.retain(|r| r.key != key));
    let up = move |_| {
        d.rules.update(|v| {
            if let Some(i) = v.iter().position(|r| r.key == key).filter(|i| *i > 0) {
                v.swap(i, i - 1);
            }
        })
    };
    view! {
        <li class="rule">
            <fieldset class="stack">
                <legend>{move || format!("Rule {}", position())}</legend>
                <label for=f("matchers")>"Matchers"</label>
                <input id=f("matchers") type="text" class="code" autocomplete="off" spellcheck="false"
                    placeholder="{service=~\"db-.*\"}"
                    prop:value=get(|r| r.matchers.clone())
                    on:input=move |ev| d.edit(key, |r| r.matchers = event_target_value(&ev))
                    on:change=move |ev| d.edit(key, |r| r.matchers = event_target_value(&ev)) />
                <label for=f("action")>"Then"</label>
                <select id=f("action") prop:value=action
                    on:change=move |ev| d.edit(key, |r| r.action = event_target_value(&ev))>
                    <option value="keep">"Keep it in this team"</option>
                    <option value="team">"Send it to another team"</option>
                    <option value="drop">"Drop it (no alert, no page)"</option>
                </select>
                <div class="stack" hidden=move || action() != "team">
                    <label for=f("team")>"Team (its name; one you are in)"</label>
                    <input id=f("team") type="text" autocomplete="off" prop:value=get(|r| r.team.clone())
                        on:input=move |ev| d.edit(key, |r| r.team = event_target_value(&ev))
                        on:change=move |ev| d.edit(key, |r| r.team = event_target_value(&ev)) />
                </div>
                <div class="stack" hidden=move || action() == "drop">
                    <label for=f("severity")>"Severity"</label>
                    <select id=f("severity") prop:value=get(|r| r.severity.clone())
                        on:change=move |ev| d.edit(key, |r| r.severity = event_target_value(&ev))>
                        <option value="">"As sent"</option>
                        <option value="critical">"critical"</option>
                        <option value="warning">"warning"</option>
                        <option value="info">"info"</option>
                    </select>
                    <label for=f("labels")>"Labels to set"</label>
                    <textarea id=f("labels") class="code" rows="2" spellcheck="false" placeholder="routed: db"
                        prop:value=get(|r| r.labels.clone())
                        on:input=move |ev| d.edit(key, |r| r.labels = event_target_value(&ev))></textarea>
                </div>
                <div class="with-button">
                    <button type="button" class="secondary" on:click=up disabled=move || position() == 1>"Move up"</button>
                    <button type="button" class="secondary" on:click=remove>"Remove"</button>
                </div>
            </fieldset>
        </li>
    }
    .into_any()
}

/// What each alert of the sample would do.
#[component]
fn Simulated(alerts: Vec<SimulatedAlert>) -> impl IntoView {
    let line = |a: SimulatedAlert| {
        let name = a.alertname.clone().unwrap_or_else(|| a.fingerprint.clone());
        let what = match a.decision {
            None => "goes where that alert is".to_string(),
            Some(d) => d
                .said
                .unwrap_or_else(|| "no rule matched: stays here as sent".to_string()),
        };
        view! { <li><strong>{name}</strong>": "{what}</li> }
    };
    view! {
        <div class="preview" role="status" aria-label="What this request would do">
            {if alerts.is_empty() {
                view! { <p>"No alerts in this request."</p> }.into_any()
            } else {
                view! { <ul>{alerts.into_iter().map(line).collect_view()}</ul> }.into_any()
            }}
        </div>
    }
    .into_any()
}
