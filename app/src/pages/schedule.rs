//! Who is on call: today's holder of each team, and the next two weeks of each of my teams.

use crate::api::load;
use crate::api::schedule::get_schedule_overview;
use crate::components::calendar::person_class;
use crate::components::coverage::CoverageWarnings;
use crate::components::live::use_page_live;
use crate::components::loaded::{Failed, Loading};
use klaxon_domain::calendar::short_day;
use klaxon_domain::live::EventKind;
use klaxon_domain::schedule::{ScheduleOverview, TeamDays};
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn SchedulePage() -> impl IntoView {
    let updates = use_page_live(|kind, _| kind == EventKind::Schedule);
    let overview = load(move || updates.changes(), |_| get_schedule_overview());
    view! {
        <Title text="Schedule" />
        <h1>"Schedule"</h1>
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                match overview.await {
                    Ok(o) => view! { <Overview overview=o /> }.into_any(),
                    Err(e) => view! { <Failed error=e retry=move |_| overview.refetch() /> }.into_any(),
                }
            })}
        </Suspense>
    }
    .into_any()
}

#[component]
fn Overview(overview: ScheduleOverview) -> impl IntoView {
    let ScheduleOverview {
        me,
        days,
        holders,
        teams,
        gaps,
    } = overview;
    if teams.is_empty() {
        return view! { <p class="empty">"You are not in any team yet."</p> }.into_any();
    }
    let today = view! {
        <section aria-labelledby="today-title">
            <h2 id="today-title">"On call today"</h2>
            <ul class="list">
                {teams
                    .iter()
                    .map(|t| {
                        let holder = holders.iter().find(|h| h.team_id == t.team_id);
                        let who = match holder {
                            Some(h) if h.user_id == me => format!("{} (you)", h.username),
                            Some(h) => h.username.clone(),
                            None => "Nobody".to_string(),
                        };
                        view! {
                            <li>
                                <a class="row" href=format!("/teams/{}", t.team_id)>
                                    <span class="row-main">{t.display_name.clone()}</span>
                                    <strong class=if holder.is_some() { "holder-name" } else { "holder-name nobody" }>{who}</strong>
                                </a>
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </section>
    };
    view! {
        <CoverageWarnings gaps />
        {today}
        <h2>"Next 14 days"</h2>
        {teams
            .into_iter()
            .map(|t| view! { <Upcoming team=t days=days.clone() me /> })
            .collect_view()}
    }
    .into_any()
}

#[component]
fn Upcoming(team: TeamDays, days: Vec<String>, me: i64) -> impl IntoView {
    let title_id = format!("upcoming-{}", team.team_id);
    let labelled_by = title_id.clone();
    view! {
        <section class="card" aria-labelledby=labelled_by>
            <h3 id=title_id><a class="heading-link" href=format!("/teams/{}", team.team_id)>{team.display_name.clone()}</a></h3>
            <ol class="upcoming">
                {days
                    .into_iter()
                    .map(|d| {
                        let shift = team.shifts.iter().find(|s| s.date == d);
                        let (class, who) = match shift {
                            Some(s) if s.user_id == me => (format!("{} mine", person_class(s.user_id)), format!("{} (you)", s.username)),
                            Some(s) => (person_class(s.user_id), s.username.clone()),
                            None => ("nobody".to_string(), "Nobody".to_string()),
                        };
                        view! {
                            <li class=class>
                                <span class="when">{short_day(&d)}</span>
                                <span class="upcoming-who">{who}</span>
                            </li>
                        }
                    })
                    .collect_view()}
            </ol>
        </section>
    }
    .into_any()
}
