//! A team's escalation ladder: who is paged, in which order, and how long each level waits
//! for an acknowledgement. Owners edit it here; everyone else sees it read-only.

use crate::api::failure;
use crate::api::load;
use crate::api::paging::{get_escalation_policy, SetEscalationPolicy};
use crate::api::teams::{get_team, list_members};
use crate::components::hydration::use_hydrated;
use crate::components::loaded::{Failed, Loading};
use crate::components::team_page::TeamSubpageHeading;
use crate::components::text::{sentence, span};
use klaxon_domain::alerting::Severity;
use klaxon_domain::paging::{EscalationPolicy, Level, Target, MAX_LEVELS, MAX_REPEAT};
use klaxon_domain::team::Member;
use klaxon_domain::text::Topic;
use klaxon_domain::Duration;
use leptos::ev::SubmitEvent;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

/// What a team without a ladder gets instead.
const NO_LADDER: &str = "No ladder: the first page goes to whoever is on call today (or the \
    fallback topic), then pages them again every few minutes (how often is the administrator's \
    “Page again every”) until someone acknowledges.";

/// Timeout offered for a new level.
const NEW_LEVEL_TIMEOUT: &str = "15m";

#[component]
pub fn TeamEscalationPage() -> impl IntoView {
    let params = use_params_map();
    // A malformed id is asked for anyway: the server answers it like any unknown team.
    let id = move || params.with(|p| p.get("id").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0));
    let team = load(id, get_team);
    let members = load(id, list_members);
    let policy = load(id, get_escalation_policy);

    view! {
        <TeamSubpageHeading team team_id=Signal::derive(id) title="Escalation" />
        <p class="hint">
            "When an incident opens, level 1 is paged. If nobody acknowledges before its timeout, the next level is paged, and so on down the ladder."
        </p>
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                let team_id = id();
                let (policy, members, team) = match (policy.await, members.await, team.await) {
                    (Ok(p), Ok(m), Ok(t)) => (p, m, t),
                    (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                        return view! { <Failed error=e /> }.into_any();
                    }
                };
                // The server says whether the caller may change the ladder; it checks again on saving.
                if team.may_manage {
                    view! { <LadderEditor team_id policy members /> }.into_any()
                } else {
                    view! {
                        <LadderView policy members />
                        <p class="hint">"Only the team's owners can change the ladder."</p>
                    }
                    .into_any()
                }
            })}
        </Suspense>
    }
}

/// A target in words.
fn target_name(target: &Target, members: &[Member]) -> String {
    match target {
        Target::Oncall => "whoever is on call today".to_string(),
        Target::User { user_id } => members
            .iter()
            .find(|m| m.user_id == *user_id)
            .map(|m| m.username.clone())
            .unwrap_or_else(|| format!("user {user_id}")),
    }
}

/// "Runs once", "then runs again twice", in words.
fn repeat_words(repeat: u32) -> String {
    match repeat {
        0 => "No: stop after the last level".to_string(),
        1 => "Once more".to_string(),
        n => format!("{n} more times"),
    }
}

/// The ladder as it is, for members who are not owners.
#[component]
fn LadderView(policy: EscalationPolicy, members: Vec<Member>) -> impl IntoView {
    if policy.levels.is_empty() {
        let fallback = policy.fallback_topic.clone();
        return view! {
            <p class="empty">{NO_LADDER}</p>
            {fallback.map(|t| view! { <p>{format!("Fallback topic: {t}")}</p> })}
        }
        .into_any();
    }
    let after = match (policy.repeat, &policy.fallback_topic) {
        (0, None) => "After the last level, nobody else is paged.".to_string(),
        (0, Some(t)) => format!("After the last level, the fallback topic {t} is paged once."),
        (n, None) => format!("After the last level, the ladder runs again ({}).", repeat_words(n).to_lowercase()),
        (n, Some(t)) => format!(
            "After the last level, the ladder runs again ({}), then the fallback topic {t} is paged once.",
            repeat_words(n).to_lowercase()
        ),
    };
    view! {
        <ol class="ladder" aria-label="Escalation ladder">
            {policy
                .levels
                .iter()
                .enumerate()
                .map(|(i, level)| {
                    let who = level
                        .targets
                        .iter()
                        .map(|t| target_name(t, &members))
                        .collect::<Vec<_>>()
                        .join(", ");
                    view! {
                        <li class="ladder-level">
                            <span class="ladder-step" aria-hidden="true">{i + 1}</span>
                            <span class="row-main">
                                <strong>{format!("Level {}", i + 1)}</strong>
                                <span>{format!("Pages {who}")}</span>
                                <span class="meta">{format!("Waits {} for an acknowledgement", span(level.timeout.as_secs()))}</span>
                            </span>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
        <p>{after}</p>
    }
    .into_any()
}

/// One level as it is being edited.
#[derive(Clone, Copy)]
struct DraftLevel {
    key: usize,
    timeout: RwSignal<String>,
    targets: RwSignal<Vec<Target>>,
}

impl DraftLevel {
    fn new(key: usize, timeout: String, targets: Vec<Target>) -> Self {
        DraftLevel {
            key,
            timeout: RwSignal::new(timeout),
            targets: RwSignal::new(targets),
        }
    }
}

/// The policy the editor holds, checked by the same rules the server applies.
fn draft_policy(
    levels: &[DraftLevel],
    repeat: u32,
    fallback: &str,
    low_urgency: Vec<Severity>,
) -> Result<EscalationPolicy, String> {
    let levels = levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let timeout = l
                .timeout
                .get_untracked()
                .trim()
                .parse::<Duration>()
                .map_err(|e| format!("level {}: timeout {e}", i + 1))?;
            Ok(Level {
                timeout,
                targets: l.targets.get_untracked(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let fallback_topic = Topic::parse(fallback).map_err(|e| format!("Fallback topic {e}."))?;
    EscalationPolicy {
        levels,
        repeat,
        fallback_topic: Some(fallback_topic),
        low_urgency,
    }
    .validate()
}

/// The owner's editor: levels with a timeout and targets each, the repeat count and the
/// fallback topic. Saving replaces the whole policy.
#[component]
fn LadderEditor(team_id: i64, policy: EscalationPolicy, members: Vec<Member>) -> impl IntoView {
    // Long by design: one form, whose levels share the draft's signals.
    let next_key = StoredValue::new(policy.levels.len());
    let levels = RwSignal::new(
        policy
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| DraftLevel::new(i, l.timeout.to_string(), l.targets.clone()))
            .collect::<Vec<_>>(),
    );
    let first_repeat = policy.repeat;
    let repeat = RwSignal::new(first_repeat);
    let fallback = RwSignal::new(
        policy
            .fallback_topic
            .as_deref()
            .unwrap_or_default()
            .to_string(),
    );
    let low_urgency = RwSignal::new(policy.low_urgency.clone());
    let save = ServerAction::<SetEscalationPolicy>::new();
    // The editor's own objection, found before asking the server.
    let invalid = RwSignal::new(None::<String>);
    // True after any change since the last save: "Saved." would no longer be true.
    let edited = RwSignal::new(false);
    let hydrated = use_hydrated();
    let members = StoredValue::new(members);

    let message = move || invalid.get().or_else(|| save.value().with(failure));
    let done = move || {
        !edited.get() && invalid.get().is_none() && save.value().with(|v| matches!(v, Some(Ok(_))))
    };
    let add = move |_| {
        let key = next_key.get_value();
        next_key.set_value(key + 1);
        // The first level usually pages the rota; later ones are chosen by hand.
        let targets = if levels.with(Vec::is_empty) {
            vec![Target::Oncall]
        } else {
            Vec::new()
        };
        levels.update(|ls| ls.push(DraftLevel::new(key, NEW_LEVEL_TIMEOUT.into(), targets)));
        edited.set(true);
    };
    let remove = move |key: usize| {
        levels.update(|ls| ls.retain(|l| l.key != key));
        edited.set(true);
    };
    let submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        let policy = levels.with_untracked(|ls| {
            draft_policy(
                ls,
                repeat.get_untracked(),
                &fallback.get_untracked(),
                low_urgency.get_untracked(),
            )
        });
        edited.set(false);
        match policy {
            Ok(policy) => {
                invalid.set(None);
                save.dispatch(SetEscalationPolicy { team_id, policy });
            }
            Err(e) => invalid.set(Some(sentence(&e))),
        }
    };

    view! {
        <form class="ladder-editor" on:submit=submit on:input=move |_| edited.set(true) on:change=move |_| edited.set(true)>
            <p class="empty" hidden=move || !levels.with(Vec::is_empty)>{NO_LADDER}</p>
            <For
                each=move || levels.get()
                key=|l| l.key
                children=move |level| view! { <LevelEditor level levels members remove /> }
            />
            <button
                type="button"
                class="secondary wide"
                on:click=add
                disabled=move || !hydrated.get() || levels.with(|ls| ls.len() >= MAX_LEVELS)
            >
                "Add a level"
            </button>
            <div class="card stack">
                <label for="ladder-repeat">"Run the ladder again"</label>
                <select
                    id="ladder-repeat"
                    aria-describedby="ladder-repeat-hint"
                    on:change=move |ev| repeat.set(event_target_value(&ev).parse().unwrap_or(0))
                >
                    {(0..=MAX_REPEAT)
                        .map(|n| view! { <option value=n selected=n == first_repeat>{repeat_words(n)}</option> })
                        .collect_view()}
                </select>
                <p id="ladder-repeat-hint" class="hint">"After the last level, start again from level 1 this many times."</p>
                <label for="ladder-fallback">"Fallback topic"</label>
                <input
                    id="ladder-fallback"
                    type="text"
                    autocapitalize="none"
                    spellcheck="false"
                    placeholder="ops-fallback"
                    value=fallback.get_untracked()
                    aria-describedby="ladder-fallback-hint"
                    on:input=move |ev| fallback.set(event_target_value(&ev))
                />
                <p id="ladder-fallback-hint" class="hint">
                    "Optional. A shared ntfy topic paged once when nobody acknowledged after the whole ladder, and for the first page when nobody on call can be reached."
                </p>
            </div>
            <fieldset class="card stack">
                <legend>"Low urgency"</legend>
                <p class="hint">"Pages of these severities wait out each person's quiet hours and follow their low-urgency rules. The rest are high urgency and never wait."</p>
                {Severity::ALL
                    .iter()
                    .map(|&severity| {
                        let id = format!("low-urgency-{}", severity.as_str());
                        let label_for = id.clone();
                        view! {
                            <label class="check" for=label_for>
                                <input
                                    id=id
                                    type="checkbox"
                                    checked=low_urgency.with_untracked(|l| l.contains(&severity))
                                    on:change=move |ev| {
                                        let on = event_target_checked(&ev);
                                        low_urgency.update(|l| {
                                            l.retain(|s| *s != severity);
                                            if on {
                                                l.push(severity);
                                            }
                                        });
                                    }
                                />
                                {severity.as_str()}
                            </label>
                        }
                    })
                    .collect_view()}
            </fieldset>
            <p class="error" role="alert" hidden=move || message().is_none()>{message}</p>
            <p class="done" role="status" hidden=move || !done()>"Saved."</p>
            <p class="hint" hidden=move || hydrated.get()>"Changing the ladder needs the page to finish loading."</p>
            <button type="submit" class="primary big" disabled=move || !hydrated.get() || save.pending().get()>
                "Save ladder"
            </button>
        </form>
    }
}

/// One level: its timeout, who it pages, and a way to remove it.
#[component]
fn LevelEditor(
    level: DraftLevel,
    levels: RwSignal<Vec<DraftLevel>>,
    members: StoredValue<Vec<Member>>,
    remove: impl Fn(usize) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let key = level.key;
    let number = move || {
        levels
            .with(|ls| ls.iter().position(|l| l.key == key))
            .map_or(0, |i| i + 1)
    };
    let timeout_id = format!("level-{key}-timeout");
    let hint_id = format!("level-{key}-timeout-hint");
    let mut choices = vec![(Target::Oncall, "Whoever is on call today".to_string())];
    choices.extend(
        members
            .get_value()
            .into_iter()
            .map(|m| (Target::User { user_id: m.user_id }, m.username)),
    );
    let targets = level.targets;

    view! {
        <fieldset class="card level">
            <legend>{move || format!("Level {}", number())}</legend>
            <p class="hint">
                {move || if number() == 1 {
                    "Paged as soon as the incident opens."
                } else {
                    "Paged when the level before did not acknowledge in time."
                }}
            </p>
            <div class="stack">
                <label for=timeout_id.clone()>"Timeout"</label>
                <input
                    id=timeout_id
                    type="text"
                    autocapitalize="none"
                    spellcheck="false"
                    value=level.timeout.get_untracked()
                    aria-describedby=hint_id.clone()
                    on:input=move |ev| level.timeout.set(event_target_value(&ev))
                />
                <p id=hint_id class="hint">"How long to wait for an acknowledgement before the next level, like 5m, 30m or 1h."</p>
            </div>
            <fieldset class="targets">
                <legend>"Who is paged"</legend>
                {choices
                    .into_iter()
                    .map(|(target, name)| {
                        let checked = targets.with_untracked(|t| t.contains(&target));
                        let toggle = move |ev| {
                            let on = event_target_checked(&ev);
                            targets.update(|t| {
                                t.retain(|x| *x != target);
                                if on {
                                    t.push(target);
                                }
                            });
                        };
                        view! {
                            <label class="check target">
                                <input type="checkbox" checked=checked on:change=toggle />
                                {name}
                            </label>
                        }
                    })
                    .collect_view()}
            </fieldset>
            <button type="button" class="danger wide" on:click=move |_| remove(key)>
                {move || format!("Remove level {}", number())}
            </button>
        </fieldset>
    }
}
