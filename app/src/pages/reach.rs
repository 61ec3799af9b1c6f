//! "Ways to reach you" on the profile: the person's roads (this phone by Web Push, an email
//! address, a Matrix account or a webhook verified by a code, more ntfy topics), each with a
//! test, and the rules that order them per urgency, with their time zone and quiet hours.

use crate::api::load;
use crate::api::reach::{
    get_reach, AddContactMethod, DeleteContactMethod, Reach, ResendContactCode,
    SetNotificationRules, TestContactMethod, VerifyContactMethod,
};
use crate::components::form::{clear_on_success, ActionDone, ActionError};
use crate::components::hydration::use_hydrated;
use crate::components::loaded::{Failed, Loading};
use crate::components::secret::ShownOnce;
use crate::components::text::sentence;
use klaxon_domain::contact::{AddForm, ContactKind, ContactMethod, RoadWords};
use klaxon_domain::rules::{NotificationRules, QuietHours, Step, MAX_AFTER_MINUTES, MAX_STEPS};
use klaxon_domain::text::{ClockTime, ZoneName};
use leptos::ev::SubmitEvent;
use leptos::prelude::*;

/// `add` is shared with the push card's "Page this phone", so the list shows what it adds.
#[component]
pub fn ReachCard(add: ServerAction<AddContactMethod>) -> impl IntoView {
    let delete = ServerAction::<DeleteContactMethod>::new();
    let verify = ServerAction::<VerifyContactMethod>::new();
    let save = ServerAction::<SetNotificationRules>::new();
    let reach = load(
        move || {
            (
                add.version().get(),
                delete.version().get(),
                verify.version().get(),
                save.version().get(),
            )
        },
        |_| get_reach(),
    );
    view! {
        <section class="card" aria-labelledby="reach-title">
            <h2 id="reach-title">"Ways to reach you"</h2>
            <p class="hint">"Pages go to each of these in the order your rules below set. When one fails, the next is tried at once."</p>
            <Suspense fallback=Loading>
                {move || Suspend::new(async move {
                    match reach.await {
                        Ok(r) => view! {
                            <Roads reach=r.clone() delete verify />
                            <AddRoads reach=r.clone() add />
                            <RulesEditor reach=r save />
                        }
                        .into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| reach.refetch() /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

/// How the profile names a road, in the road's own words.
fn words_of(roads: &[RoadWords], kind: ContactKind) -> (String, String) {
    roads.iter().find(|w| w.kind == kind).map_or_else(
        || (kind.as_str().to_string(), "Code".to_string()),
        |w| (w.listed_as.clone(), w.code_from.clone()),
    )
}

/// The person's roads, each with a test and a way to remove it; an address waiting for its
/// code has the code's field.
#[component]
fn Roads(
    reach: Reach,
    delete: ServerAction<DeleteContactMethod>,
    verify: ServerAction<VerifyContactMethod>,
) -> impl IntoView {
    let test = ServerAction::<TestContactMethod>::new();
    let resend = ServerAction::<ResendContactCode>::new();
    let push_topic = reach.push_topic.clone();
    view! {
        <ul class="roads" aria-label="Where pages reach you">
            {push_topic.map(|t| view! {
                <li class="road">
                    <span class="row-main"><strong>"Push topic"</strong><span class="meta">{format!("ntfy topic · {t}")}</span></span>
                </li>
            })}
            {reach.methods.into_iter().map(|m| {
                let words = words_of(&reach.roads, m.kind);
                view! { <Road m words delete verify test resend /> }
            }).collect_view()}
        </ul>
        <ActionError action=test />
        <ActionDone action=test text="Test sent." />
        <ActionError action=delete />
        <ActionError action=verify />
        <ActionError action=resend />
        <ActionDone action=resend text="A new code is on its way." />
    }
}

#[component]
fn Road(
    m: ContactMethod,
    /// How the list names its road, and its code field.
    words: (String, String),
    delete: ServerAction<DeleteContactMethod>,
    verify: ServerAction<VerifyContactMethod>,
    test: ServerAction<TestContactMethod>,
    resend: ServerAction<ResendContactCode>,
) -> impl IntoView {
    let id = m.id;
    let code_id = format!("code-{id}");
    let test_label = format!("Send a test to {}", m.name);
    let remove_label = format!("Remove {}", m.name);
    view! {
        <li class="road">
            <span class="row-main">
                <strong>{m.name.clone()}</strong>
                <span class="meta">{format!("{} · {}", words.0, m.target)}</span>
                {(!m.verified).then(|| view! { <span class="chip">"waiting for its code"</span> })}
            </span>
            {(!m.verified).then(|| view! {
                <ActionForm action=verify attr:class="stack">
                    <input type="hidden" name="method_id" value=id />
                    <label for=code_id.clone()>{words.1}</label>
                    <input id=code_id name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="20" />
                    <button type="submit" class="primary">"Verify"</button>
                </ActionForm>
                <ActionForm action=resend>
                    <input type="hidden" name="method_id" value=id />
                    <button type="submit" class="secondary">"Send a new code"</button>
                </ActionForm>
            })}
            <div class="road-actions">
                {m.verified.then(|| view! {
                    <ActionForm action=test>
                        <input type="hidden" name="method_id" value=id />
                        <button type="submit" class="secondary" aria-label=test_label.clone()>"Send a test"</button>
                    </ActionForm>
                })}
                <ActionForm action=delete>
                    <input type="hidden" name="method_id" value=id />
                    <button type="submit" class="danger" aria-label=remove_label>"Remove"</button>
                </ActionForm>
            </div>
        </li>
    }
}

/// "Page this phone": subscribes this browser to Web Push and adds it as a road.
#[component]
pub fn PageThisPhone(key: String, add: ServerAction<AddContactMethod>) -> impl IntoView {
    let hydrated = use_hydrated();
    let phone_error = RwSignal::new(None::<String>);
    let subscribing = RwSignal::new(false);
    let page_this_phone = move |_| {
        let key = key.clone();
        subscribing.set(true);
        phone_error.set(None);
        leptos::task::spawn_local(async move {
            match browser::subscribe(&key).await {
                Ok(subscription) => {
                    add.dispatch(AddContactMethod {
                        kind: "webpush".into(),
                        name: browser::device_name(),
                        target: subscription,
                    });
                }
                Err(e) => phone_error.set(Some(e)),
            }
            subscribing.set(false);
        });
    };
    view! {
        <button type="button" class="primary wide" on:click=page_this_phone disabled=move || !hydrated.get() || subscribing.get()>
            {move || if subscribing.get() { "Asking this phone…" } else { "Page this phone" }}
        </button>
        <p class="hint">"Pages arrive as notifications from this app, with an Acknowledge button, even when it is closed. On an iPhone, add Klaxon to the Home Screen first; there a tap opens the incident."</p>
        <p class="error" role="alert" hidden=move || phone_error.get().is_none()>{move || phone_error.get()}</p>
    }
}

/// Adding a road: a form for each road this server lets a person add, in the road's own words
/// ("Page this phone" is on the push card above).
#[component]
fn AddRoads(reach: Reach, add: ServerAction<AddContactMethod>) -> impl IntoView {
    let forms = reach
        .roads
        .into_iter()
        .filter_map(|w| w.form.map(|f| view! { <AddRoad kind=w.kind form=f add /> }))
        .collect_view();
    view! {
        <div class="stack add-roads">
            {forms}
            {move || add.value().get().and_then(Result::ok).and_then(|m| {
                let name = m.name.clone();
                m.signing_secret.map(|secret| view! {
                    <ShownOnce id="new-road-secret" label=format!("Signing secret of “{name}”") value=secret>
                        <p class="hint">
                            "Each post carries Klaxon-Signature: t=…,v1=…, the hex HMAC-SHA256 of \"t.body\" with this secret. Refuse a post whose t is more than 5 minutes from your clock."
                        </p>
                    </ShownOnce>
                })
            })}
            <ActionError action=add />
        </div>
    }
}

/// One road's form; folded under its summary when few people add it.
#[component]
fn AddRoad(kind: ContactKind, form: AddForm, add: ServerAction<AddContactMethod>) -> impl IntoView {
    let id = format!("new-{}", kind.as_str());
    let inputmode = (form.input == "url").then_some("url");
    // A phone number is offered from the phone's own autofill.
    let autocomplete = matches!(form.input.as_str(), "email" | "tel").then_some(form.input.clone());
    let placeholder = (!form.placeholder.is_empty()).then_some(form.placeholder);
    let hint = (!form.hint.is_empty()).then(|| view! { <p class="hint">{form.hint}</p> });
    // Once added, the address is in the list above; the form empties and folds.
    let added = clear_on_success(add);
    let fields = view! {
        <ActionForm action=add node_ref=added attr:class="stack">
            <input type="hidden" name="kind" value=kind.as_str() />
            <input type="hidden" name="name" value=form.name />
            <label for=id.clone()>{form.field}</label>
            <input id=id name="target" type=form.input inputmode=inputmode autocomplete=autocomplete placeholder=placeholder autocapitalize="none" spellcheck="false" />
            {hint}
            <button type="submit" class="secondary wide">{form.button}</button>
        </ActionForm>
    };
    match form.folded {
        Some(summary) => view! {
            <details class="inner">
                <summary>{summary}</summary>
                {fields}
            </details>
        }
        .into_any(),
        None => fields.into_any(),
    }
}

/// One step as it is being edited: its delay in minutes and its road ("" is the push topic).
#[derive(Clone, Copy)]
struct DraftStep {
    key: usize,
    after: RwSignal<String>,
    method: RwSignal<String>,
}

fn drafts(steps: &[Step], next: &mut usize) -> Vec<DraftStep> {
    steps
        .iter()
        .map(|s| {
            *next += 1;
            DraftStep {
                key: *next,
                after: RwSignal::new(s.after_minutes.to_string()),
                method: RwSignal::new(s.method_id.map(|m| m.to_string()).unwrap_or_default()),
            }
        })
        .collect()
}

fn steps_of(drafts: &[DraftStep], what: &str) -> Result<Vec<Step>, String> {
    drafts
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let after_minutes = d
                .after
                .get_untracked()
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|m| *m <= MAX_AFTER_MINUTES)
                .ok_or_else(|| {
                    format!(
                        "{what}, step {}: minutes must be 0 to {MAX_AFTER_MINUTES}",
                        i + 1
                    )
                })?;
            Ok(Step {
                after_minutes,
                method_id: d.method.get_untracked().parse().ok(),
            })
        })
        .collect()
}

/// The rules: steps for high urgency, optionally other steps for low urgency, time zone and
/// quiet hours. Saving replaces them all.
#[component]
fn RulesEditor(reach: Reach, save: ServerAction<SetNotificationRules>) -> impl IntoView {
    // Long by design: one form; its steps, zone and quiet hours share its signals.
    let hydrated = use_hydrated();
    let rules = reach.rules.clone();
    let mut next = 0;
    let high = RwSignal::new(drafts(&rules.high, &mut next));
    let low = RwSignal::new(drafts(&rules.low, &mut next));
    let next = StoredValue::new(next);
    let own_low = RwSignal::new(!rules.low.is_empty());
    let zone = RwSignal::new(rules.time_zone.as_deref().unwrap_or_default().to_string());
    let quiet = RwSignal::new(rules.quiet_hours.is_some());
    let start = RwSignal::new(
        rules
            .quiet_hours
            .as_ref()
            .map_or("22:00".to_string(), |q| q.start.to_string()),
    );
    let end = RwSignal::new(
        rules
            .quiet_hours
            .as_ref()
            .map_or("07:00".to_string(), |q| q.end.to_string()),
    );
    // A person who never chose a zone is offered this phone's.
    Effect::new(move |_| {
        if zone.get_untracked().is_empty() {
            if let Some(z) = browser::time_zone() {
                zone.set(z);
            }
        }
    });
    let mut choices = Vec::new();
    if reach.push_topic.is_some() {
        // The topic's name is long and random, cut short in a select: the person knows it as theirs.
        choices.push((String::new(), "Your ntfy topic".to_string()));
    }
    for m in reach.methods.iter().filter(|m| m.verified) {
        choices.push((
            m.id.to_string(),
            format!("{} ({})", m.name, words_of(&reach.roads, m.kind).0),
        ));
    }
    let choices = StoredValue::new(choices);
    let invalid = RwSignal::new(None::<String>);
    let submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        let built = (|| -> Result<NotificationRules, String> {
            let high = high.with_untracked(|d| steps_of(d, "High urgency"))?;
            let low = if own_low.get_untracked() {
                low.with_untracked(|d| steps_of(d, "Low urgency"))?
            } else {
                Vec::new()
            };
            let zone = zone.get_untracked();
            let time_zone = if zone.trim().is_empty() {
                None
            } else {
                Some(ZoneName::parse(zone.trim()).map_err(|e| format!("Time zone {e}"))?)
            };
            let quiet_hours = if quiet.get_untracked() {
                Some(QuietHours {
                    start: ClockTime::parse(&start.get_untracked())
                        .map_err(|e| format!("Quiet hours start {e}"))?,
                    end: ClockTime::parse(&end.get_untracked())
                        .map_err(|e| format!("Quiet hours end {e}"))?,
                })
            } else {
                None
            };
            let rules = NotificationRules {
                high,
                low,
                time_zone,
                quiet_hours,
            };
            rules.validate()?;
            Ok(rules)
        })();
        match built {
            Ok(rules) => {
                invalid.set(None);
                save.dispatch(SetNotificationRules { rules });
            }
            Err(e) => invalid.set(Some(sentence(&e))),
        }
    };
    let add_step = move |list: RwSignal<Vec<DraftStep>>| {
        let key = next.get_value() + 1;
        next.set_value(key);
        let after = list.with_untracked(|l| {
            l.last().map_or(0, |s| {
                s.after.get_untracked().parse::<u32>().unwrap_or(0) + 5
            })
        });
        list.update(|l| {
            l.push(DraftStep {
                key,
                after: RwSignal::new(after.to_string()),
                method: RwSignal::new(String::new()),
            })
        });
    };

    view! {
        <form class="stack rules-editor" novalidate on:submit=submit>
            <h3>"When you are paged"</h3>
            <StepList list=high label="high" choices />
            <button type="button" class="secondary wide" on:click=move |_| add_step(high)
                disabled=move || !hydrated.get() || high.with(|l| l.len() >= MAX_STEPS)>
                "Add a step"
            </button>
            <p class="hint">"With no steps, every road above is paged at once."</p>
            <label class="check" for="own-low">
                <input id="own-low" type="checkbox" checked=own_low.get_untracked()
                    on:change=move |ev| own_low.set(event_target_checked(&ev)) />
                "Other steps for low-urgency pages"
            </label>
            <div hidden=move || !own_low.get()>
                <StepList list=low label="low" choices />
                <button type="button" class="secondary wide" on:click=move |_| add_step(low)
                    disabled=move || !hydrated.get() || low.with(|l| l.len() >= MAX_STEPS)>
                    "Add a low-urgency step"
                </button>
            </div>
            <label for="time-zone">"Your time zone"</label>
            <input id="time-zone" type="text" autocapitalize="none" spellcheck="false" placeholder="Europe/Berlin"
                prop:value=move || zone.get() on:input=move |ev| zone.set(event_target_value(&ev)) />
            <label class="check" for="quiet">
                <input id="quiet" type="checkbox" checked=quiet.get_untracked()
                    on:change=move |ev| quiet.set(event_target_checked(&ev)) />
                "Quiet hours"
            </label>
            <div class="quiet-hours" hidden=move || !quiet.get()>
                <label for="quiet-start">"From"</label>
                <input id="quiet-start" type="time" prop:value=move || start.get() on:input=move |ev| start.set(event_target_value(&ev)) />
                <label for="quiet-end">"Until"</label>
                <input id="quiet-end" type="time" prop:value=move || end.get() on:input=move |ev| end.set(event_target_value(&ev)) />
                <p class="hint">"Low-urgency pages wait until the end of your quiet hours. High-urgency pages never wait."</p>
            </div>
            <p class="error" role="alert" hidden=move || invalid.get().is_none()>{move || invalid.get()}</p>
            <ActionError action=save />
            <ActionDone action=save text="Rules saved." />
            <button type="submit" class="primary big" disabled=move || !hydrated.get() || save.pending().get()>"Save rules"</button>
        </form>
    }
}

#[component]
fn StepList(
    list: RwSignal<Vec<DraftStep>>,
    label: &'static str,
    choices: StoredValue<Vec<(String, String)>>,
) -> impl IntoView {
    view! {
        <ol class="steps">
            <For each=move || list.get() key=|s| s.key children=move |s| {
                let minutes_id = format!("{label}-step-{}-minutes", s.key);
                let road_id = format!("{label}-step-{}-road", s.key);
                let chosen = s.method.get_untracked();
                view! {
                    <li class="step">
                        <label for=minutes_id.clone()>"After minutes"</label>
                        <input id=minutes_id type="number" min="0" max="1440" inputmode="numeric"
                            prop:value=move || s.after.get() on:input=move |ev| s.after.set(event_target_value(&ev)) />
                        <label class="whole" for=road_id.clone()>"Page by"</label>
                        <select class="whole" id=road_id on:change=move |ev| s.method.set(event_target_value(&ev))>
                            {choices.get_value().into_iter().map(|(value, name)| {
                                let selected = value == chosen;
                                view! { <option value=value selected=selected>{name}</option> }
                            }).collect_view()}
                        </select>
                        <button type="button" class="danger" on:click=move |_| list.update(|l| l.retain(|x| x.key != s.key))>"Remove step"</button>
                    </li>
                }
            } />
        </ol>
    }
}

/// What only the browser knows: its push subscription and its time zone.
mod browser;
