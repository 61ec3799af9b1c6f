//! A team's on-call schedule: the month calendar in the team's time, giving a member days,
//! removing a shift, covering part of a day, and the team's zone and hand-off time.

use crate::api::schedule::{
    get_calendar_feed, get_month_schedule, ChangeOncallDay, CoverRow, EndCover, GiveShifts,
    MakeCalendarFeed, MakeCover, RemoveShift, StopCalendarFeed,
};
use crate::api::{load, Loaded};
use crate::components::calendar::MonthCalendar;
use crate::components::form::{clear_on_success, failed, ActionDone, ActionError, Confirm, Fold};
use crate::components::hydration::use_hydrated;
use crate::components::loaded::{Failed, Loading};
use crate::components::secret::ShownOnce;
use crate::components::text::when;
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
    // Long by design: one view, whose parts share the page's signals and actions.
    let query = use_query_map();
    let month = move || query.with(|q| q.get("month").unwrap_or_default());
    // A day tapped on the calendar, or a gap's "Fill it": the give form opens with that date.
    let fill = move || {
        query.with(|q| {
            q.get("fill")
                .filter(|d| klaxon_domain::calendar::Day::parse(d).is_ok())
        })
    };
    let give = ServerAction::<GiveShifts>::new();
    let remove = ServerAction::<RemoveShift>::new();
    let cover = ServerAction::<MakeCover>::new();
    let end_cover = ServerAction::<EndCover>::new();
    let preview = ServerAction::<ChangeOncallDay>::new();
    let save_day = ServerAction::<ChangeOncallDay>::new();
    let (given, covered) = (clear_on_success(give), clear_on_success(cover));
    let team_changes = crate::components::live::use_team_changes();
    let schedule = load(
        move || {
            (
                team_id.get(),
                month(),
                give.version().get()
                    + remove.version().get()
                    + cover.version().get()
                    + end_cover.version().get()
                    + save_day.version().get()
                    + team_changes(),
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
                                <p class="hint" id="oncall-day-summary">{s.day.summary.clone()}</p>
                                {in_your_time(&s.day.time_zone, s.day.today_starts_at).map(|t| view! {
                                    <p class="hint" id="oncall-day-yours">{format!("The day in progress began at {t}.")}</p>
                                })}
                                <MonthCalendar month=s.month.clone() today=s.today.clone() shifts=s.shifts marks=s.marks fill=true />
                                <Covers covers=s.covers team=team zone=s.day.time_zone.clone() end=end_cover />
                                {(!dates.is_empty()).then(|| view! {
                                    <Fold key="remove-shift" class="inner" open=move || failed(remove)>
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
                                    </Fold>
                                })}
                            }
                            .into_any()
                        }
                        Err(e) => view! { <Failed error=e retry=move |_| schedule.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=remove />
            <Fold key="give-days" class="inner" id="give-days" open=move || failed(give) || fill().is_some()>
                <summary>"Give someone days"</summary>
                <ActionForm action=give node_ref=given attr:class="stack">
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
                    <input id="shift-first" name="first" type="date" required value=move || fill().unwrap_or_default() />
                    <label for="shift-last">"Last day"</label>
                    <input id="shift-last" name="last" type="date" aria-describedby="shift-last-hint" />
                    <p id="shift-last-hint" class="hint">"Optional: every day from the first through this one. Each date's day runs from the team's hand-off time."</p>
                    <ActionError action=give />
                    <button type="submit" class="primary" disabled=move || give.pending().get()>"Give days"</button>
                </ActionForm>
            </Fold>
            <ActionDone action=give text="Given." />
            <Fold key="cover" class="inner" open=move || failed(cover)>
                <summary>"Cover part of a day"</summary>
                <ActionForm action=cover node_ref=covered attr:class="stack">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <label for="cover-member">"Who has the pager"</label>
                    <Transition fallback=|| view! { <select id="cover-member" name="user_id" disabled></select> }>
                        {move || Suspend::new(async move {
                            let list = members.await.unwrap_or_default();
                            let me = me.get_untracked();
                            // A member covers only themselves; an owner may name anyone.
                            let owner = is_owner.get_untracked();
                            view! {
                                <select id="cover-member" name="user_id">
                                    {list
                                        .into_iter()
                                        .filter(|m| owner || Some(m.user_id) == me)
                                        .map(|m| view! { <option value=m.user_id selected=Some(m.user_id) == me>{m.username}</option> })
                                        .collect_view()}
                                </select>
                            }
                        })}
                    </Transition>
                    <label for="cover-for">"For"</label>
                    <Transition fallback=|| view! { <select id="cover-for" name="covered_user_id" disabled></select> }>
                        {move || Suspend::new(async move {
                            let list = members.await.unwrap_or_default();
                            view! {
                                <select id="cover-for" name="covered_user_id">
                                    <option value="" selected=true>"Whoever is on call then"</option>
                                    {list
                                        .into_iter()
                                        .map(|m| view! { <option value=m.user_id>{m.username}</option> })
                                        .collect_view()}
                                </select>
                            }
                        })}
                    </Transition>
                    <label for="cover-from">"From"</label>
                    <input id="cover-from" name="from" type="datetime-local" required aria-describedby="cover-hint" />
                    <label for="cover-to">"Until"</label>
                    <input id="cover-to" name="to" type="datetime-local" required aria-describedby="cover-hint" />
                    <p id="cover-hint" class="hint">"In the team's time zone; at most 14 days. The day's holder has the pager again when it ends."</p>
                    <ActionError action=cover />
                    <button type="submit" class="primary" disabled=move || cover.pending().get()>"Cover"</button>
                </ActionForm>
            </Fold>
            <ActionDone action=cover text="Covered." />
            <CalendarLink team_id=team_id />
            <DaySettings team_id=team_id is_owner=is_owner preview=preview save=save_day />
        </section>
    }
    .into_any()
}

/// The covers in force or to come, each with its End button for its people and owners.
#[component]
fn Covers(
    covers: Vec<CoverRow>,
    team: i64,
    /// The team's zone: when the viewer's differs, each cover says its times in theirs too.
    zone: String,
    end: ServerAction<EndCover>,
) -> impl IntoView {
    (!covers.is_empty()).then(|| {
        view! {
            <h3>"Covers"</h3>
            <ul class="list" aria-label="Covers">
                {covers
                    .into_iter()
                    .map(|c| {
                        let (label, confirm) = match c.started {
                            true => ("End now", "Yes, end the cover now"),
                            false => ("Remove", "Yes, remove the cover"),
                        };
                        let yours = in_your_time(&zone, c.starts_at)
                            .zip(in_your_time(&zone, c.ends_at))
                            .map(|(from, to)| format!(" Your time: {from} to {to}."));
                        view! {
                            <li class="row">
                                <span class="row-main">{c.text}{yours}</span>
                                // Asks once: the first tap opens the question, the second acts.
                                {c.may_end.then(|| view! {
                                    <Confirm key=format!("end-cover-{}", c.id) summary=label>
                                        <ActionForm action=end>
                                            <input type="hidden" name="team_id" value=team />
                                            <input type="hidden" name="cover_id" value=c.id />
                                            <button type="submit" class="danger">{confirm}</button>
                                        </ActionForm>
                                    </Confirm>
                                })}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
            <ActionError action=end />
        }
    })
}

/// The team's zone and hand-off time (owners): a preview says what would change and from
/// when, and only its Save button stores it.
#[component]
fn DaySettings(
    team_id: Signal<i64>,
    is_owner: Signal<bool>,
    preview: ServerAction<ChangeOncallDay>,
    save: ServerAction<ChangeOncallDay>,
) -> impl IntoView {
    let previewed = move || preview.value().get().and_then(Result::ok);
    view! {
        // Open while a preview waits to be saved, or a refusal is shown.
        <Fold key="oncall-day" class="inner" hidden=move || !is_owner.get() open=move || failed(preview) || failed(save) || previewed().is_some()>
            <summary>"Time zone and hand-off"</summary>
            <ActionForm action=preview attr:class="stack">
                <input type="hidden" name="team_id" value=move || team_id.get() />
                <label for="day-zone">"Time zone"</label>
                <input id="day-zone" name="time_zone" type="text" required placeholder="Europe/Berlin"
                    autocapitalize="off" autocomplete="off" spellcheck="false" aria-describedby="day-zone-hint" />
                <p id="day-zone-hint" class="hint">"A name from the time zone database, such as America/New_York."</p>
                <label for="day-handoff">"Hand-off time"</label>
                <input id="day-handoff" name="handoff_time" type="time" required value="09:00" />
                <ActionError action=preview />
                <button type="submit" disabled=move || preview.pending().get()>"Preview"</button>
            </ActionForm>
            {move || previewed().map(|d| view! {
                <ActionForm action=save attr:class="stack">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <input type="hidden" name="time_zone" value=d.time_zone.clone() />
                    <input type="hidden" name="handoff_time" value=d.handoff_time.clone() />
                    <input type="hidden" name="save" value="1" />
                    <p id="day-preview" role="status">{d.summary.clone()}" Every date keeps its holder."</p>
                    <ActionError action=save />
                    <button type="submit" class="primary" disabled=move || save.pending().get()>"Save"</button>
                </ActionForm>
            })}
            <ActionDone action=save text="Saved." />
        </Fold>
    }
}

/// An instant in the viewer's zone, when theirs is not the team's (`None` when they match).
fn in_your_time(team_zone: &str, t: klaxon_domain::Timestamp) -> Option<String> {
    let viewer = use_context::<crate::components::text::ViewerZone>().and_then(|z| z.0);
    let viewer = viewer.as_deref().unwrap_or("UTC");
    (viewer != team_zone).then(|| crate::components::text::when_in(t, Some(viewer)))
}

/// "Add to your calendar app": the caller's own link to this team's schedule as an iCalendar
/// feed, which calendar apps subscribe to by URL. Its secret is shown once, with a copy button;
/// making a new link stops the old one.
#[component]
fn CalendarLink(team_id: Signal<i64>) -> impl IntoView {
    let make = ServerAction::<MakeCalendarFeed>::new();
    let stop = ServerAction::<StopCalendarFeed>::new();
    let feed = load(
        move || (team_id.get(), make.version().get(), stop.version().get()),
        |(team, _, _)| get_calendar_feed(team),
    );
    let hydrated = use_hydrated();
    let made = move || make.value().get().and_then(Result::ok);
    view! {
        <details class="inner" id="calendar-link">
            <summary>"Add to your calendar app"</summary>
            <p class="hint">"A link to this team's on-call days for Google Calendar, Apple Calendar or Outlook, which keep it up to date. Anyone with the link can read the schedule: keep it to yourself."</p>
            {move || made().map(|f| view! {
                <ShownOnce id="calendar-url" label="Your calendar link".to_string() value=f.url>
                    <p class="hint">"In your calendar app, add a calendar “from URL” (or “subscribe”) and paste it."</p>
                </ShownOnce>
            })}
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match feed.await {
                        Ok(Some(f)) => view! {
                            <p class="meta calendar-made">{format!("You made a link {}. A new one stops it.", when(f.created_at))}</p>
                            <ActionForm action=stop>
                                <input type="hidden" name="team_id" value=team_id.get_untracked() />
                                <button type="submit" class="danger">"Stop the link"</button>
                            </ActionForm>
                        }
                        .into_any(),
                        Ok(None) => ().into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| feed.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionForm action=make attr:class="stack">
                <input type="hidden" name="team_id" value=move || team_id.get() />
                <p class="hint" hidden=move || hydrated.get()>"Making a link needs the page to finish loading."</p>
                <ActionError action=make />
                // The link is shown only in this page's memory; a plain form post would reload
                // the page and lose it, so making one waits for the page to be interactive.
                <button type="submit" class="primary" disabled=move || !hydrated.get() || make.pending().get()>
                    "Make a calendar link"
                </button>
            </ActionForm>
            <ActionError action=stop />
        </details>
    }
}
