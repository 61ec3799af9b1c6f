//! A team's rota: take over today, take an open date, offer one's own, the rotations that fill
//! the schedule (owners preview before they apply), hand-off notices, and what changed lately.

use crate::api::rota::{
    get_rota, ApplyRotation, CreateRotation, DeleteRotation, SetHandoff, SetOffer, TakeDate,
    TakeOverNow,
};
use crate::api::teams::{get_team, list_members};
use crate::api::{load, Loaded};
use crate::components::form::{failed, ActionDone, ActionError, Confirm, Fold};
use crate::components::live::{use_page_live, TeamUpdates};
use crate::components::loaded::{Failed, Loading};
use crate::components::team_page::TeamSubpageHeading;
use crate::components::text::when;
use klaxon_domain::calendar::{days_from, short_day};
use klaxon_domain::live::EventKind;
use klaxon_domain::rotation::OpenReason;
use klaxon_domain::rotation::{Filling, NamedRotation, Rota};
use klaxon_domain::team::Member;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

/// How many days a rotation fills when the owner does not say.
const FILL_DAYS: usize = 28;

/// The page's actions, handed to its sections.
#[derive(Clone, Copy)]
struct Actions {
    take_over: ServerAction<TakeOverNow>,
    take: ServerAction<TakeDate>,
    offer: ServerAction<SetOffer>,
    create: ServerAction<CreateRotation>,
    remove: ServerAction<DeleteRotation>,
    fill: ServerAction<ApplyRotation>,
    handoff: ServerAction<SetHandoff>,
    /// The new rotation's turns as typed: the field can be drawn again when the members it
    /// starts from arrive late, and must keep what the person typed meanwhile.
    turns: RwSignal<Option<String>>,
}

impl Actions {
    fn version(&self) -> usize {
        self.take_over.version().get()
            + self.take.version().get()
            + self.offer.version().get()
            + self.create.version().get()
            + self.remove.version().get()
            + self.fill.version().get()
            + self.handoff.version().get()
    }
}

#[component]
pub fn TeamRotaPage() -> impl IntoView {
    let params = use_params_map();
    // A malformed id is asked for anyway: the server answers it like any unknown team.
    let id = move || params.with(|p| p.get("id").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0));
    let updates = use_page_live(move |kind, e| {
        matches!(kind, EventKind::Team | EventKind::Schedule) && e.id == id()
    });
    provide_context(TeamUpdates(updates));
    let actions = Actions {
        take_over: ServerAction::new(),
        take: ServerAction::new(),
        offer: ServerAction::new(),
        create: ServerAction::new(),
        remove: ServerAction::new(),
        fill: ServerAction::new(),
        handoff: ServerAction::new(),
        turns: RwSignal::new(None),
    };
    let team = load(move || (id(), updates.changes()), |(id, _)| get_team(id));
    let rota = load(
        move || (id(), updates.changes(), actions.version()),
        |(id, _, _)| get_rota(id),
    );
    // The new rotation's default turns. Made here, not in the form under the rota's Suspend, so
    // the browser finds the server's answer when it takes the page over.
    let members = load(id, list_members);

    view! {
        <TeamSubpageHeading team team_id=Signal::derive(id) title="Rota" />
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                match rota.await {
                    Ok(r) => {
                        let team_id = id();
                        let may_manage = r.may_manage;
                        let is_owner = Signal::derive(move || may_manage);
                        view! {
                            <Today team_id rota=r.clone() actions />
                            <OpenDates team_id rota=r.clone() actions />
                            <MyDates team_id rota=r.clone() actions />
                            <Rotations team_id rota=r.clone() actions is_owner members />
                            <Handoff team_id rota=r.clone() actions is_owner />
                            <Changes rota=r />
                        }
                        .into_any()
                    }
                    Err(e) => view! { <Failed error=e retry=move |_| rota.refetch() /> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn Today(team_id: i64, rota: Rota, actions: Actions) -> impl IntoView {
    let holding = rota.holder.as_ref().is_some_and(|h| h.user_id == rota.me);
    let who = match &rota.holder {
        Some(_) if holding => "You are on call today.".to_string(),
        Some(h) => format!("{} is on call today.", h.username),
        None => "Nobody is on call today.".to_string(),
    };
    view! {
        <section class="card" aria-labelledby="today-title">
            <h2 id="today-title">"Today"</h2>
            <p class="today-holder">{who}</p>
            // Asks once: the first tap says what taking over does, the second does it.
            {(!holding).then(|| view! {
                <Fold key="take-over" class="confirm" open=move || failed(actions.take_over)>
                    <summary>"Take over now"</summary>
                    <ActionForm action=actions.take_over attr:class="stack">
                        <input type="hidden" name="team_id" value=team_id />
                        <p class="hint">"You become today's on-call now. Open incidents nobody has acknowledged come to you, and so do their reminders."</p>
                        <button type="submit" class="primary wide" disabled=move || actions.take_over.pending().get()>"Yes, take over now"</button>
                    </ActionForm>
                </Fold>
            })}
            <ActionError action=actions.take_over />
            <ActionDone action=actions.take_over text="You are on call now." />
        </section>
    }
}

#[component]
fn OpenDates(team_id: i64, rota: Rota, actions: Actions) -> impl IntoView {
    let others: Vec<_> = rota
        .open
        .iter()
        .filter(|o| o.user_id != rota.me)
        .cloned()
        .collect();
    view! {
        <section class="card" aria-labelledby="open-title">
            <h2 id="open-title">"Up for grabs"</h2>
            {if others.is_empty() {
                view! { <p class="empty">"No dates are offered."</p> }.into_any()
            } else {
                view! {
                    <ul class="list open-dates">
                        {others
                            .into_iter()
                            .map(|o| {
                                let why = match o.reason {
                                    OpenReason::Offered => format!("offered by {}", o.username),
                                    OpenReason::Vacated => format!("{} left the team", o.username),
                                };
                                let label = format!("Take {}", short_day(&o.date));
                                view! {
                                    <li class="row">
                                        <span class="row-main">
                                            <strong>{short_day(&o.date)}</strong>
                                            <span class="meta">{why}</span>
                                        </span>
                                        <ActionForm action=actions.take>
                                            <input type="hidden" name="team_id" value=team_id />
                                            <input type="hidden" name="date" value=o.date.clone() />
                                            <button type="submit" class="secondary" aria-label=label>"Take"</button>
                                        </ActionForm>
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                }
                .into_any()
            }}
            <ActionError action=actions.take />
            <ActionDone action=actions.take text="Taken: that date is yours." />
        </section>
    }
}

#[component]
fn MyDates(team_id: i64, rota: Rota, actions: Actions) -> impl IntoView {
    view! {
        <section class="card" aria-labelledby="mine-title">
            <h2 id="mine-title">"Your dates"</h2>
            {if rota.mine.is_empty() {
                view! { <p class="empty">"You are not on call in the coming weeks."</p> }.into_any()
            } else {
                view! {
                    <p class="hint">"Offer a date you cannot do: anyone in the team may take it. It stays yours until someone does."</p>
                    <ul class="list my-dates">
                        {rota
                            .mine
                            .into_iter()
                            .map(|d| {
                                let (button, label) = if d.offered {
                                    ("Withdraw", format!("Withdraw the offer of {}", short_day(&d.date)))
                                } else {
                                    ("Offer", format!("Offer {}", short_day(&d.date)))
                                };
                                view! {
                                    <li class="row">
                                        <span class="row-main"><strong>{short_day(&d.date)}</strong></span>
                                        {d.offered.then(|| view! { <span class="chip">"offered"</span> })}
                                        <ActionForm action=actions.offer>
                                            <input type="hidden" name="team_id" value=team_id />
                                            <input type="hidden" name="date" value=d.date.clone() />
                                            <input type="hidden" name="offered" value=(!d.offered).to_string() />
                                            <button type="submit" class="secondary" aria-label=label>{button}</button>
                                        </ActionForm>
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                }
                .into_any()
            }}
            <ActionError action=actions.offer />
        </section>
    }
}

#[component]
fn Rotations(
    team_id: i64,
    rota: Rota,
    actions: Actions,
    is_owner: Signal<bool>,
    members: Loaded<Vec<Member>>,
) -> impl IntoView {
    let today = rota.today.clone();
    let until = days_from(&today, FILL_DAYS)
        .pop()
        .unwrap_or_else(|| today.clone());
    view! {
        <section class="card" aria-labelledby="rotations-title">
            <h2 id="rotations-title">"Rotations"</h2>
            <p class="hint">"A rotation takes turns through its members. Filling dates with it writes ordinary shifts; dates given by hand are kept."</p>
            {if rota.rotations.is_empty() {
                view! { <p class="empty">"No rotations."</p> }.into_any()
            } else {
                view! {
                    <ul class="list rotations">
                        {rota
                            .rotations
                            .into_iter()
                            .map(|r| view! { <RotationRow team_id rotation=r actions is_owner from=today.clone() to=until.clone() /> })
                            .collect_view()}
                    </ul>
                }
                .into_any()
            }}
            <FillResult team_id actions />
            <ActionError action=actions.remove />
            <Fold key="new-rotation" class="inner" hidden=move || !is_owner.get() open=move || failed(actions.create)>
                <summary>"New rotation"</summary>
                <NewRotationForm team_id today=rota.today.clone() actions members />
            </Fold>
        </section>
    }
}

#[component]
fn RotationRow(
    team_id: i64,
    rotation: NamedRotation,
    actions: Actions,
    is_owner: Signal<bool>,
    from: String,
    to: String,
) -> impl IntoView {
    let r = rotation.rotation;
    let days = if r.shift_days == 1 {
        "1 day".to_string()
    } else {
        format!("{} days", r.shift_days)
    };
    let turns = rotation.names.join(" → ");
    let (from_id, to_id) = (
        format!("rotation-{}-from", r.id),
        format!("rotation-{}-to", r.id),
    );
    view! {
        <li class="rotation">
            <span class="row-main">
                <strong>{r.name.clone()}</strong>
                <span class="meta">{turns}</span>
                <span class="meta">{format!("{days} each, from {}", short_day(&r.start_date))}</span>
            </span>
            <details class="row-tools" hidden=move || !is_owner.get()>
                <summary>{format!("Fill dates with {}", r.name)}</summary>
                <ActionForm action=actions.fill attr:class="stack">
                    <input type="hidden" name="team_id" value=team_id />
                    <input type="hidden" name="id" value=r.id />
                    <input type="hidden" name="preview" value="true" />
                    <label for=from_id.clone()>"From"</label>
                    <input id=from_id name="from" type="date" required value=from />
                    <label for=to_id.clone()>"Through"</label>
                    <input id=to_id name="to" type="date" required value=to />
                    <button type="submit" class="secondary" disabled=move || actions.fill.pending().get()>"Preview"</button>
                </ActionForm>
                <Confirm key=format!("remove-rota-{}", r.id) summary="Remove…">
                    <ActionForm action=actions.remove attr:class="stack">
                        <input type="hidden" name="team_id" value=team_id />
                        <input type="hidden" name="id" value=r.id />
                        <p class="hint">"The dates it filled stay, as if given by hand."</p>
                        <button type="submit" class="danger wide">{format!("Yes, remove {}", r.name)}</button>
                    </ActionForm>
                </Confirm>
            </details>
        </li>
    }
}

/// The last fill: a preview with its confirmation, or what was stored.
#[component]
fn FillResult(team_id: i64, actions: Actions) -> impl IntoView {
    let result = move || actions.fill.value().get().and_then(Result::ok);
    view! {
        <ActionError action=actions.fill />
        <div class="fill-result" role="status">
            {move || result().map(|f| fill_view(team_id, f, actions))}
        </div>
    }
}

fn fill_view(team_id: i64, f: Filling, actions: Actions) -> AnyView {
    let count = f.dates.len();
    let plural = if count == 1 { "" } else { "s" };
    let kept = (!f.skipped.is_empty()).then(|| {
        let days: Vec<String> = f.skipped.iter().map(|d| short_day(d)).collect();
        view! { <p class="meta">{format!("Kept as they are: {}.", days.join(", "))}</p> }
    });
    if !f.preview {
        return view! {
            <p class="done">{format!("Filled {count} date{plural}.")}</p>
            {kept}
        }
        .into_any();
    }
    view! {
        <h3>{format!("Preview: {count} date{plural}")}</h3>
        <ul class="list preview">
            {f.dates
                .iter()
                .map(|(d, who)| view! { <li class="row"><span class="row-main">{short_day(d)}</span><span>{who.clone()}</span></li> })
                .collect_view()}
        </ul>
        {kept}
        {(count > 0).then(|| view! {
            <ActionForm action=actions.fill attr:class="stack">
                <input type="hidden" name="team_id" value=team_id />
                <input type="hidden" name="id" value=f.rotation_id />
                <input type="hidden" name="from" value=f.from.clone() />
                <input type="hidden" name="to" value=f.to.clone() />
                <input type="hidden" name="preview" value="false" />
                <button type="submit" class="primary wide">{format!("Apply {count} date{plural}")}</button>
            </ActionForm>
        })}
    }
    .into_any()
}

#[component]
fn NewRotationForm(
    team_id: i64,
    today: String,
    actions: Actions,
    members: Loaded<Vec<Member>>,
) -> impl IntoView {
    view! {
        <ActionForm action=actions.create attr:class="stack">
            <input type="hidden" name="team_id" value=team_id />
            <label for="rotation-name">"Name"</label>
            <input id="rotation-name" name="name" type="text" required maxlength="100" value="Weekly" />
            <label for="rotation-members">"Turns, in order"</label>
            <Suspense fallback=move || view! {
                <input id="rotation-members" name="members" type="text" required
                    on:input=move |e| actions.turns.set(Some(event_target_value(&e))) />
            }>
                {move || Suspend::new(async move {
                    let names: Vec<String> = members.await.unwrap_or_default().into_iter().map(|m| m.username).collect();
                    let value = actions.turns.get_untracked().unwrap_or_else(|| names.join(", "));
                    view! {
                        <input id="rotation-members" name="members" type="text" required value=value
                            on:input=move |e| actions.turns.set(Some(event_target_value(&e)))
                            autocapitalize="off" autocomplete="off" spellcheck="false" aria-describedby="rotation-members-hint" />
                    }
                })}
            </Suspense>
            <p class="hint" id="rotation-members-hint">"Usernames separated by commas; a name may come more than once."</p>
            <label for="rotation-days">"Days per turn"</label>
            <input id="rotation-days" name="shift_days" type="number" required min="1" max="365" value="7" inputmode="numeric" />
            <label for="rotation-start">"First turn starts"</label>
            <input id="rotation-start" name="start_date" type="date" required value=today />
            <ActionError action=actions.create />
            <ActionDone action=actions.create text="Made. Fill dates with it to put it on the schedule." />
            <button type="submit" class="primary" disabled=move || actions.create.pending().get()>"Make rotation"</button>
        </ActionForm>
    }
}

/// Hand-off notices: whether they are on and when; owners change them.
#[component]
fn Handoff(team_id: i64, rota: Rota, actions: Actions, is_owner: Signal<bool>) -> impl IntoView {
    let h = rota.handoff;
    let at = h.at.as_ref().map(|a| a.to_string()).unwrap_or_default();
    let zone = h.time_zone.clone().unwrap_or_default();
    let state = if h.enabled {
        format!("On: at each hand-off ({at} {zone} time) the incoming person gets a push, and the outgoing one is told who has it. Covers tell both their people.")
    } else {
        "Off.".to_string()
    };
    view! {
        <section class="card" aria-labelledby="handoff-title">
            <h2 id="handoff-title">"Hand-off notices"</h2>
            <p>{state}</p>
            <Fold key="handoff" class="inner" hidden=move || !is_owner.get() open=move || failed(actions.handoff)>
                <summary>"Change"</summary>
                <ActionForm action=actions.handoff attr:class="stack">
                    <input type="hidden" name="team_id" value=team_id />
                    <label class="check">
                        <input type="checkbox" name="enabled" value="true" checked=h.enabled />
                        "Send hand-off notices"
                    </label>
                    <p class="hint">"At the team's hand-off time, only when the person changes: someone on call all week hears when the week starts and when it ends."</p>
                    <ActionError action=actions.handoff />
                    <button type="submit" class="primary" disabled=move || actions.handoff.pending().get()>"Save"</button>
                </ActionForm>
            </Fold>
            <ActionDone action=actions.handoff text="Saved." />
        </section>
    }
}

#[component]
fn Changes(rota: Rota) -> impl IntoView {
    view! {
        <section class="card" aria-labelledby="changes-title">
            <h2 id="changes-title">"Recent changes"</h2>
            {if rota.changes.is_empty() {
                view! { <p class="empty">"Nothing has changed hands yet."</p> }.into_any()
            } else {
                view! {
                    <ul class="list changes">
                        {rota
                            .changes
                            .into_iter()
                            .map(|c| view! {
                                <li class="row">
                                    <span class="row-main">
                                        {c.text}
                                        <span class="meta">{c.actor.map(|a| format!("by {a} · ")).unwrap_or_default()}{when(c.at)}</span>
                                    </span>
                                </li>
                            })
                            .collect_view()}
                    </ul>
                }
                .into_any()
            }}
        </section>
    }
}
