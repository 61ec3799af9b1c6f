//! The schedule as a month calendar (its date arithmetic is `klaxon_domain::calendar`).

use klaxon_domain::calendar::{month_title, short_day, weeks};
use klaxon_domain::schedule::ScheduleEntry;
use leptos::prelude::*;
use std::collections::BTreeMap;

/// One of six tints that tell people apart; the name is always written too.
pub fn person_class(user_id: i64) -> String {
    format!("person person-{}", user_id.rem_euclid(6))
}

/// A month of shifts: each day with its holder and any cover on it, and who has how many days.
#[component]
pub fn MonthCalendar(
    month: String,
    today: String,
    shifts: Vec<ScheduleEntry>,
    /// Dates with a partial-day cover, and what to write on them.
    #[prop(optional)]
    marks: Vec<(String, String)>,
    /// Each day is a link to give it to someone (`?month=…&fill=DATE#give-days`), on the team
    /// page whose form takes it.
    #[prop(optional)]
    fill: bool,
) -> impl IntoView {
    let by_date: BTreeMap<String, ScheduleEntry> =
        shifts.iter().map(|s| (s.date.clone(), s.clone())).collect();
    let mut people: BTreeMap<(String, i64), usize> = BTreeMap::new();
    for s in &shifts {
        *people.entry((s.username.clone(), s.user_id)).or_default() += 1;
    }
    let title = month_title(&month);
    let rows = weeks(&month)
        .into_iter()
        .map(|week| {
            let cells = week
                .into_iter()
                .map(|day| match day {
                    None => view! { <td class="pad"></td> }.into_any(),
                    Some(date) => {
                        let n = date.get(8..10).unwrap_or_default().trim_start_matches('0').to_string();
                        let holder = by_date.get(&date).cloned();
                        let class = match (&holder, date == today) {
                            (Some(h), true) => format!("{} today", person_class(h.user_id)),
                            (Some(h), false) => person_class(h.user_id),
                            (None, true) => "today".to_string(),
                            (None, false) => String::new(),
                        };
                        let mark: Vec<String> = marks
                            .iter()
                            .filter(|(d, _)| *d == date)
                            .map(|(_, t)| t.clone())
                            .collect();
                        let mut label = match &holder {
                            Some(h) => format!("{}: {}", short_day(&date), h.username),
                            None => format!("{}: nobody", short_day(&date)),
                        };
                        for m in &mark {
                            label.push_str(&format!("; {m}"));
                        }
                        // What a link says beyond what it shows, for screen readers: its name
                        // is its text, so it starts with what it shows ("6 alice"), and a person
                        // who speaks to their phone names the link by what they see.
                        let rest = match &holder {
                            Some(_) => format!(", {}. Give this day", short_day(&date)),
                            None => format!(", {}: nobody. Give this day", short_day(&date)),
                        };
                        let mark = (!mark.is_empty()).then(|| mark.join(", "));
                        let holder = holder.map(|h| h.username);
                        match fill {
                            true => view! {
                                <td class=class>
                                    <a class="day-link" href=format!("?month={month}&fill={date}#give-days")>
                                        <span class="day">{n}</span>" "
                                        <span class="holder">{holder}</span>
                                        {mark.map(|m| view! { " "<span class="cover-mark">{m}</span> })}
                                        <span class="sr-only">{rest}</span>
                                    </a>
                                </td>
                            }
                            .into_any(),
                            false => view! {
                                <td class=class aria-label=label>
                                    <span class="day" aria-hidden="true">{n}</span>
                                    <span class="holder" aria-hidden="true">{holder}</span>
                                    {mark.map(|m| view! { <span class="cover-mark" aria-hidden="true">{m}</span> })}
                                </td>
                            }
                            .into_any(),
                        }
                    }
                })
                .collect_view();
            view! { <tr>{cells}</tr> }
        })
        .collect_view();
    view! {
        <table class="calendar">
            <caption class="sr-only">{format!("On call in {title}")}</caption>
            <thead>
                <tr>
                    {["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
                        .into_iter()
                        .map(|d| view! { <th scope="col" abbr=d>{d.chars().next().unwrap_or(' ').to_string()}</th> })
                        .collect_view()}
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
        {if people.is_empty() {
            view! { <p class="empty">"Nobody is on call this month."</p> }.into_any()
        } else {
            view! {
                <ul class="legend" aria-label="Days per person">
                    {people
                        .into_iter()
                        .map(|((name, id), days)| view! {
                            <li class=person_class(id)>
                                <span class="swatch" aria-hidden="true"></span>
                                {format!("{name}: {days} {}", if days == 1 { "day" } else { "days" })}
                            </li>
                        })
                        .collect_view()}
                </ul>
            }
            .into_any()
        }}
    }
    .into_any()
}
