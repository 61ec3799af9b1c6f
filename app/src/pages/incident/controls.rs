//! The incident's controls: snooze, assign, add a note, archive, and the action bar with
//! Acknowledge and Resolve. Which are shown is what the server said the caller may do.

use super::Actions;
use crate::api::incidents::{ExpireSilence, SilenceIncident};
use crate::components::form::{clear_on_success, failed, ActionError, Fold};
use klaxon_domain::alerting::AlertStatus;
use klaxon_domain::incident_page::{IncidentRights, IncidentView};
use klaxon_domain::silence::{describe, SilencePreview};
use klaxon_domain::team::Member;
use leptos::prelude::*;

/// Snooze choices: (value sent, words on the button).
const SNOOZES: &[(&str, &str)] = &[("30m", "30 min"), ("1h", "1 hour"), ("4h", "4 hours")];
/// Silence choices, the same way.
const SILENCES: &[(&str, &str)] = &[("1h", "1 hour"), ("4h", "4 hours"), ("1d", "1 day")];

/// Snooze, assign, add a note, archive; and the action bar with Acknowledge and Resolve.
#[component]
pub(super) fn Controls(
    data: IncidentView,
    actions: Actions,
    live: Memo<Option<IncidentRights>>,
) -> impl IntoView {
    // Long by design: one view of the incident's actions, which share its signals.
    let id = data.detail.incident.id;
    let start = data.may;
    // Plain closures over the page's own memo, not signals of this view: when a failed reload
    // replaces these controls, effects of the old view may still run once, and must not touch
    // anything disposed with it.
    let may = move || live.get().unwrap_or(start);
    let is_open = move || may().resolve;
    let is_snoozed = move || may().unsnooze;
    let archived = move || may().unarchive;
    let members = data.assignable.clone();
    let me = data.me;
    let Actions {
        ack,
        resolve,
        snooze,
        unsnooze,
        assign,
        note,
        archive,
        silence,
        unsilence,
        ..
    } = actions;
    // A stored note empties and folds its form: a second tap must not add it again.
    let noted = clear_on_success(note);
    let silence_view = data.silence.clone();
    // "Silence it instead" opens the silence card (the link alone does without the wasm).
    let silence_open = RwSignal::new(false);
    let firing = data
        .detail
        .alerts
        .iter()
        .filter(|a| a.status == AlertStatus::Firing)
        .count();

    view! {
        <section class="controls" aria-label="More actions">
            <Fold key="snooze" class="card" hidden=move || !is_open() open=move || failed(snooze) || failed(unsnooze)>
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
            </Fold>
            <Fold key="assign" class="card" hidden=move || !is_open() open=move || failed(assign)>
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
            </Fold>
            <Fold key="note" class="card" open=move || failed(note)>
                <summary>"Add a note"</summary>
                <ActionForm action=note node_ref=noted attr:class="stack">
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
            </Fold>
            <Silencing id preview=silence_view silence unsilence open=silence_open />
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
                    // `#acknowledge` is where a team channel's Acknowledge link lands: the button, not an act.
                    <button id="acknowledge" type="submit" class="primary big" hidden=move || !may().acknowledge disabled=move || ack.pending().get()>
                        "Acknowledge"
                    </button>
                </ActionForm>
                <Fold key="resolve" class="resolve" open=move || failed(resolve)>
                    <summary class="big">"Resolve"</summary>
                    {(firing > 0).then(|| view! {
                        <p class="warning" id="still-firing">
                            {match firing { 1 => "Its alert is still firing".to_string(), n => format!("{n} of its alerts are still firing") }}
                            ": Alertmanager sends firing alerts again, and the next one opens a new incident. "
                            <a href="#silence" on:click=move |_| silence_open.set(true)>"Silence it instead"</a>
                        </p>
                    })}
                    <ActionForm action=resolve attr:class="stack">
                        <input type="hidden" name="id" value=id />
                        <label for="resolution">"What fixed it?"</label>
                        <textarea id="resolution" name="resolution" rows="3" aria-describedby="resolution-hint"></textarea>
                        <p id="resolution-hint" class="hint">"Optional. Whoever gets this alert next will see it."</p>
                        <ActionError action=resolve />
                        <button type="submit" class="primary big" disabled=move || resolve.pending().get()>"Resolve incident"</button>
                    </ActionForm>
                </Fold>
            </div>
        </section>
    }
    .into_any()
}

/// What the last action did, said to screen readers (the page's change shows it to the eye).
/// It sits outside the controls, which are drawn anew after every action: a live region must
/// already be in the page when its text changes, or it is not read out.
#[component]
pub(super) fn Announcer(actions: Actions) -> impl IntoView {
    let said = RwSignal::new("");
    macro_rules! say {
        ($action:expr, $text:expr) => {
            Effect::new(move |_| {
                if let Some(Ok(_)) = $action.value().get() {
                    said.set($text);
                }
            });
        };
    }
    say!(
        actions.ack,
        "Acknowledged: you have it; reminders have stopped."
    );
    say!(actions.resolve, "Resolved.");
    say!(actions.snooze, "Snoozed.");
    say!(actions.unsnooze, "Woken: paging resumes.");
    say!(actions.assign, "Assigned.");
    say!(actions.note, "Note added.");
    say!(actions.archive, "Archive changed.");
    say!(actions.silence, "Silenced in Alertmanager.");
    say!(actions.unsilence, "Silence expired.");
    view! { <p class="sr-only" role="status" aria-live="polite">{move || said.get()}</p> }
}

/// Silencing the incident's alerts in Alertmanager: the matchers are shown before anything is
/// sent; a silence in force can be expired early.
#[component]
fn Silencing(
    id: i64,
    preview: SilencePreview,
    silence: ServerAction<SilenceIncident>,
    unsilence: ServerAction<ExpireSilence>,
    open: RwSignal<bool>,
) -> impl IntoView {
    let SilencePreview {
        matchers,
        unavailable,
        active,
    } = preview;
    let body = match (active, unavailable) {
        (Some(s), _) => view! {
            <p>{format!("Silenced until {}.", crate::components::text::when(s.ends_at))}</p>
            <p class="hint">"Matching "<code>{describe(&s.matchers)}</code></p>
            <ActionForm action=unsilence attr:class="stack">
                <input type="hidden" name="id" value=id />
                <button type="submit" class="secondary wide" disabled=move || unsilence.pending().get()>"Expire the silence now"</button>
            </ActionForm>
            <ActionError action=unsilence />
        }
        .into_any(),
        (None, Some(why)) => view! { <p class="hint">{why}</p> }.into_any(),
        (None, None) => view! {
            <p class="hint">"Alertmanager stops notifying alerts that match "<code>{describe(&matchers)}</code></p>
            <ActionForm action=silence attr:class="choices">
                <input type="hidden" name="id" value=id />
                {SILENCES
                    .iter()
                    .map(|(value, words)| view! {
                        <button type="submit" class="secondary" name="duration" value=*value aria-label=format!("Silence for {words}")>
                            {*words}
                        </button>
                    })
                    .collect_view()}
            </ActionForm>
            <ActionError action=silence />
        }
        .into_any(),
    };
    view! {
        <Fold key="silence" class="card" id="silence" open=move || open.try_get().unwrap_or(false) || failed(silence) || failed(unsilence)>
            <summary>"Silence in Alertmanager"</summary>
            {body}
        </Fold>
    }
}
