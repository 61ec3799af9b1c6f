//! A team's on-call schedule: the month calendar, giving a member days, removing a shift.

use crate::api::schedule::{get_month_schedule, GiveShifts, RemoveShift};
use crate::api::{load, Loaded};
use crate::components::calendar::MonthCalendar;
use crate::components::form::{failed, ActionDone, ActionError};
use crate::components::loaded::{Failed, Loading};
use klaxon_domain::calendar::{add_months, month_title, short_day};
use klaxon_domain::team::Member;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

#[component]
pub fn TeamSchedule(
    team_id: Signal<i64>,
    members: Loaded<Vec<Member>>,
    me: Signal<Option<i64>>,
    /// Owners give and remove anyone's dates; a member only their own (swaps are on the rota).
    is_owner: Signal<bool>,
) -> impl IntoView {
    let query = use_query_map();
    let month = move || query.with(|q| q.get("month").unwrap_or_default());
    let give = ServerAction::<GiveShifts>::new();
    let remove = ServerAction::<RemoveShift>::new();
    let team_changes = crate::components::live::use_team_changes();
    let schedule = load(
        move || {
            (
                team_id.get(),
                month(),
                give.version().get() + remove.version().get() + team_changes(),
            )
        },
        |(team, month, _)| get_month_schedule(team, month),
    );

    view! {
        <section class="card" aria-labelledby="schedule-title">
            <h2 id="schedule-title">"On call"</h2>
            <ul class="list">
                <li>
                    <a class="row" href=move || format!("/teams/{}/rota", team_id.get())>
                        <span class="row-main">
                            <strong>"Rota"</strong>
                            <span class="meta">"Take over now, swap dates, rotations"</span>
                        </span>
                        <span class="go" aria-hidden="true">"›"</span>
                    </a>
                </li>
            </ul>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match schedule.await {
                        Ok(s) => {
                            let team = team_id.get_untracked();
                            let (prev, next) = (add_months(&s.month, -1), add_months(&s.month, 1));
                            let title = month_title(&s.month);
                            let (owner, me) = (is_owner.get_untracked(), me.get_untracked());
                            let dates: Vec<(String, String)> = s
                                .shifts
                                .iter()
                                .filter(|e| owner || Some(e.user_id) == me)
                                .map(|e| (e.date.clone(), format!("{}: {}", short_day(&e.date), e.username)))
                                .collect();
                            view! {
                                <div class="month-nav">
                                    <a class="month-step" href=format!("/teams/{team}?month={prev}") aria-label=format!("Previous month, {}", month_title(&prev))>"‹"</a>
                                    <h3>{title}</h3>
                                    <a class="month-step" href=format!("/teams/{team}?month={next}") aria-label=format!("Next month, {}", month_title(&next))>"›"</a>
                                </div>
                                <MonthCalendar month=s.month.clone() today=s.today.clone() shifts=s.shifts />
                                {(!dates.is_empty()).then(|| view! {
                                    <details class="inner" open=move || failed(remove)>
                                        <summary>"Remove a shift"</summary>
                                        <ActionForm action=remove attr:class="stack">
                                            <input type="hidden" name="team_id" value=team />
                                            <label for="remove-date">"Shift"</label>
                                            <select id="remove-date" name="date">
                                                {dates
                                                    .into_iter()
                                                    .map(|(d, label)| view! { <option value=d>{label}</option> })
                                                    .collect_view()}
                                            </select>
                                            <button type="submit" class="danger wide">"Remove shift"</button>
                                        </ActionForm>
                                    </details>
                                })}
                            }
                            .into_any()
                        }
                        Err(e) => view! { <Failed error=e retry=move |_| schedule.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=remove />
            <details class="inner" open=move || failed(give)>
                <summary>"Give someone days"</summary>
                <ActionForm action=give attr:class="stack">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <label for="shift-member">"Member"</label>
                    <Transition fallback=|| view! { <select id="shift-member" name="user_id" disabled></select> }>
                        {move || Suspend::new(async move {
                            let list = members.await.unwrap_or_default();
                            let me = me.get_untracked();
                            let owner = is_owner.get_untracked();
                            view! {
                                <select id="shift-member" name="user_id">
                                    {list
                                        .into_iter()
                                        .filter(|m| owner || Some(m.user_id) == me)
                                        .map(|m| view! { <option value=m.user_id selected=Some(m.user_id) == me>{m.username}</option> })
                                        .collect_view()}
                                </select>
                            }
                        })}
                    </Transition>
                    <label for="shift-first">"First day"</label>
                    <input id="shift-first" name="first" type="date" required />
                    <label for="shift-last">"Last day"</label>
                    <input id="shift-last" name="last" type="date" aria-describedby="shift-last-hint" />
                    <p id="shift-last-hint" class="hint">"Optional: every day from the first through this one. Dates are UTC."</p>
                    <ActionError action=give />
                    <ActionDone action=give text="Given." />
                    <button type="submit" class="primary" disabled=move || give.pending().get()>"Give days"</button>
                </ActionForm>
            </details>
        </section>
    }
    .into_any()
}
