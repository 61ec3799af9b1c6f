//! The on-call health picture, drawn as inline SVG like the other charts: per person, their
//! share of the on-call hours and their share of the pages as two bars, so a person taking more
//! than their hours would bring stands out. The SVG is named by a sentence saying the same.

use klaxon_domain::health::PersonHealth;
use leptos::prelude::*;

fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// "alice took 50% of the pages in 49% of the hours; bob 25% in 47%."
pub fn share_summary(people: &[PersonHealth]) -> String {
    let parts: Vec<String> = people
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (pages, hours) = (percent(p.page_share), percent(p.hours_share));
            match i {
                0 => format!(
                    "{} took {pages} of the pages in {hours} of the hours on call",
                    p.username
                ),
                _ => format!("{} {pages} in {hours}", p.username),
            }
        })
        .collect();
    format!("{}.", parts.join("; "))
}

/// Two bars a person: hours held (the paler) over pages received, each row named.
#[component]
pub fn ShareBars(people: Vec<PersonHealth>) -> impl IntoView {
    const W: f64 = 300.0;
    const H: f64 = 18.0;
    let summary = share_summary(&people);
    let rows = people
        .iter()
        .map(|p| {
            let hours = (p.hours_share * W).max(1.0);
            let pages = (p.page_share * W).max(1.0);
            let words = format!("{} of hours, {} of pages", percent(p.hours_share), percent(p.page_share));
            let label = format!("{}: {words}", p.username);
            view! {
                <li>
                    <p class="row-main"><span class="name">{p.username.clone()}</span><span class="meta">{words}</span></p>
                    <svg viewBox=format!("0 0 {W} {H}") height="18" role="img" aria-label=label preserveAspectRatio="none">
                        <rect class="hours" x="0" y="1" width=format!("{hours:.1}") height="7" rx="2" />
                        <rect class="pages" x="0" y="10" width=format!("{pages:.1}") height="7" rx="2" />
                    </svg>
                </li>
            }
        })
        .collect_view();
    view! {
        <figure class="chart shares">
            <figcaption>
                <strong>"Share of hours and of pages"</strong>
                <span class="meta legend" aria-hidden="true"><span class="key hours"></span>"hours "<span class="key pages"></span>"pages"</span>
            </figcaption>
            <p class="sr-only">{summary}</p>
            <ol class="share-rows">{rows}</ol>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_each_share_in_words() {
        let p = |name: &str, page_share, hours_share| PersonHealth {
            username: name.into(),
            page_share,
            hours_share,
            ..PersonHealth::default()
        };
        assert_eq!(
            share_summary(&[p("alice", 0.5, 0.489), p("bob", 0.25, 0.468)]),
            "alice took 50% of the pages in 49% of the hours on call; bob 25% in 47%."
        );
    }
}
